/**
 * The liveness projection: per node, its expected interval, last contact, consecutive misses and state; every
 * gap as an interval; the history of each node's liveness (`liveness_nodes_versions`: a version per change of what
 * matters, see `livenessNodesTable.versioned`). Each batch loads the rows of the nodes it touches, folds their facts
 * in memory with the liveness rule (`advanceLiveness`, on state the batch owns), notes after each event the nodes
 * whose versioned columns it changed, and writes back with three statements, whatever the number of events.
 */
import type { Kysely, Transaction } from 'kysely';
import type { RecordedEvent } from '../../events/index.js';
import type { Projection } from '../projection.js';
import { createTable, loadRows, upsertRows, type Row, holdTablesForRebuild, type HeldTables } from '../support/table.js';
import { createHistoryView } from '../support/version-views.js';
import { createVersionsTable, VersionRecorder, versionsTableName } from '../support/versions.js';
import { advanceLiveness, defaultLivenessOptions, initialLiveness, type LivenessOptions, type LivenessSink, type NodeLiveness } from './liveness-evolve.js';
import { forEachLivenessFact, livenessEventTypes, livenessNodeIds } from './liveness-facts.js';
import { gapToRow, livenessFromRow, livenessHistoryView, livenessNodesTable, livenessGapsTable, livenessToRow, livenessVersionUnchanged, livenessVersionValues } from './liveness-tables.js';
import type { DynamicDatabase } from '../../src/ledger/index.js';

export class LivenessProjection implements Projection {
  readonly name = 'liveness';
  /** 2: a failed heavy read is no longer a miss (only liveness checks measure absence). 3: node history (versions). */
  readonly version = 3;
  readonly eventTypes = livenessEventTypes;
  readonly tables = [livenessNodesTable.name, livenessGapsTable.name, versionsTableName(livenessNodesTable)];

  /** Its tables are reached only through `loadRows`, `upsertRows` and `deleteRows`: a rebuild holds them in memory. */
  holdTables(): HeldTables {
    return holdTablesForRebuild(this.tables);
  }
  readonly options: LivenessOptions;

  constructor(options: Partial<LivenessOptions> = {}) {
    this.options = { ...defaultLivenessOptions, ...options };
  }

  async createTables(db: Kysely<DynamicDatabase>): Promise<void> {
    await createTable(db, livenessNodesTable);
    await createTable(db, livenessGapsTable);
    await createVersionsTable(db, livenessNodesTable);
    await createHistoryView(db, livenessNodesTable, livenessHistoryView);
  }

  async apply(trx: Transaction<DynamicDatabase>, events: readonly RecordedEvent[]): Promise<void> {
    const nodeIds = new Set<string>();
    for (const event of events) livenessNodeIds(event, nodeIds);
    if (nodeIds.size === 0) return;
    const loaded = await loadRows(trx, livenessNodesTable, 'node_id', [...nodeIds]);
    const states = new Map<string, NodeLiveness>(loaded.map((row) => [row.node_id as string, livenessFromRow(row)]));
    const versions = new VersionRecorder(livenessNodesTable);
    for (const state of states.values()) versions.knownValues(state.nodeId, livenessVersionValues(state));
    const sink: LivenessSink = { transitions: [], gaps: new Map() };
    const touched = new Set<NodeLiveness>();
    for (const event of events) {
      forEachLivenessFact(event, (nodeId, fact) => {
        let state = states.get(nodeId);
        if (!state) states.set(nodeId, (state = initialLiveness(nodeId, this.options)));
        advanceLiveness(state, fact, this.options, sink);
        touched.add(state);
      });
      sink.transitions.length = 0;
      for (const state of touched) {
        versions.observeUnlessUnchanged(state.nodeId, state, livenessVersionUnchanged, livenessVersionValues, event);
      }
      touched.clear();
    }
    const gapRows: Row[] = [...sink.gaps.values()].map(gapToRow);
    await upsertRows(trx, livenessNodesTable, [...states.values()].map(livenessToRow));
    await upsertRows(trx, livenessGapsTable, gapRows);
    await versions.write(trx);
  }
}
