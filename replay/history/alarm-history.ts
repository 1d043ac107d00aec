/**
 * Alarms in history. An alarm's identity, kind and wording are the alarms read model's (it alone correlates root
 * causes and GPU errors); where it sits in the log comes from the log: it opened at `opened_position`, and it was
 * acknowledged by the `AlarmAcknowledged` event that names it (with who asked). A closing has no event of its own:
 * it is placed by the alarm's `closed_at` (the clock of the fact that closed it: the poll that answered, the clean
 * reading). The read model may be behind the head or not built yet: the answer says how far it had applied the log.
 */
import type { Kysely } from 'kysely';
import { isEventOf, type RecordedEvent } from '../../events/index.js';
import type { AlarmsTables } from '../../projections/index.js';
import type { EventStore } from '../../src/ledger/index.js';
import { alarmRowsFor } from '../../projections/index.js';
import { projectionCheckpoint, readTypes, tableExists, type PositionRange } from './log-reads.js';

/** One alarm as history shows it. Instants are RFC 3339, UTC. */
export interface AlarmRecord {
  alarmId: string;
  kind: string;
  severity: string;
  nodeId: string | null;
  summary: string;
  openedAt: string;
  openedPosition: number;
  /** Null when it was still open at the end of the window. */
  closedAt: string | null;
  acknowledgedBy: string | null;
  acknowledgedAt: string | null;
  acknowledgedPosition: number | null;
}

/** How far the alarms read model had applied the log when asked (null: not built in this database). */
export interface AlarmSource {
  available: boolean;
  throughPosition: number | null;
  /** False when the read model had not yet applied the whole window: alarms of its tail are missing. */
  complete: boolean;
}

export interface AlarmAck {
  alarmId: string;
  position: number;
  at: string;
  by: string;
  role: string | null;
  note: string | null;
}

function iso(value: unknown): string | null {
  return value === null || value === undefined ? null : new Date(value as string).toISOString();
}

export async function alarmSource(store: EventStore, window: PositionRange): Promise<AlarmSource> {
  if (!(await tableExists(store, 'alarms'))) return { available: false, throughPosition: null, complete: false };
  const checkpoint = await projectionCheckpoint(store, 'alarms');
  const throughPosition = checkpoint?.position ?? null;
  return { available: true, throughPosition, complete: throughPosition !== null && throughPosition >= window.through };
}

/** Acknowledgements recorded in the range, optionally only of the given alarms. */
export function acknowledgements(events: readonly RecordedEvent[], alarmIds?: ReadonlySet<string>): AlarmAck[] {
  return events
    .filter((event) => isEventOf(event, 'AlarmAcknowledged'))
    .map((event) => {
      const data = event.data;
      const actor = event.actor as { id: string; role?: string };
      return { alarmId: data.alarmId, position: event.position, at: event.recordedAt.toISOString(), by: actor.id, role: actor.role ?? null, note: data.note ?? null };
    })
    .filter((ack) => !alarmIds || alarmIds.has(ack.alarmId));
}

function record(row: any, acks: ReadonlyMap<string, AlarmAck>, closedBy: number | null): AlarmRecord {
  const closedAt = row.closed_at === null ? null : new Date(row.closed_at).getTime();
  const ack = acks.get(row.alarm_id);
  return {
    alarmId: row.alarm_id,
    kind: row.kind,
    severity: row.severity,
    nodeId: row.node_id,
    summary: row.summary,
    openedAt: iso(row.opened_at)!,
    openedPosition: Number(row.opened_position),
    closedAt: closedAt !== null && (closedBy === null || closedAt <= closedBy) ? new Date(closedAt).toISOString() : null,
    acknowledgedBy: ack?.by ?? null,
    acknowledgedAt: ack?.at ?? null,
    acknowledgedPosition: ack?.position ?? null,
  };
}

/** The latest acknowledgement of each alarm among `acks`. */
function latestAcks(acks: readonly AlarmAck[]): Map<string, AlarmAck> {
  const latest = new Map<string, AlarmAck>();
  for (const ack of acks) latest.set(ack.alarmId, ack);
  return latest;
}

/**
 * A node's alarms that overlap the window: opened by its end and not closed before its start, each as it stood at
 * the end of the window (closed or not, acknowledged or not).
 */
export async function nodeAlarms(store: EventStore, nodeId: string, window: PositionRange & { fromAt: string | null; toAt: string | null }): Promise<{ alarms: AlarmRecord[]; source: AlarmSource }> {
  const source = await alarmSource(store, window);
  if (!source.available) return { alarms: [], source };
  const db = store.db.withTables<AlarmsTables>();
  const fromAt = window.fromAt ? new Date(window.fromAt) : null;
  const rows = await alarmRowsFor.ofNode(db, nodeId, window.through, fromAt);
  if (rows.length === 0) return { alarms: [], source };
  const ids = new Set(rows.map((row: any) => row.alarm_id as string));
  const acks = latestAcks(acknowledgements(await readTypes(store, ['AlarmAcknowledged'], { after: 0, through: window.through }), ids));
  const closedBy = window.toAt ? Date.parse(window.toAt) : null;
  return { alarms: rows.map((row) => record(row, acks, closedBy)), source };
}

/** Alarms opened in the window (by position) and closed in it (by their clock), and every acknowledgement in it. */
export async function alarmChanges(
  store: EventStore,
  window: PositionRange & { fromAt: string | null; toAt: string | null },
  acksInWindow: readonly AlarmAck[],
): Promise<{ opened: AlarmRecord[]; closed: AlarmRecord[]; acknowledged: Array<AlarmAck & { kind: string | null; summary: string | null; nodeId: string | null }>; source: AlarmSource }> {
  const source = await alarmSource(store, window);
  const acknowledgedBase = acksInWindow.map((ack) => ({ ...ack, kind: null, summary: null, nodeId: null }));
  if (!source.available) return { opened: [], closed: [], acknowledged: acknowledgedBase, source };
  const db = store.db.withTables<AlarmsTables>();
  const fromAt = window.fromAt ? new Date(window.fromAt) : null;
  const toAt = window.toAt ? new Date(window.toAt) : null;
  const [openedRows, closedRows] = await Promise.all([
    alarmRowsFor.openedIn(db, window.after, window.through),
    toAt ? alarmRowsFor.closedIn(db, fromAt, toAt, window.through) : Promise.resolve([] as any[]),
  ]);
  const ids = new Set([...openedRows, ...closedRows].map((row: any) => row.alarm_id as string));
  const allAcks = ids.size > 0 ? acknowledgements(await readTypes(store, ['AlarmAcknowledged'], { after: 0, through: window.through }), ids) : [];
  const acks = latestAcks(allAcks);
  const closedBy = toAt ? toAt.getTime() : null;
  const known = new Map<string, any>();
  const ackedIds = [...new Set(acksInWindow.map((ack) => ack.alarmId))];
  if (ackedIds.length > 0) {
    for (const row of await alarmRowsFor.byIds(db, ackedIds)) known.set(row.alarm_id, row);
  }
  return {
    opened: openedRows.map((row) => record(row, acks, closedBy)),
    closed: closedRows.map((row) => record(row, acks, closedBy)),
    acknowledged: acksInWindow.map((ack) => {
      const row = known.get(ack.alarmId);
      return { ...ack, kind: row?.kind ?? null, summary: row?.summary ?? null, nodeId: row?.node_id ?? null };
    }),
    source,
  };
}
