/** Typed questions of the alarms read model. */
import type { Kysely } from 'kysely';
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

/**
 * Open alarms, oldest first. By default only top-level ones: a node alarm folded under a root cause is
 * reached through its parent (`childAlarms`), which is what keeps a PDU failure to one line.
 */
export async function openAlarms(db: Kysely<AlarmsTables>, options: { includeFolded?: boolean; kind?: string } = {}): Promise<AlarmView[]> {
  let query = db.selectFrom('alarms').selectAll().where('status', '=', 'open');
  if (!options.includeFolded) query = query.where('parent_id', 'is', null);
  if (options.kind) query = query.where('kind', '=', options.kind);
  return (await query.orderBy('opened_at').orderBy('alarm_id').execute()).map(view);
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
