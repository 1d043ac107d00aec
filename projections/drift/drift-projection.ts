/**
 * The drift projection: per node the declaration, the latest observation and each field's comparison. A batch
 * loads the nodes it touches, evolves them in memory, and replaces their field rows.
 */
import type { Kysely, Transaction } from 'kysely';
import type { RecordedEvent } from '../../events/index.js';
import type { Projection } from '../projection.js';
import { createTable, deleteRows, loadRows, upsertRows, holdTablesForRebuild, type HeldTables } from '../support/table.js';
import { driftOf, evolveDrift, initialDrift, type DriftField, type FirmwareComparator, type NodeDrift } from './drift-evolve.js';
import { createHistoryView } from '../support/version-views.js';
import { createVersionsTable, VersionRecorder, versionKeyOf, versionsTableName } from '../support/versions.js';
import { driftEventTypes, driftFactOf } from './drift-facts.js';
import { driftFieldFromRow, driftFieldsTable, driftFieldToRow, driftHistoryView, driftNodeFromRow, driftNodesHistoryView, driftNodesTable, driftNodeToRow } from './drift-tables.js';
import { dialectFirmwareComparator } from './firmware-comparator.js';
import type { DynamicDatabase } from '../../src/ledger/index.js';

/** Loads the drift state of the given nodes from the drift tables. */
export async function loadDriftStates(trx: Kysely<DynamicDatabase>, nodeIds: readonly string[]): Promise<Map<string, NodeDrift>> {
  const fields = new Map<string, Record<string, DriftField>>();
  for (const row of await loadRows(trx, driftFieldsTable, 'node_id', nodeIds)) {
    const nodeId = row.node_id as string;
    let record = fields.get(nodeId);
    if (!record) fields.set(nodeId, (record = {}));
    record[row.field as string] = driftFieldFromRow(row);
  }
  const rows = await loadRows(trx, driftNodesTable, 'node_id', nodeIds);
  return new Map(rows.map((row) => [row.node_id as string, driftNodeFromRow(row, fields.get(row.node_id as string) ?? {})]));
}

function sameFields(a: Record<string, DriftField> | undefined, b: Record<string, DriftField>): boolean {
  if (!a) return false;
  const keys = Object.keys(b);
  if (keys.length !== Object.keys(a).length) return false;
  return keys.every((key) => {
    const x = a[key];
    const y = b[key]!;
    return x !== undefined && x.kind === y.kind && x.declared === y.declared && x.observed === y.observed && x.rule === y.rule && x.since === y.since;
  });
}

export class DriftProjection implements Projection {
  readonly name = 'drift';
  /** 2: history (versions). */
  readonly version = 2;
  readonly eventTypes = driftEventTypes;
  readonly tables = [driftNodesTable.name, driftFieldsTable.name, versionsTableName(driftNodesTable), versionsTableName(driftFieldsTable)];

  /** Its tables are reached only through `loadRows`, `upsertRows` and `deleteRows`: a rebuild holds them in memory. */
  holdTables(): HeldTables {
    return holdTablesForRebuild(this.tables);
  }

  constructor(private readonly compare: FirmwareComparator = dialectFirmwareComparator) {}

  async createTables(db: Kysely<DynamicDatabase>): Promise<void> {
    await createTable(db, driftNodesTable);
    await createTable(db, driftFieldsTable);
    await createVersionsTable(db, driftNodesTable);
    await createVersionsTable(db, driftFieldsTable);
    await createHistoryView(db, driftNodesTable, driftNodesHistoryView);
    await createHistoryView(db, driftFieldsTable, driftHistoryView);
  }

  async apply(trx: Transaction<DynamicDatabase>, events: readonly RecordedEvent[]): Promise<void> {
    const facts = events.flatMap((event) => {
      const fact = driftFactOf(event);
      return fact ? [{ ...fact, event }] : [];
    });
    if (facts.length === 0) return;
    const nodeIds = [...new Set(facts.map((f) => f.nodeId))];
    const states = await loadDriftStates(trx, nodeIds);
    const before = new Map([...states].map(([nodeId, state]) => [nodeId, state.fields]));
    const versions = new VersionRecorder(driftFieldsTable);
    const nodeVersions = new VersionRecorder(driftNodesTable);
    for (const state of states.values()) {
      nodeVersions.known(driftNodeToRow(state, driftOf(state).length));
      for (const field of Object.values(state.fields)) versions.known(driftFieldToRow(state.nodeId, field));
    }
    for (const { nodeId, fact, event } of facts) {
      const previous = states.get(nodeId) ?? initialDrift(nodeId);
      const next = evolveDrift(previous, fact, this.compare);
      states.set(nodeId, next);
      nodeVersions.observe(driftNodeToRow(next, driftOf(next).length), event);
      for (const field of Object.values(next.fields)) versions.observe(driftFieldToRow(nodeId, field), event);
      for (const field of Object.keys(previous.fields)) {
        if (!(field in next.fields)) versions.observeGone(versionKeyOf(driftFieldsTable, { node_id: nodeId, field }), event);
      }
    }
    await upsertRows(trx, driftNodesTable, [...states.values()].map((state) => driftNodeToRow(state, driftOf(state).length)));
    // Field rows are rewritten only for nodes whose comparison changed (most observations change nothing).
    const changed = [...states.values()].filter((state) => !sameFields(before.get(state.nodeId), state.fields));
    await deleteRows(trx, driftFieldsTable, 'node_id', changed.filter((state) => before.has(state.nodeId)).map((state) => state.nodeId));
    await upsertRows(trx, driftFieldsTable, changed.flatMap((state) => Object.values(state.fields).map((field) => driftFieldToRow(state.nodeId, field))));
    await nodeVersions.write(trx);
    await versions.write(trx);
  }
}
