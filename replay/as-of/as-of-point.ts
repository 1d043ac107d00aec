/**
 * A point of the log as a question names it: a position, or an instant that stands for the last position recorded at
 * or before it. Sound because the ledger clock never runs backwards along the log (`event-store.ts` records every
 * batch at max(now, head)): `recorded_at` is non-decreasing in `position`.
 */
import { sql, type Kysely } from 'kysely';
import { instantSchema } from '../../events/index.js';
import type { LedgerHead, DynamicDatabase } from '../../src/ledger/index.js';
import { AsOfError } from './as-of-error.js';

/** A point resolved: what an as-of answer reflects. */
export interface AsOfPoint {
  /** The last position of the log the answer includes. */
  position: number;
  /** When that position was recorded (the ledger clock). */
  recordedAt: Date;
  /** The instant the answer describes: the instant asked, or `recordedAt` when a position was asked. */
  instant: Date;
}

/** A point as asked, parsed but not resolved. */
export type PointQuestion = { position: number } | { instant: Date };

const positionText = /^[1-9][0-9]{0,15}$/;

/** What an asOf value may look like, for validators and usage texts. */
export const asOfDescription = 'a log position (a whole number, 1 or more) or an RFC 3339 instant with a zone (2026-12-01T03:00:00Z)';

/** Parses `1234` (a position) or `2026-12-01T03:00:00Z` (an instant, with seconds and a zone, as RFC 3339 has it). */
export function parsePoint(text: string): PointQuestion {
  if (positionText.test(text) && Number.isSafeInteger(Number(text))) return { position: Number(text) };
  if (instantSchema.safeParse(text).success) return { instant: new Date(text) };
  const value = text.slice(0, 80);
  throw new AsOfError('ASOF_INVALID_POINT', { value, reason: `must be ${asOfDescription}` }, `asOf must be ${asOfDescription}, got '${value}'`);
}

/** When `position` was recorded, or null when there is no such position. */
export async function recordedAtOf(db: Kysely<DynamicDatabase>, position: number): Promise<Date | null> {
  const row = await db.selectFrom('ledger_events').select('recorded_at').where('position', '=', position).executeTakeFirst();
  return row ? new Date(row.recorded_at as Date) : null;
}

/**
 * The last position recorded at or before `instant` (0: the log begins after it): a binary search over the primary key
 * run inside PostgreSQL as one recursive statement, about log2(head) index probes and one round trip whatever the
 * density of the log in time. `bench/asof.ts` measures it against the BRIN index on `recorded_at` (whose cost grows
 * with the events recorded near the instant) and against the same search driven from here (a round trip a probe).
 */
export async function positionAtOrBefore(db: Kysely<DynamicDatabase>, instant: Date, head: LedgerHead): Promise<number> {
  if (head.position === 0) return 0;
  if (head.recordedAt.getTime() <= instant.getTime()) return head.position;
  // Invariant: recorded_at(low) <= instant (position 0 stands before the log), and every position above `high` is
  // recorded after it. A missing row (never, positions are dense) counts as after, so the search still ends.
  const result = await sql<{ position: string | number }>`
    WITH RECURSIVE search(low, high) AS (
      SELECT 0::bigint, ${head.position}::bigint
      UNION ALL
      SELECT CASE WHEN probe.at_or_before THEN (s.low + s.high + 1) / 2 ELSE s.low END,
             CASE WHEN probe.at_or_before THEN s.high ELSE (s.low + s.high + 1) / 2 - 1 END
        FROM search s
        CROSS JOIN LATERAL (
          SELECT coalesce((SELECT e.recorded_at <= ${instant} FROM ledger_events e WHERE e.position = (s.low + s.high + 1) / 2), false) AS at_or_before
        ) probe
       WHERE s.low < s.high
    )
    SELECT low AS position FROM search WHERE low >= high`.execute(db);
  return Number(result.rows[0]?.position ?? 0);
}
