import type { ParseArgsConfig } from 'node:util';
import { checkFileOptions, FileArgumentError, type FileOption } from './file-argument.js';
import { parseArguments, UsageError } from './usage-error.js';

type Options = NonNullable<ParseArgsConfig['options']>;
const helpOption = { help: { type: 'boolean', short: 'h' } } as const;

/**
 * Parses a command's arguments and answers `--help` and usage errors the same way for every command:
 * returns the parsed arguments, or the exit code already answered (0 after `--help`, 2 after a usage error,
 * with the reason, naming the flag and the command's valid flags, and the usage on stderr). `files` names the options
 * that name files or folders: each given one is checked here (not found, not readable, a folder where a file is
 * expected...), answered with exit 2 and one line naming the option and the path.
 */
export function parseCommand<const O extends Options>(command: string, argv: string[], options: O, usage: string, allowPositionals = true, files: Partial<Record<keyof O & string, FileOption>> = {}) {
  let parsed;
  try {
    parsed = parseArguments(argv, { ...options, ...helpOption }, allowPositionals);
  } catch (error) {
    process.stderr.write(`fleet-ledger ${command}: ${error instanceof UsageError ? error.message : String(error)}\n${usage}`);
    return 2;
  }
  if ((parsed.values as { help?: boolean }).help) {
    process.stdout.write(usage);
    return 0;
  }
  try {
    checkFileOptions(parsed.values as Record<string, unknown>, files as Record<string, FileOption>);
  } catch (error) {
    if (!(error instanceof FileArgumentError)) throw error;
    process.stderr.write(`fleet-ledger ${command}: ${error.message}\n`);
    return 2;
  }
  return parsed;
}
