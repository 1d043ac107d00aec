import type { TableSpec, TableRow } from '../support/table.js';
import type { Validity, VersionedTableSpec } from '../support/versions.js';

/** Every alarm, open or closed, of every kind: one table. */
export const alarmsTable = {
  name: 'alarms',
  primaryKey: ['alarm_id'],
  columns: {
    alarm_id: { type: 'text' },
    kind: { type: 'text' },
    severity: { type: 'text' },
    status: { type: 'text' },
    node_id: { type: 'text', nullable: true },
    component: { type: 'text', nullable: true },
    site: { type: 'text', nullable: true },
    rack: { type: 'text', nullable: true },
    parent_id: { type: 'text', nullable: true },
    summary: { type: 'text' },
    evidence: { type: 'jsonb' },
    opened_at: { type: 'timestamptz' },
    opened_position: { type: 'bigint' },
    updated_at: { type: 'timestamptz' },
    closed_at: { type: 'timestamptz', nullable: true },
    acknowledged_by: { type: 'text', nullable: true },
    acknowledged_at: { type: 'timestamptz', nullable: true },
    ack_note: { type: 'text', nullable: true },
  },
  indexes: [['status', 'kind'], ['node_id'], ['parent_id']],
  /** Every column: an alarm changes only when something happens to it (opened, folded, updated, acknowledged, closed). */
  versioned: [
    'kind',
    'severity',
    'status',
    'node_id',
    'component',
    'site',
    'rack',
    'parent_id',
    'summary',
    'evidence',
    'opened_at',
    'opened_position',
    'updated_at',
    'closed_at',
    'acknowledged_by',
    'acknowledged_at',
    'ack_note',
  ] as const,
} satisfies VersionedTableSpec;

/** The history view: every version of every alarm. */
export const alarmsHistoryView = 'alarms_history';

/** The projection's working state (per node, rack and component), internal: not part of the read model. */
export const alarmStateTable = {
  name: 'alarm_state',
  primaryKey: ['key'],
  columns: {
    key: { type: 'text' },
    scope: { type: 'text' },
    state: { type: 'json' },
  },
  indexes: [['scope']],
} satisfies TableSpec;

/** The alarms read model's tables, for kysely. */
export type AlarmsTables = {
  alarms: TableRow<typeof alarmsTable>;
  alarm_state: TableRow<typeof alarmStateTable>;
  alarms_history: TableRow<typeof alarmsTable> & Validity;
};
