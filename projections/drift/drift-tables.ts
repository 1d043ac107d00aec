import { toMillis, type Row, type TableRow } from '../support/table.js';
import type { Validity, VersionedTableSpec } from '../support/versions.js';
import type { DriftField, DriftKind, NodeDrift } from './drift-evolve.js';

export const driftNodesTable = {
  name: 'drift_nodes',
  primaryKey: ['node_id'],
  columns: {
    node_id: { type: 'text' },
    site: { type: 'text', nullable: true },
    rack: { type: 'text', nullable: true },
    import_id: { type: 'text', nullable: true },
    declared: { type: 'jsonb', nullable: true },
    declared_at: { type: 'timestamptz', nullable: true },
    observed: { type: 'jsonb', nullable: true },
    observed_at: { type: 'timestamptz', nullable: true },
    drift_count: { type: 'integer' },
  },
  /** Every column: a node's declaration and observation change only when an event declares or observes it. */
  versioned: ['site', 'rack', 'import_id', 'declared', 'declared_at', 'observed', 'observed_at', 'drift_count'] as const,
} satisfies VersionedTableSpec;

export const driftFieldsTable = {
  name: 'drift_fields',
  primaryKey: ['node_id', 'field'],
  columns: {
    node_id: { type: 'text' },
    field: { type: 'text' },
    kind: { type: 'text' },
    declared: { type: 'text', nullable: true },
    observed: { type: 'text', nullable: true },
    rule: { type: 'text', nullable: true },
    since: { type: 'timestamptz' },
  },
  /** Every column: a field's comparison changes only when a declaration or an observation changes it. */
  versioned: ['kind', 'declared', 'observed', 'rule', 'since'] as const,
} satisfies VersionedTableSpec;

/** The history views: every version of each field's comparison, of each node's declaration and observation. */
export const driftHistoryView = 'drift_history';
export const driftNodesHistoryView = 'drift_nodes_history';

/** The drift read model's tables, for kysely. */
export type DriftTables = {
  drift_nodes: TableRow<typeof driftNodesTable>;
  drift_fields: TableRow<typeof driftFieldsTable>;
  drift_history: TableRow<typeof driftFieldsTable> & Validity;
  drift_nodes_history: TableRow<typeof driftNodesTable> & Validity;
};

export function driftNodeToRow(state: NodeDrift, driftCount: number): Row {
  return {
    node_id: state.nodeId,
    site: state.declared?.site ?? null,
    rack: state.declared?.rack ?? null,
    import_id: state.importId,
    declared: state.declared,
    declared_at: state.declaredAt,
    observed: state.observed,
    observed_at: state.observedAt,
    drift_count: driftCount,
  };
}

export function driftNodeFromRow(row: Row, fields: Record<string, DriftField>): NodeDrift {
  return {
    nodeId: row.node_id as string,
    importId: row.import_id as string | null,
    declared: (row.declared ?? null) as NodeDrift['declared'],
    declaredAt: toMillis(row.declared_at),
    observed: (row.observed ?? null) as NodeDrift['observed'],
    observedAt: toMillis(row.observed_at),
    fields,
  };
}

export function driftFieldToRow(nodeId: string, field: DriftField): Row {
  return { node_id: nodeId, field: field.field, kind: field.kind, declared: field.declared, observed: field.observed, rule: field.rule, since: field.since };
}

export function driftFieldFromRow(row: Row): DriftField {
  return {
    field: row.field as string,
    kind: row.kind as DriftKind,
    declared: row.declared as string | null,
    observed: row.observed as string | null,
    rule: row.rule as string | null,
    since: toMillis(row.since)!,
  };
}
