import { readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { commandNames, commands } from '../../src/cli/command-list.js';

const commandsDir = fileURLToPath(new URL('../../src/cli/commands/', import.meta.url));

describe('the command list', () => {
  it('lists every command file under src/cli/commands, and nothing else', () => {
    const files = readdirSync(commandsDir).filter((file) => file.endsWith('.ts')).map((file) => file.slice(0, -3)).sort();
    expect(commandNames).toEqual(files);
  });

  it.each(commandNames)("holds the summary %s exports, and loads a module that runs", async (name) => {
    const command = await commands[name].load();
    expect(commands[name].summary).toBe(command.summary);
    expect(typeof command.run).toBe('function');
  });
});
