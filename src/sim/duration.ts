/** Durations as written in scenarios and fault requests: a number of seconds, or `500ms`, `90s`, `5m`, `1h`. */
import { z } from 'zod';

const UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

export function parseDuration(value: number | string): number | undefined {
  if (typeof value === 'number') return Number.isFinite(value) && value >= 0 ? value * 1000 : undefined;
  const match = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h)?\s*$/.exec(value);
  if (!match) return undefined;
  return Number(match[1]) * (UNITS[match[2] ?? 's'] ?? 1000);
}

/** A zod schema for a duration, giving milliseconds. */
export const durationMs = z.union([z.number(), z.string()]).transform((value, context) => {
  const ms = parseDuration(value);
  if (ms === undefined) {
    context.addIssue({ code: 'custom', message: `not a duration: ${JSON.stringify(value)} (use seconds, or 500ms, 90s, 5m, 1h)` });
    return z.NEVER;
  }
  return ms;
});
