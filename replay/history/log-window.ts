/**
 * A window of the log: the events at positions (from, to]. Either end is given as a position or as an instant; the
 * ledger clock never runs backwards along the log, so an instant stands for the last position recorded at or before
 * it, found by binary search over the primary key. An instant in the future is refused: the position it stands for
 * would move as the log grows, and an auditor's question must get the same answer when asked again.
 */
import type { Kysely } from 'kysely';
import type { EventStore, LedgerDatabase } from '../../src/ledger/index.js';
import { HistoryError } from './history-error.js';

/** One end of a window as a caller gives it: a log position (0 is before the first event) or an instant. */
export type PointInput = { position: number } | { instant: Date };

/** One end of a window, resolved. */
export interface LogPoint {
  position: number;
  /**
   * The instant the point stands for: the instant given, or the recording time of the position given (null for
   * position 0, before the first event). RFC 3339, UTC.
   */
  at: string | null;
}

/** The events at positions (from.position, to.position]. */
export interface LogWindow {
  from: LogPoint;
  to: LogPoint;
}

const positionText = /^(0|[1-9][0-9]{0,15})$/;
const instantText = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|z|[+-]\d{2}:\d{2})$/;

/** What a window bound may look like on a command line or in a query string, for validators. */
export const pointPattern = /^((0|[1-9][0-9]{0,15})|(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|z|[+-]\d{2}:\d{2})))$/;
export const pointDescription = 'an RFC 3339 instant with a zone (2026-12-01T03:00:00Z) or a log position (a whole number, 0 = before the first event)';

/** Parses `1234` (a position) or `2026-12-01T03:00:00Z` (an instant). */
export function parsePoint(parameter: 'from' | 'to', text: string): PointInput {
  if (positionText.test(text)) return { position: Number(text) };
  if (instantText.test(text)) {
    const instant = new Date(text);
    if (!Number.isNaN(instant.getTime())) return { instant };
  }
  throw new HistoryError('HISTORY_INVALID_POINT', { parameter, value: text.slice(0, 80), reason: `must be ${pointDescription}` }, `${parameter} must be ${pointDescription}, got '${text.slice(0, 80)}'`);
}

function describe(point: PointInput): string {
  return 'position' in point ? `position ${point.position}` : point.instant.toISOString();
}

async function recordedAt(db: Kysely<LedgerDatabase>, position: number): Promise<Date | null> {
  if (position === 0) return null;
  const row = await db.selectFrom('ledger_events').select('recorded_at').where('position', '=', position).executeTakeFirst();
  return row ? new Date(row.recorded_at) : null;
}

/** The last position recorded at or before `instant` (0: the log begins after it). */
export async function positionAt(store: EventStore, instant: Date): Promise<number> {
  const db = store.db;
  const head = await store.head();
  if (head.position === 0 || head.recordedAt.getTime() <= instant.getTime()) return head.position;
  let low = 0;
  let high = head.position;
  while (low < high) {
    const mid = Math.ceil((low + high) / 2);
    const at = await recordedAt(db, mid);
    if (at !== null && at.getTime() <= instant.getTime()) low = mid;
    else high = mid - 1;
  }
  return low;
}

async function resolvePoint(store: EventStore, parameter: 'from' | 'to', point: PointInput, head: { position: number }, now: Date): Promise<LogPoint> {
  if ('position' in point) {
    if (!Number.isSafeInteger(point.position) || point.position < 0) {
      throw new HistoryError('HISTORY_INVALID_POINT', { parameter, value: String(point.position), reason: 'a position is a whole number, 0 or more' }, `${parameter} must be a whole number, got ${point.position}`);
    }
    if (point.position > head.position) {
      throw new HistoryError('HISTORY_POINT_BEYOND_HEAD', { parameter, value: String(point.position), headPosition: head.position }, `${parameter} (position ${point.position}) is beyond the head of the log (${head.position})`);
    }
    const at = await recordedAt(store.db, point.position);
    return { position: point.position, at: at?.toISOString() ?? null };
  }
  if (point.instant.getTime() > now.getTime() + 1_000) {
    throw new HistoryError('HISTORY_POINT_BEYOND_HEAD', { parameter, value: point.instant.toISOString(), headPosition: head.position }, `${parameter} (${point.instant.toISOString()}) is in the future`);
  }
  return { position: await positionAt(store, point.instant), at: point.instant.toISOString() };
}

/**
 * Resolves a window. `from` defaults to the beginning of the log (position 0), `to` to its head. A window that
 * starts after it ends is refused, by position and, when both ends are instants, by instant too (two instants with no
 * event between them stand for one position).
 */
export async function resolveWindow(store: EventStore, window: { from?: PointInput; to?: PointInput }, now: Date = new Date()): Promise<LogWindow> {
  const head = await store.head();
  const from = window.from ? await resolvePoint(store, 'from', window.from, head, now) : { position: 0, at: null };
  const to = window.to ? await resolvePoint(store, 'to', window.to, head, now) : { position: head.position, at: head.position === 0 ? null : head.recordedAt.toISOString() };
  const reversedInstants = window.from && window.to && 'instant' in window.from && 'instant' in window.to && window.from.instant.getTime() > window.to.instant.getTime();
  if (from.position > to.position || reversedInstants) {
    const fromText = window.from ? describe(window.from) : 'the beginning';
    const toText = window.to ? describe(window.to) : 'the head';
    throw new HistoryError('HISTORY_WINDOW_REVERSED', { parameter: 'from', from: fromText, to: toText }, `the window is reversed: from (${fromText}) is after to (${toText})`);
  }
  return { from, to };
}
