import { execFile, spawn } from 'node:child_process';
import { existsSync, rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { commandNames } from '../../src/cli/command-list.js';

/**
 * The command line as users run it: compiled by `scripts/build.js` (what `npm run build` and `npm ci` run), then
 * started by node with no TypeScript loader. Built into a folder of its own inside the repository (so the compiled
 * code finds `node_modules`), never into `dist/`, which a developer may be using.
 */
const root = fileURLToPath(new URL('../../', import.meta.url));
const outDir = `${root}test-artifacts/built-cli-${process.pid}`;
const main = `${outDir}/src/cli/main.js`;

function run(file: string, args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [file, ...args], { timeout: 60_000 }, (error, stdout, stderr) => {
      resolve({ code: error ? Number((error as { code?: number }).code ?? 1) : 0, stdout, stderr });
    });
  });
}

describe('the built command line', { timeout: 120_000 }, () => {
  beforeAll(async () => {
    const build = await run(`${root}scripts/build.js`, [outDir]);
    expect(build.code, build.stdout + build.stderr).toBe(0);
  }, 120_000);
  afterAll(() => rmSync(outDir, { recursive: true, force: true }));

  it('compiles every command, and copies the files the program reads beside its code', () => {
    for (const name of commandNames) expect(existsSync(`${outDir}/src/cli/commands/${name}.js`), name).toBe(true);
    expect(existsSync(`${outDir}/src/api/dashboard/index.html`)).toBe(true);
    expect(existsSync(`${outDir}/examples/scenario-demo.yaml`)).toBe(true);
  });

  it('prints every command in --help', async () => {
    const help = await run(main, ['--help']);
    expect(help.code, help.stderr).toBe(0);
    for (const name of commandNames) expect(help.stdout).toContain(`  ${name.padEnd(12)} `);
  });

  it('runs a command: the simulator starts from compiled code and stops cleanly on SIGTERM', async () => {
    const child = spawn(process.execPath, [main, 'sim', '--bmcs', '2', '--mockup', 'hpe', '--latency-scale', '0', '--stats-every', '0'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const controlUrl = await new Promise<string>((resolve, reject) => {
      child.stdout.on('data', (chunk: Buffer) => {
        output += chunk.toString();
        const match = /control (http:\/\/\S+)/.exec(output);
        if (match?.[1]) resolve(match[1]);
      });
      child.once('exit', () => reject(new Error(`exited early: ${output}`)));
    });
    const fleet = (await (await fetch(`${controlUrl}/sim/fleet`)).json()) as { bmcs: unknown[] };
    expect(fleet.bmcs).toHaveLength(2);
    const exit = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    child.kill('SIGTERM');
    expect(await exit).toBe(0);
  });
});
