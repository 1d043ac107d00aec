/**
 * The inventory projection: per node what was observed (identity, BMC and BIOS firmware, GPUs, the dialect that
 * read it) and every running firmware component. One load and at most three writes per batch.
 */
import type { Kysely, Transaction } from 'kysely';
import { assertNever, eventGuard, isEventOf, type RecordedEvent } from '../../events/index.js';
import type { Projection } from '../projection.js';
import { createTable, deleteRows, loadRows, nodeIdOfStream, upsertRows, holdTablesForRebuild, type HeldTables } from '../support/table.js';
import { createHistoryView } from '../support/version-views.js';
import { createVersionsTable, VersionRecorder, versionKeyOf, versionsTableName } from '../support/versions.js';
import { emptyInventory, observeCertificate, observeFirmware, observeInventory, registerNode, type FirmwareFact, type NodeInventory } from './inventory-evolve.js';
import { firmwareFromRow, firmwareHistoryView, firmwareToRow, inventoryFirmwareTable, inventoryFromRow, inventoryHistoryView, inventoryNodesTable, inventoryToRow } from './inventory-tables.js';
import type { DynamicDatabase } from '../../src/ledger/index.js';

export const inventoryEventTypes = ['NodeRegistered', 'NodeInventoryObserved', 'FirmwareInventoryObserved', 'BmcCertificateObserved'] as const;
const isInventoryEvent = eventGuard(inventoryEventTypes);

function nodeOf(event: RecordedEvent): string | null {
  if (isEventOf(event, ['NodeRegistered', 'BmcCertificateObserved'])) return event.data.nodeId;
  return nodeIdOfStream(event.stream);
}

export class InventoryProjection implements Projection {
  readonly name = 'inventory';
  // 2: inventory_firmware.updateable (the rollout needs to know what the BMC says it cannot update).
  // 3: inventory_nodes.certificate_* (the BMC's certificate and its expiry).
  // 4: history (versions).
  readonly version = 4;
  readonly eventTypes = inventoryEventTypes;
  readonly tables = [inventoryNodesTable.name, inventoryFirmwareTable.name, versionsTableName(inventoryNodesTable), versionsTableName(inventoryFirmwareTable)];

  /** Its tables are reached only through `loadRows`, `upsertRows` and `deleteRows`: a rebuild holds them in memory. */
  holdTables(): HeldTables {
    return holdTablesForRebuild(this.tables);
  }

  async createTables(db: Kysely<DynamicDatabase>): Promise<void> {
    await createTable(db, inventoryNodesTable);
    await createTable(db, inventoryFirmwareTable);
    await createVersionsTable(db, inventoryNodesTable);
    await createVersionsTable(db, inventoryFirmwareTable);
    await createHistoryView(db, inventoryNodesTable, inventoryHistoryView);
    await createHistoryView(db, inventoryFirmwareTable, firmwareHistoryView);
  }

  async apply(trx: Transaction<DynamicDatabase>, events: readonly RecordedEvent[]): Promise<void> {
    const nodeIds = new Set<string>();
    const firmwareNodes = new Set<string>();
    for (const event of events) {
      const nodeId = nodeOf(event);
      if (!nodeId) continue;
      nodeIds.add(nodeId);
      if (event.type === 'FirmwareInventoryObserved') firmwareNodes.add(nodeId);
    }
    if (nodeIds.size === 0) return;
    const states = new Map<string, NodeInventory>(
      (await loadRows(trx, inventoryNodesTable, 'node_id', [...nodeIds])).map((row) => [row.node_id as string, inventoryFromRow(row)]),
    );
    const nodeVersions = new VersionRecorder(inventoryNodesTable);
    const firmwareVersions = new VersionRecorder(inventoryFirmwareTable);
    for (const state of states.values()) nodeVersions.known(inventoryToRow(state));
    const firmware = new Map<string, Map<string, FirmwareFact>>();
    for (const row of await loadRows(trx, inventoryFirmwareTable, 'node_id', [...firmwareNodes])) {
      const fact = firmwareFromRow(row);
      firmwareVersions.known(firmwareToRow(fact));
      let components = firmware.get(fact.nodeId);
      if (!components) firmware.set(fact.nodeId, (components = new Map()));
      components.set(fact.component, fact);
    }
    for (const event of events) {
      const nodeId = nodeOf(event);
      if (!nodeId || !isInventoryEvent(event)) continue;
      const state = states.get(nodeId) ?? emptyInventory(nodeId);
      const at = (event.observedAt ?? event.recordedAt).getTime();
      switch (event.type) {
        case 'NodeRegistered': {
          const data = event.data;
          states.set(nodeId, registerNode(state, data.site, data.rack));
          break;
        }
        case 'NodeInventoryObserved':
          states.set(nodeId, observeInventory(state, event.data, at));
          break;
        case 'BmcCertificateObserved':
          states.set(nodeId, observeCertificate(state, event.data));
          break;
        case 'FirmwareInventoryObserved': {
          const before = firmware.get(nodeId) ?? new Map<string, FirmwareFact>();
          const next = observeFirmware(state, before, event.data, at);
          states.set(nodeId, next.state);
          firmware.set(nodeId, next.firmware);
          for (const fact of next.firmware.values()) firmwareVersions.observe(firmwareToRow(fact), event);
          for (const [component, fact] of before) {
            if (!next.firmware.has(component)) firmwareVersions.observeGone(versionKeyOf(inventoryFirmwareTable, firmwareToRow(fact)), event);
          }
          break;
        }
        default:
          assertNever(event);
      }
      nodeVersions.observe(inventoryToRow(states.get(nodeId)!), event);
    }
    await upsertRows(trx, inventoryNodesTable, [...states.values()].map(inventoryToRow));
    await deleteRows(trx, inventoryFirmwareTable, 'node_id', [...firmwareNodes]);
    await upsertRows(trx, inventoryFirmwareTable, [...firmwareNodes].flatMap((nodeId) => [...(firmware.get(nodeId)?.values() ?? [])].map(firmwareToRow)));
    await nodeVersions.write(trx);
    await firmwareVersions.write(trx);
  }
}
