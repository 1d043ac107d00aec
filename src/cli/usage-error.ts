/**
 * A usage mistake on the command line, typed: which kind of mistake, the option or argument it is about, and the
 * options the command takes. Every command parses its arguments through `parseArguments`, so an unknown flag, a
 * missing value or a stray argument reads the same everywhere: the flag named, and the command's valid flags listed.
 */
import { parseArgs, type ParseArgsConfig } from 'node:util';

export type UsageErrorCode = 'CLI_UNKNOWN_OPTION' | 'CLI_OPTION_VALUE' | 'CLI_UNEXPECTED_ARGUMENT' | 'CLI_USAGE';

/** A usage mistake: the command prints the message and its usage, and exits 2. */
export class UsageError extends Error {
  constructor(
    message: string,
    readonly code: UsageErrorCode = 'CLI_USAGE',
    /** The option or argument the mistake is about, as it was typed. */
    readonly argument?: string,
  ) {
    super(message);
    this.name = 'UsageError';
  }
}

type Options = NonNullable<ParseArgsConfig['options']>;

/** `--name VALUE` or `--name` for each option, with its short form, sorted: what a command takes. */
export function validFlags(options: Options): string[] {
  return Object.entries(options)
    .map(([name, option]) => `--${name}${option.type === 'string' ? ' VALUE' : ''}${option.short ? ` (-${option.short})` : ''}`)
    .sort();
}

/** Levenshtein distance, for "did you mean" (option names are short). */
function distance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, index) => index);
  for (let i = 1; i <= a.length; i += 1) {
    const current = [i];
    for (let j = 1; j <= b.length; j += 1) current.push(Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1)));
    previous = current;
  }
  return previous[b.length]!;
}

function closest(flag: string, options: Options): string | null {
  const name = flag.replace(/^-+/, '').split('=')[0]!;
  const best = Object.keys(options)
    .map((candidate) => ({ candidate, score: distance(name, candidate) }))
    .sort((a, b) => a.score - b.score)[0];
  return best && best.score <= Math.max(1, Math.floor(name.length / 3)) ? `--${best.candidate}` : null;
}

/** What `parseArgs` threw, said as a usage mistake naming the flag and the command's valid flags. */
export function usageErrorOf(error: unknown, options: Options): UsageError {
  const code = (error as { code?: string } | null)?.code;
  const message = error instanceof Error ? error.message : String(error);
  const quoted = /'([^']+)'/.exec(message)?.[1] ?? '';
  const takes = `valid options: ${validFlags(options).join(', ')}`;
  switch (code) {
    case 'ERR_PARSE_ARGS_UNKNOWN_OPTION': {
      const suggestion = closest(quoted, options);
      return new UsageError(`unknown option ${quoted}${suggestion ? ` (did you mean ${suggestion}?)` : ''}; ${takes}`, 'CLI_UNKNOWN_OPTION', quoted);
    }
    case 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE': {
      const flag = quoted.split(' ')[0]!;
      const option = options[flag.replace(/^-+/, '')];
      const why = option?.type === 'boolean' ? 'takes no value' : /ambiguous/.test(message) ? `needs a value (write ${flag}=VALUE for a value starting with -)` : 'needs a value';
      return new UsageError(`option ${flag} ${why}; ${takes}`, 'CLI_OPTION_VALUE', flag);
    }
    case 'ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL':
      return new UsageError(`unexpected argument '${quoted}': this command takes options only; ${takes}`, 'CLI_UNEXPECTED_ARGUMENT', quoted);
    default:
      return new UsageError(message);
  }
}

/** Parses a command's arguments strictly; a mistake is thrown as a `UsageError` naming it. */
export function parseArguments<const O extends Options>(argv: string[], options: O, allowPositionals = true) {
  try {
    return parseArgs({ args: argv, options, allowPositionals, strict: true });
  } catch (error) {
    throw usageErrorOf(error, options);
  }
}
