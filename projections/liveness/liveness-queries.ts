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
  /** Absent as of a point of the past: history does not keep what changes with every poll (`livenessNodesTable.versioned`). */
  lastContactAt?: Date | null;
  /** Absent as of a point of the past, as `lastContactAt`. */
  consecutiveMisses?: number;
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

/** A node's liveness as a row has it: the present-tense table's, or an as-of view's (without the per-poll columns). */
function nodeView(row: any): LivenessNodeView {
  return {
    nodeId: row.node_id,
    site: row.site,
    rack: row.rack,
    state: row.state,
    expectedIntervalS: row.expected_interval_s,
    ...('last_contact_at' in row ? { lastContactAt: row.last_contact_at } : {}),
    ...('consecutive_misses' in row ? { consecutiveMisses: row.consecutive_misses } : {}),
    darkSince: row.dark_since,
  };
}

/** Every node that is dark now (or as of a point, on the as-of views), longest dark first. */
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

/** How many nodes are in each liveness state (states with no node are absent). */
export async function livenessStateCounts(db: Kysely<LivenessTables>): Promise<Record<string, number>> {
  const rows = await db.selectFrom('liveness_nodes').select(['state', sql<number>`count(*)::int`.as('nodes')]).groupBy('state').execute();
  return Object.fromEntries(rows.map((row: { state: string; nodes: number | string }) => [row.state, Number(row.nodes)]));
}

/** One node's row of `liveness_nodes` as stored (column names), or undefined. */
export async function livenessNodeRow(db: Kysely<LivenessTables>, nodeId: string): Promise<LivenessTables['liveness_nodes'] | undefined> {
  return db.selectFrom('liveness_nodes').selectAll().where('node_id', '=', nodeId).executeTakeFirst();
}

export interface LivenessPageFilter {
  /** Keyset: only nodes whose id sorts after this one. */
  after: string | null;
  state?: string | undefined;
  exclude?: string | undefined;
  site?: string | undefined;
  rack?: string | undefined;
  /** Only nodes whose last poll the lockout latch refused (true), or only the others (false). */
  latched?: boolean | undefined;
  limit: number;
}

/** Rows of `liveness_nodes` as stored, by node id, filtered; at most `limit` rows. */
export async function livenessNodeRows(db: Kysely<LivenessTables>, filter: LivenessPageFilter): Promise<Array<LivenessTables['liveness_nodes']>> {
  let query = db.selectFrom('liveness_nodes').selectAll();
  if (filter.after !== null) query = query.where('node_id', '>', filter.after);
  if (filter.state) query = query.where('state', '=', filter.state);
  if (filter.exclude) query = query.where('state', '<>', filter.exclude);
  if (filter.site) query = query.where('site', '=', filter.site);
  if (filter.rack) query = query.where('rack', '=', filter.rack);
  if (filter.latched !== undefined) query = query.where('latched', '=', filter.latched);
  return query.orderBy('node_id').limit(filter.limit).execute();
}

/** The liveness state of each of the given nodes that the read model knows. */
export async function livenessStatesOf<DB>(db: Kysely<DB>, nodeIds: readonly string[]): Promise<Map<string, string>> {
  const rows = await sql<{ node_id: string; state: string }>`SELECT node_id, state FROM liveness_nodes WHERE node_id = ANY(${nodeIds})`.execute(db);
  return new Map(rows.rows.map((row) => [row.node_id, row.state]));
}
