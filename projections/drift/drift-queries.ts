/** Typed questions of the drift read model. */
import type { Kysely } from 'kysely';
import type { DriftTables } from './drift-tables.js';
import type { DriftKind } from './drift-evolve.js';

export interface DriftFinding {
  nodeId: string;
  field: string;
  kind: DriftKind;
  declared: string | null;
  observed: string | null;
  rule: string | null;
  since: Date;
}

function finding(row: any): DriftFinding {
  return { nodeId: row.node_id, field: row.field, kind: row.kind, declared: row.declared, observed: row.observed, rule: row.rule, since: row.since };
}

/** Every field that differs from its declaration (optionally of one node or one kind), oldest first. */
export async function driftFindings(db: Kysely<DriftTables>, filter: { nodeId?: string; kind?: Exclude<DriftKind, 'match'> } = {}): Promise<DriftFinding[]> {
  let query = db.selectFrom('drift_fields').selectAll().where('kind', '<>', 'match');
  if (filter.nodeId) query = query.where('node_id', '=', filter.nodeId);
  if (filter.kind) query = query.where('kind', '=', filter.kind);
  return (await query.orderBy('since').orderBy('node_id').orderBy('field').execute()).map(finding);
}

/** Every compared field of one node, drift or not, with the rule that made equal values equal. */
export async function nodeComparison(db: Kysely<DriftTables>, nodeId: string): Promise<DriftFinding[]> {
  return (await db.selectFrom('drift_fields').selectAll().where('node_id', '=', nodeId).orderBy('field').execute()).map(finding);
}
