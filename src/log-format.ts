/**
 * Human-readable log lines for a terminal: `14:03:07.412 INFO  ledger up: ./.fleet-ledger  backend=embedded`. The
 * input is one of pino's JSON lines, already redacted (credentials are censored before a line is formatted); a line
 * that is not JSON is passed through unchanged.
 */

const LEVELS: Record<number, { label: string; color: string }> = {
  10: { label: 'TRACE', color: '\u001b[90m' },
  20: { label: 'DEBUG', color: '\u001b[36m' },
  30: { label: 'INFO ', color: '\u001b[32m' },
  40: { label: 'WARN ', color: '\u001b[33m' },
  50: { label: 'ERROR', color: '\u001b[31m' },
  60: { label: 'FATAL', color: '\u001b[35m' },
};
const RESET = '\u001b[0m';
const DIM = '\u001b[2m';
const OMITTED = new Set(['level', 'time', 'msg', 'pid', 'hostname', 'name', 'v']);

function fieldValue(value: unknown): string {
  if (typeof value === 'string') return /[\s="]/.test(value) || value === '' ? JSON.stringify(value) : value;
  const text = JSON.stringify(value);
  return text === undefined ? String(value) : text;
}

/** One pino JSON line as a terminal line (with a trailing newline); `color` adds ANSI colours to level and fields. */
export function formatLogLine(line: string, options: { color?: boolean } = {}): string {
  let record: Record<string, unknown>;
  try {
    const parsed: unknown = JSON.parse(line);
    if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) return line.endsWith('\n') ? line : `${line}\n`;
    record = parsed as Record<string, unknown>;
  } catch {
    return line.endsWith('\n') ? line : `${line}\n`;
  }
  const time = typeof record['time'] === 'number' ? new Date(record['time']).toISOString().slice(11, 23) : '';
  const level = LEVELS[Number(record['level'])] ?? { label: String(record['level'] ?? '').toUpperCase().padEnd(5), color: '' };
  const message = typeof record['msg'] === 'string' ? record['msg'] : '';
  const err = record['err'] as { message?: string; stack?: string } | undefined;
  const fields = Object.entries(record)
    .filter(([key, value]) => !OMITTED.has(key) && key !== 'err' && value !== undefined)
    .map(([key, value]) => `${key}=${fieldValue(value)}`)
    .join(' ');
  const paint = (code: string, text: string): string => (options.color && code ? `${code}${text}${RESET}` : text);
  let out = `${time} ${paint(level.color, level.label)} ${message}`;
  if (fields) out += `  ${paint(DIM, fields)}`;
  if (err?.stack ?? err?.message) out += `\n${err.stack ?? err.message}`;
  return `${out}\n`;
}

export type LogFormat = 'json' | 'pretty';

/** `FLEET_LEDGER_LOG_FORMAT` (json | pretty) when set, else pretty on a terminal and JSON otherwise. */
export function chooseLogFormat(setting: string | undefined, isTty: boolean): LogFormat {
  if (setting === 'json' || setting === 'pretty') return setting;
  return isTty ? 'pretty' : 'json';
}

/** What the process logger censors, whatever object carries it: no credential is ever logged. */
export const logRedaction = {
  paths: ['password', '*.password', 'token', '*.token', 'authorization', '*.authorization', 'connectionString'],
  censor: '***',
};
