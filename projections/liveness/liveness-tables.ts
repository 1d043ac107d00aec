/** The liveness read model: one row per node, one row per gap. */
import { toMillis, type Row, type TableSpec, type TableRow } from '../support/table.js';
import type { Validity, VersionedTableSpec } from '../support/versions.js';
import type { LivenessGap, LivenessStatus, NodeLiveness } from './liveness-evolve.js';

export const livenessNodesTable = {
  name: 'liveness_nodes',
  primaryKey: ['node_id'],
  columns: {
    node_id: { type: 'text' },
    site: { type: 'text', nullable: true },
    rack: { type: 'text', nullable: true },
    state: { type: 'text' },
    expected_interval_s: { type: 'integer' },
    registered_at: { type: 'timestamptz', nullable: true },
    last_contact_at: { type: 'timestamptz', nullable: true },
    last_outcome_at: { type: 'timestamptz', nullable: true },
    consecutive_misses: { type: 'integer' },
    consecutive_successes: { type: 'integer' },
    dark_since: { type: 'timestamptz', nullable: true },
    latched: { type: 'boolean' },
    maintenance_from: { type: 'timestamptz', nullable: true },
    maintenance_until: { type: 'timestamptz', nullable: true },
    gap_count: { type: 'integer' },
    open_gap_id: { type: 'text', nullable: true },
    open_gap_start_at: { type: 'timestamptz', nullable: true },
    open_gap_site: { type: 'text', nullable: true },
    open_gap_rack: { type: 'text', nullable: true },
    open_gap_misses: { type: 'integer', nullable: true },
    open_gap_went_dark: { type: 'boolean', nullable: true },
  },
  indexes: [['state'], ['rack']],
  /**
   * History keeps what changes when something happens to the node (registration, a move, a state change, a gap opened
   * or closed, a latch, a maintenance window), not what every poll changes (last contact and outcome, the miss and
   * success counters, the open gap's miss count): versioning those would store a row per poll, more than the log.
   */
  versioned: [
    'site',
    'rack',
    'state',
    'expected_interval_s',
    'registered_at',
    'dark_since',
    'latched',
    'maintenance_from',
    'maintenance_until',
    'gap_count',
    'open_gap_id',
    'open_gap_start_at',
    'open_gap_site',
    'open_gap_rack',
    'open_gap_went_dark',
  ] as const,
} satisfies VersionedTableSpec;

export const livenessGapsTable = {
  name: 'liveness_gaps',
  primaryKey: ['gap_id'],
  columns: {
    gap_id: { type: 'text' },
    node_id: { type: 'text' },
    site: { type: 'text', nullable: true },
    rack: { type: 'text', nullable: true },
    start_at: { type: 'timestamptz' },
    end_at: { type: 'timestamptz', nullable: true },
    misses: { type: 'integer' },
    went_dark: { type: 'boolean' },
    ended_by: { type: 'text', nullable: true },
  },
  indexes: [['node_id'], ['rack', 'start_at']],
} satisfies TableSpec;

/** The liveness read model's tables, for kysely. */
export type LivenessTables = {
  liveness_nodes: TableRow<typeof livenessNodesTable>;
  liveness_history: LivenessHistoryRow;
  liveness_gaps: TableRow<typeof livenessGapsTable>;
};

/** The liveness history view: one row per version of a node's liveness (`liveness_nodes_versions`). */
export const livenessHistoryView = 'liveness_history';

/** A version of a node's liveness, as the history view has it. */
export type LivenessHistoryRow = Pick<TableRow<typeof livenessNodesTable>, 'node_id' | (typeof livenessNodesTable.versioned)[number]> & Validity;

export function livenessToRow(state: NodeLiveness): Row {
  return {
    node_id: state.nodeId,
    site: state.site,
    rack: state.rack,
    state: state.status,
    expected_interval_s: state.expectedIntervalS,
    registered_at: state.registeredAt,
    last_contact_at: state.lastContactAt,
    last_outcome_at: state.lastOutcomeAt,
    consecutive_misses: state.consecutiveMisses,
    consecutive_successes: state.consecutiveSuccesses,
    dark_since: state.darkSince,
    latched: state.latched,
    maintenance_from: state.maintenanceFrom,
    maintenance_until: state.maintenanceUntil,
    gap_count: state.gapCount,
    open_gap_id: state.openGap?.gapId ?? null,
    open_gap_start_at: state.openGap?.startAt ?? null,
    open_gap_site: state.openGap?.site ?? null,
    open_gap_rack: state.openGap?.rack ?? null,
    open_gap_misses: state.openGap?.misses ?? null,
    open_gap_went_dark: state.openGap?.wentDark ?? null,
  };
}

/**
 * The version values of a node's liveness (`versionValues` of its row, made without the row: the projection computes
 * them after every event that touches the node, polls included). Same order as `versionColumns(livenessNodesTable)`.
 */
export function livenessVersionValues(state: NodeLiveness): unknown[] {
  const gap = state.openGap;
  return [
    state.nodeId,
    state.site,
    state.rack,
    state.status,
    state.expectedIntervalS,
    state.registeredAt,
    state.darkSince,
    state.latched,
    state.maintenanceFrom,
    state.maintenanceUntil,
    state.gapCount,
    gap?.gapId ?? null,
    gap?.startAt ?? null,
    gap?.site ?? null,
    gap?.rack ?? null,
    gap?.wentDark ?? null,
  ];
}

/** Whether a node's liveness still holds the version values `values` (`livenessVersionValues`), without making new ones. */
export function livenessVersionUnchanged(state: NodeLiveness, values: readonly unknown[]): boolean {
  const gap = state.openGap;
  return (
    values[3] === state.status &&
    values[10] === state.gapCount &&
    values[7] === state.latched &&
    values[6] === state.darkSince &&
    values[11] === (gap?.gapId ?? null) &&
    values[15] === (gap?.wentDark ?? null) &&
    values[12] === (gap?.startAt ?? null) &&
    values[8] === state.maintenanceFrom &&
    values[9] === state.maintenanceUntil &&
    values[1] === state.site &&
    values[2] === state.rack &&
    values[4] === state.expectedIntervalS &&
    values[5] === state.registeredAt &&
    values[13] === (gap?.site ?? null) &&
    values[14] === (gap?.rack ?? null)
  );
}

export function livenessFromRow(row: Row): NodeLiveness {
  const nodeId = row.node_id as string;
  const openGapId = row.open_gap_id as string | null;
  return {
    nodeId,
    site: row.site as string | null,
    rack: row.rack as string | null,
    status: row.state as LivenessStatus,
    expectedIntervalS: Number(row.expected_interval_s),
    registeredAt: toMillis(row.registered_at),
    lastContactAt: toMillis(row.last_contact_at),
    lastOutcomeAt: toMillis(row.last_outcome_at),
    consecutiveMisses: Number(row.consecutive_misses),
    consecutiveSuccesses: Number(row.consecutive_successes),
    darkSince: toMillis(row.dark_since),
    latched: Boolean(row.latched),
    maintenanceFrom: toMillis(row.maintenance_from),
    maintenanceUntil: toMillis(row.maintenance_until),
    gapCount: Number(row.gap_count),
    openGap: openGapId
      ? {
          gapId: openGapId,
          nodeId,
          site: (row.open_gap_site ?? null) as string | null,
          rack: (row.open_gap_rack ?? null) as string | null,
          startAt: toMillis(row.open_gap_start_at)!, endAt: null, misses: Number(row.open_gap_misses), wentDark: Boolean(row.open_gap_went_dark), endedBy: null,
        }
      : null,
  };
}

export function gapToRow(gap: LivenessGap): Row {
  return {
    gap_id: gap.gapId,
    node_id: gap.nodeId,
    site: gap.site,
    rack: gap.rack,
    start_at: gap.startAt,
    end_at: gap.endAt,
    misses: gap.misses,
    went_dark: gap.wentDark,
    ended_by: gap.endedBy,
  };
}
