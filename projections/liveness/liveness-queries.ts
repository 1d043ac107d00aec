/** Typed questions analysts and the API ask of the liveness read model. */
import { sql, type Kysely } from 'kysely';
import type { LivenessTables } from './liveness-tables.js';
import { toMillis } from '../support/table.js';
import type { LivenessStatus } from './liveness-evolve.js';

export interface LivenessNodeView {
  nodeId: string;
  site: string | null;
  rack: string | null;
  state: LivenessStatus;
  expectedIntervalS: number;
  lastContactAt: Date | null;
  consecutiveMisses: number;
  darkSince: Date | null;
}

export interface LivenessGapView {
  gapId: string;
  nodeId: string;
  rack: string | null;
  startAt: Date;
  /** Null while the gap is open. */
  endAt: Date | null;
  misses: number;
  wentDark: boolean;
}

function nodeView(row: any): LivenessNodeView {
  return {
    nodeId: row.node_id,
    site: row.site,
    rack: row.rack,
    state: row.state,
    expectedIntervalS: row.expected_interval_s,
    lastContactAt: row.last_contact_at,
    consecutiveMisses: row.consecutive_misses,
    darkSince: row.dark_since,
  };
}

/** Every node that is dark now, longest dark first. */
export async function darkNodes(db: Kysely<LivenessTables>): Promise<LivenessNodeView[]> {
  const rows = await db.selectFrom('liveness_nodes').selectAll().where('state', '=', 'dark').orderBy('dark_since').orderBy('node_id').execute();
  return rows.map(nodeView);
}

export async function nodeLiveness(db: Kysely<LivenessTables>, nodeId: string): Promise<LivenessNodeView | null> {
  const row = await db.selectFrom('liveness_nodes').selectAll().where('node_id', '=', nodeId).executeTakeFirst();
  return row ? nodeView(row) : null;
}

/** Seconds since the node's last successful contact at `now`; null if it was never contacted or is unknown. */
export async function secondsSinceLastContact(db: Kysely<LivenessTables>, nodeId: string, now: Date): Promise<number | null> {
  const row = await db.selectFrom('liveness_nodes').select('last_contact_at').where('node_id', '=', nodeId).executeTakeFirst();
  const last = toMillis(row?.last_contact_at);
  return last === null ? null : (now.getTime() - last) / 1000;
}

/** Gaps of one node or of every node of a rack that overlap [from, to] (an open gap overlaps until now). */
export async function gapsInPeriod(db: Kysely<LivenessTables>, scope: { nodeId: string } | { rack: string }, from: Date, to: Date): Promise<LivenessGapView[]> {
  let query = db
    .selectFrom('liveness_gaps')
    .selectAll()
    .where('start_at', '<=', to)
    .where(sql<boolean>`coalesce(end_at, 'infinity'::timestamptz) >= ${from}`);
  query = 'nodeId' in scope ? query.where('node_id', '=', scope.nodeId) : query.where('rack', '=', scope.rack);
  const rows = await query.orderBy('start_at').orderBy('node_id').execute();
  return rows.map((row: any) => ({ gapId: row.gap_id, nodeId: row.node_id, rack: row.rack, startAt: row.start_at, endAt: row.end_at, misses: row.misses, wentDark: row.went_dark }));
}

/**
 * Nodes whose last successful contact is older than `intervals` times their expected interval at `now`, whatever
 * their state: what a stopped poller would otherwise hide (no outcomes means no misses). Decommissioned nodes and
 * nodes inside a maintenance window are left out; never-contacted nodes count from their registration.
 */
export async function overdueNodes(db: Kysely<LivenessTables>, now: Date, intervals = 3): Promise<LivenessNodeView[]> {
  const rows = await db
    .selectFrom('liveness_nodes')
    .selectAll()
    .where('state', '<>', 'decommissioned')
    .where(sql<boolean>`not (coalesce(maintenance_from <= ${now} and maintenance_until >= ${now}, false))`)
    .where(sql<boolean>`coalesce(last_contact_at, registered_at) + make_interval(secs => expected_interval_s * ${intervals}) < ${now}`)
    .orderBy(sql`coalesce(last_contact_at, registered_at)`)
    .orderBy('node_id')
    .execute();
  return rows.map(nodeView);
}
