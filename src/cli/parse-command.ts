import { parseArgs, type ParseArgsConfig } from 'node:util';

type Options = NonNullable<ParseArgsConfig['options']>;
const helpOption = { help: { type: 'boolean', short: 'h' } } as const;

/**
 * Parses a command's arguments and answers `--help` and usage errors the same way for every command:
 * returns the parsed arguments, or the exit code already answered (0 after `--help`, 2 after a usage error,
 * with the reason and the usage on stderr).
 */
export function parseCommand<const O extends Options>(command: string, argv: string[], options: O, usage: string, allowPositionals = true) {
  let parsed;
  try {
    parsed = parseArgs({ args: argv, options: { ...options, ...helpOption }, allowPositionals, strict: true });
  } catch (error) {
    process.stderr.write(`fleet-ledger ${command}: ${error instanceof Error ? error.message : String(error)}\n${usage}`);
    return 2;
  }
  if ((parsed.values as { help?: boolean }).help) {
    process.stdout.write(usage);
    return 0;
  }
  return parsed;
}
