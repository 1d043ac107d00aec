/**
 * timestamptz as PostgreSQL sends it (DateStyle ISO: `2026-12-01 03:00:00.123456+00`, an offset of hours, minutes
 * and seconds), parsed by character codes: every event read carries two, and pg's own parser (a regular expression,
 * then a `Date` assembled field by field) took 3.9 s of an 85 s profile of `bench:replay`; the as-of engine's
 * questions, which load tens of thousands of rows, read them too. Anything else (BC dates, years before 1000,
 * `infinity`, another DateStyle) goes to `fallback`, pg's parser, which gives the same `Date` for the common form too:
 * milliseconds truncated, not rounded.
 */
import pg from 'pg';

/** pg's own timestamptz parser, taken before the event store installs the fast one: the fallback, and the tests' reference. */
export const pgTimestamptzParser = pg.types.getTypeParser(pg.types.builtins.TIMESTAMPTZ) as (text: string) => unknown;

export function fastTimestamptzParser(fallback: (text: string) => unknown): (text: string) => unknown {
  return (text: string): unknown => parseIsoTimestamptz(text) ?? fallback(text);
}

/** `YYYY-MM-DD HH:MM:SS[.ffffff]±HH[:MM[:SS]]` (year 1000 or later) as a Date, or undefined for any other text. */
export function parseIsoTimestamptz(text: string): Date | undefined {
  const n = text.length;
  if (n < 22 || text.charCodeAt(4) !== 45 || text.charCodeAt(7) !== 45 || text.charCodeAt(10) !== 32 || text.charCodeAt(13) !== 58 || text.charCodeAt(16) !== 58) return undefined;
  const year = digits(text, 0, 4);
  const month = digits(text, 5, 2);
  const day = digits(text, 8, 2);
  const hour = digits(text, 11, 2);
  const minute = digits(text, 14, 2);
  const second = digits(text, 17, 2);
  if (year < 1000 || month < 0 || day < 0 || hour < 0 || minute < 0 || second < 0) return undefined;
  let i = 19;
  let ms = 0;
  if (text.charCodeAt(i) === 46) {
    // Up to six digits of fraction; the first three are the milliseconds, the rest are dropped (truncated).
    i += 1;
    let scale = 100;
    const start = i;
    while (i < n) {
      const c = text.charCodeAt(i) - 48;
      if (c < 0 || c > 9) break;
      if (scale >= 1) ms += c * scale;
      scale /= 10;
      i += 1;
    }
    if (i === start || i - start > 6) return undefined;
  }
  const sign = text.charCodeAt(i);
  if (sign !== 43 && sign !== 45) return undefined;
  // The offset: hours, then optionally minutes and seconds, each after a colon.
  let offset = 0;
  let unit = 3600;
  for (let part = 0; part < 3 && i < n; part += 1) {
    if (part > 0 && text.charCodeAt(i) !== 58) break;
    const value = digits(text, i + 1, 2);
    if (value < 0) return undefined;
    offset += value * unit;
    unit /= 60;
    i += 3;
  }
  if (i !== n || unit === 3600) return undefined;
  const utc = Date.UTC(year, month - 1, day, hour, minute, second, ms) - (sign === 43 ? offset : -offset) * 1000;
  return Number.isNaN(utc) ? undefined : new Date(utc);
}

/** The number written by `length` decimal digits at `at`, or -1 if any is not a digit (or is past the end). */
function digits(text: string, at: number, length: number): number {
  let value = 0;
  for (let i = at; i < at + length; i += 1) {
    const c = text.charCodeAt(i) - 48;
    if (!(c >= 0 && c <= 9)) return -1;
    value = value * 10 + c;
  }
  return value;
}
