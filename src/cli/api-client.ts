/**
 * What the API-talking commands share: `--url`/`--token` (or FLEET_LEDGER_URL / FLEET_LEDGER_TOKEN), `--json`,
 * requests with the error shape of the API, plain tables for people, and the exit codes:
 * 0 ok, 1 error, 2 usage, 3 authentication or authorization refused.
 */
import type { ParseArgsConfig } from 'node:util';
import { checkFileOptions, FileArgumentError, type FileOption } from './file-argument.js';
import { httpCall, type HttpAnswer } from './http-call.js';
import { parseArguments, UsageError } from './usage-error.js';

export { UsageError } from './usage-error.js';

export const exitCodes = { ok: 0, error: 1, usage: 2, auth: 3 } as const;

export const connectionOptions = {
  url: { type: 'string' },
  token: { type: 'string' },
  json: { type: 'boolean', default: false },
  help: { type: 'boolean', short: 'h', default: false },
} as const satisfies ParseArgsConfig['options'];

export const connectionUsage = `  --url URL      the ledger API (default $FLEET_LEDGER_URL, else http://127.0.0.1:8080)
  --token TOKEN  bearer token (default $FLEET_LEDGER_TOKEN)
  --json         print the API's answer as JSON
exit codes: 0 ok, 1 error, 2 usage (a file named that cannot be used too), 3 authentication or role refused`;

/** An answer of the API that is not a success. */
export class ApiCallError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details: unknown,
  ) {
    super(message);
  }
}

export interface ApiConnection {
  url: string;
  token: string | undefined;
  json: boolean;
}

export function connectionOf(values: { url?: string; token?: string; json?: boolean }, env: NodeJS.ProcessEnv = process.env): ApiConnection {
  return { url: values.url ?? env.FLEET_LEDGER_URL ?? 'http://127.0.0.1:8080', token: values.token ?? env.FLEET_LEDGER_TOKEN, json: values.json ?? false };
}

/**
 * Parses a command's arguments with the connection options; a mistake is a `UsageError` naming it. `files` names the
 * options that name files or folders, each given one checked (a `FileArgumentError` naming option and path).
 */
export function parseCommandArgs<const O extends NonNullable<ParseArgsConfig['options']>>(argv: string[], options: O, files: Partial<Record<keyof O & string, FileOption>> = {}) {
  const parsed = parseArguments(argv, { ...connectionOptions, ...options });
  if (!(parsed.values as { help?: boolean }).help) checkFileOptions(parsed.values as Record<string, unknown>, files as Record<string, FileOption>);
  return parsed;
}

export interface CallOptions {
  method?: 'GET' | 'POST';
  body?: unknown;
  rawBody?: { text: string; contentType: string };
  headers?: Record<string, string>;
  query?: Record<string, string | number | boolean | undefined>;
}

/** One API call; resolves to the JSON answer or throws `ApiCallError` with the API's code. */
export async function callApi<T = any>(connection: ApiConnection, path: string, options: CallOptions = {}): Promise<T> {
  const target = new URL(path.replace(/^\//, ''), connection.url.endsWith('/') ? connection.url : `${connection.url}/`);
  for (const [key, value] of Object.entries(options.query ?? {})) if (value !== undefined) target.searchParams.set(key, String(value));
  const headers: Record<string, string> = { ...(options.headers ?? {}) };
  if (connection.token) headers.authorization = `Bearer ${connection.token}`;
  let body: string | undefined;
  if (options.rawBody) {
    body = options.rawBody.text;
    headers['content-type'] = options.rawBody.contentType;
  } else if (options.body !== undefined) {
    body = JSON.stringify(options.body);
    headers['content-type'] = 'application/json';
  }
  let response: HttpAnswer;
  try {
    response = await httpCall(target, { method: options.method ?? 'GET', headers, body, timeoutMs: 60_000 });
  } catch (error) {
    throw new ApiCallError(0, 'CLI_UNREACHABLE', `cannot reach ${target.origin}: ${error instanceof Error ? error.message : String(error)}`, {});
  }
  const text = response.text;
  let parsed: any;
  try {
    parsed = text.length > 0 ? JSON.parse(text) : null;
  } catch {
    parsed = text;
  }
  if (response.status >= 400) {
    const error = parsed?.error;
    throw new ApiCallError(response.status, error?.code ?? `HTTP_${response.status}`, error?.message ?? String(text).slice(0, 300), error?.details ?? {});
  }
  return parsed as T;
}

/** Every page of a list route, up to `max` items. */
export async function callAllPages<T = any>(connection: ApiConnection, path: string, query: Record<string, string | number | boolean | undefined> = {}, max = 100_000): Promise<T[]> {
  const items: T[] = [];
  let cursor: string | undefined;
  do {
    const page = await callApi<{ items: T[]; nextCursor: string | null }>(connection, path, { query: { ...query, cursor, limit: query.limit ?? 1000 } });
    items.push(...page.items);
    cursor = page.nextCursor ?? undefined;
  } while (cursor && items.length < max);
  return items.slice(0, max);
}

function cell(value: unknown): string {
  if (value === null || value === undefined) return '-';
  if (typeof value === 'object') return JSON.stringify(value);
  return String(value);
}

/** A plain aligned table for people. */
export function table(rows: ReadonlyArray<Record<string, unknown>>, columns: readonly string[]): string {
  if (rows.length === 0) return '(none)\n';
  const cells = rows.map((row) => columns.map((column) => cell(row[column])));
  const widths = columns.map((column, index) => Math.min(60, Math.max(column.length, ...cells.map((r) => r[index]!.length))));
  const line = (values: readonly string[]) => values.map((value, index) => (value.length > widths[index]! ? `${value.slice(0, widths[index]! - 1)}…` : value.padEnd(widths[index]!))).join('  ').trimEnd();
  return `${[line(columns), ...cells.map(line)].join('\n')}\n`;
}

/** Prints an answer: JSON with --json, else the human form. */
export function output(connection: ApiConnection, answer: unknown, human: () => string): void {
  process.stdout.write(connection.json ? `${JSON.stringify(answer, null, 2)}\n` : human());
}

/**
 * Runs a command body and turns what it throws into an exit code: usage 2, 401/403 3, anything else 1. With no
 * arguments it prints the usage (exit 2), unless `bare` is `run`: the command has a default verb.
 * The message goes to stderr (with --json, the API's error object).
 */
export async function runApiCommand(name: string, usage: string, argv: string[], body: (argv: string[]) => Promise<number>, bare: 'usage' | 'run' = 'usage'): Promise<number> {
  // A command whose verb has a default (`nodes` lists) runs it when given nothing; the others print their usage.
  if ((argv.length === 0 && bare === 'usage') || argv[0] === '--help' || argv[0] === '-h' || argv[0] === 'help') {
    process.stdout.write(usage);
    return argv.length === 0 ? exitCodes.usage : exitCodes.ok;
  }
  try {
    return await body(argv);
  } catch (error) {
    if (error instanceof UsageError) {
      process.stderr.write(`${name}: ${error.message}\n${usage}`);
      return exitCodes.usage;
    }
    if (error instanceof FileArgumentError) {
      // The file named is the mistake: said in one line, without the usage.
      process.stderr.write(`${name}: ${error.message}\n`);
      return exitCodes.usage;
    }
    if (error instanceof ApiCallError) {
      process.stderr.write(`${name}: ${error.code}: ${error.message}\n`);
      if (argv.includes('--json')) process.stderr.write(`${JSON.stringify({ error: { code: error.code, message: error.message, details: error.details } })}\n`);
      return error.status === 401 || error.status === 403 ? exitCodes.auth : exitCodes.error;
    }
    process.stderr.write(`${name}: ${error instanceof Error ? error.message : String(error)}\n`);
    return exitCodes.error;
  }
}

/** The first positional, required. */
export function required(positionals: readonly string[], index: number, what: string): string {
  const value = positionals[index];
  if (value === undefined || value === '') throw new UsageError(`missing ${what}`);
  return value;
}

/** A duration as people write it on a command line (`90s`, `30m`, `2h`, `500ms`; a bare number is seconds), in ms. */
export function durationMs(text: string): number {
  const match = /^(\d+(?:\.\d+)?)(ms|s|m|h)?$/.exec(text.trim());
  if (!match) throw new UsageError(`not a duration: ${text} (use 90s, 30m, 2h)`);
  return Math.round(Number(match[1]) * ({ ms: 1, s: 1_000, m: 60_000, h: 3_600_000 }[match[2] ?? 's'] ?? 1_000));
}
