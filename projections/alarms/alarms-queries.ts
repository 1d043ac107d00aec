/** Typed questions of the alarms read model. */
import { sql, type Kysely } from 'kysely';
import type { AlarmsTables } from './alarms-table.js';

export interface AlarmView {
  alarmId: string;
  kind: string;
  severity: string;
  status: 'open' | 'closed';
  nodeId: string | null;
  component: string | null;
  parentId: string | null;
  summary: string;
  evidence: unknown;
  openedAt: Date;
  closedAt: Date | null;
  acknowledgedBy: string | null;
  acknowledgedAt: Date | null;
}

function view(row: any): AlarmView {
  return {
    alarmId: row.alarm_id,
    kind: row.kind,
    severity: row.severity,
    status: row.status,
    nodeId: row.node_id,
    component: row.component,
    parentId: row.parent_id,
    summary: row.summary,
    evidence: row.evidence,
    openedAt: row.opened_at,
    closedAt: row.closed_at,
    acknowledgedBy: row.acknowledged_by,
    acknowledgedAt: row.acknowledged_at,
  };
}

/** Critical first, then warnings, then anything else: the order people must see alarms in. */
const severityRank = sql<number>`CASE severity WHEN 'critical' THEN 0 WHEN 'warning' THEN 1 ELSE 2 END`;

/**
 * Open alarms, critical first, then oldest first within a severity (a root cause raised after a dozen drift warnings
 * comes before them). By default only top-level ones: a node alarm folded under a root cause is
 * reached through its parent (`childAlarms`), which is what keeps a PDU failure to one line.
 */
export async function openAlarms(db: Kysely<AlarmsTables>, options: { includeFolded?: boolean; kind?: string } = {}): Promise<AlarmView[]> {
  let query = db.selectFrom('alarms').selectAll().where('status', '=', 'open');
  if (!options.includeFolded) query = query.where('parent_id', 'is', null);
  if (options.kind) query = query.where('kind', '=', options.kind);
  return (await query.orderBy(severityRank).orderBy('opened_at').orderBy('alarm_id').execute()).map(view);
}

export async function childAlarms(db: Kysely<AlarmsTables>, parentId: string): Promise<AlarmView[]> {
  return (await db.selectFrom('alarms').selectAll().where('parent_id', '=', parentId).orderBy('opened_at').orderBy('alarm_id').execute()).map(view);
}

export async function alarmById(db: Kysely<AlarmsTables>, alarmId: string): Promise<AlarmView | null> {
  const row = await db.selectFrom('alarms').selectAll().where('alarm_id', '=', alarmId).executeTakeFirst();
  return row ? view(row) : null;
}

/** Every alarm of a node, open or closed, newest first. */
export async function alarmsOfNode(db: Kysely<AlarmsTables>, nodeId: string): Promise<AlarmView[]> {
  return (await db.selectFrom('alarms').selectAll().where('node_id', '=', nodeId).orderBy('opened_at', 'desc').execute()).map(view);
}

/** Open top-level alarms counted by kind (node alarms folded under a root cause are not counted). */
export async function openAlarmCountsByKind<DB>(db: Kysely<DB>): Promise<Array<{ kind: string; n: number }>> {
  const rows = await sql<{ kind: string; n: number }>`SELECT kind, count(*)::int AS n FROM alarms WHERE status = 'open' AND parent_id IS NULL GROUP BY kind`.execute(db);
  return rows.rows;
}

/** How many open alarms (folded or not) name one of the given nodes. */
export async function openAlarmCountOf<DB>(db: Kysely<DB>, nodeIds: readonly string[]): Promise<number> {
  const rows = await sql<{ n: string }>`SELECT count(*) AS n FROM alarms WHERE status = 'open' AND node_id = ANY(${[...nodeIds]})`.execute(db);
  return Number(rows.rows[0]?.n ?? 0);
}

/** Up to `limit` open alarms of one node: kind, summary and evidence (in no particular order). */
export async function openAlarmLinesOf<DB>(db: Kysely<DB>, nodeId: string, limit: number): Promise<Array<{ kind: string; summary: string; evidence: unknown }>> {
  const rows = await sql<{ kind: string; summary: string; evidence: unknown }>`SELECT kind, summary, evidence FROM alarms WHERE status = 'open' AND node_id = ${nodeId} LIMIT ${limit}`.execute(db);
  return rows.rows;
}

/**
 * Rows of `alarms` as stored (column names), for the history of the log: those of one node opened by `through` and
 * not closed before `fromAt` (`ofNode`), those opened in a window of positions (`openedIn`), those closed in a window
 * of time and opened by `through` (`closedIn`), and those with the given ids (`byIds`: id, kind, summary, node).
 */
export const alarmRowsFor = {
  async ofNode(db: Kysely<AlarmsTables>, nodeId: string, through: number, fromAt: Date | null): Promise<Array<AlarmsTables['alarms']>> {
    let query = db.selectFrom('alarms').selectAll().where('node_id', '=', nodeId).where('opened_position', '<=', through);
    if (fromAt) query = query.where(sql<boolean>`(closed_at IS NULL OR closed_at > ${fromAt})`);
    return query.orderBy('opened_position').orderBy('alarm_id').execute();
  },
  async openedIn(db: Kysely<AlarmsTables>, after: number, through: number): Promise<Array<AlarmsTables['alarms']>> {
    return db.selectFrom('alarms').selectAll().where('opened_position', '>', after).where('opened_position', '<=', through).orderBy('opened_position').orderBy('alarm_id').execute();
  },
  async closedIn(db: Kysely<AlarmsTables>, fromAt: Date | null, toAt: Date, through: number): Promise<Array<AlarmsTables['alarms']>> {
    let query = db.selectFrom('alarms').selectAll().where('closed_at', 'is not', null).where('closed_at', '<=', toAt).where('opened_position', '<=', through);
    if (fromAt) query = query.where('closed_at', '>', fromAt);
    return query.orderBy('closed_at').orderBy('alarm_id').execute();
  },
  async byIds(db: Kysely<AlarmsTables>, alarmIds: readonly string[]): Promise<Array<{ alarm_id: string; kind: string; summary: string; node_id: string | null }>> {
    return db.selectFrom('alarms').select(['alarm_id', 'kind', 'summary', 'node_id']).where('alarm_id', 'in', [...alarmIds]).execute();
  },
};
