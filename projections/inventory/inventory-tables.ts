import { toMillis, type Row, type TableRow } from '../support/table.js';
import type { Validity, VersionedTableSpec } from '../support/versions.js';
import type { FirmwareFact, NodeInventory } from './inventory-evolve.js';

export const inventoryNodesTable = {
  name: 'inventory_nodes',
  primaryKey: ['node_id'],
  columns: {
    node_id: { type: 'text' },
    site: { type: 'text', nullable: true },
    rack: { type: 'text', nullable: true },
    manufacturer: { type: 'text', nullable: true },
    model: { type: 'text', nullable: true },
    serial: { type: 'text', nullable: true },
    bmc_model: { type: 'text', nullable: true },
    bmc_firmware: { type: 'text', nullable: true },
    bios_version: { type: 'text', nullable: true },
    cpu_count: { type: 'integer', nullable: true },
    gpu_model: { type: 'text', nullable: true },
    gpu_count: { type: 'integer', nullable: true },
    memory_gib: { type: 'double precision', nullable: true },
    dialect: { type: 'text', nullable: true },
    source: { type: 'text', nullable: true },
    first_seen_at: { type: 'timestamptz', nullable: true },
    inventory_observed_at: { type: 'timestamptz', nullable: true },
    firmware_observed_at: { type: 'timestamptz', nullable: true },
    certificate_fingerprint: { type: 'text', nullable: true },
    certificate_not_after: { type: 'timestamptz', nullable: true },
    certificate_self_signed: { type: 'boolean', nullable: true },
  },
  indexes: [['site', 'rack'], ['manufacturer', 'model']],
  /** Every column: a node's inventory changes only when an observation that changed content is recorded. */
  versioned: [
    'site',
    'rack',
    'manufacturer',
    'model',
    'serial',
    'bmc_model',
    'bmc_firmware',
    'bios_version',
    'cpu_count',
    'gpu_model',
    'gpu_count',
    'memory_gib',
    'dialect',
    'source',
    'first_seen_at',
    'inventory_observed_at',
    'firmware_observed_at',
  ] as const,
} satisfies VersionedTableSpec;

export const inventoryFirmwareTable = {
  name: 'inventory_firmware',
  primaryKey: ['node_id', 'component'],
  columns: {
    node_id: { type: 'text' },
    component: { type: 'text' },
    version: { type: 'text' },
    normalized_version: { type: 'text' },
    normalization_rule: { type: 'text' },
    dialect: { type: 'text' },
    updateable: { type: 'boolean', nullable: true },
    first_seen_at: { type: 'timestamptz' },
    last_observed_at: { type: 'timestamptz' },
  },
  indexes: [['component', 'normalized_version']],
  /** Every column: a component's row changes only when a firmware observation that changed content is recorded. */
  versioned: ['version', 'normalized_version', 'normalization_rule', 'dialect', 'updateable', 'first_seen_at', 'last_observed_at'] as const,
} satisfies VersionedTableSpec;

/** The history views: every version of a node's inventory, of a node's firmware components. */
export const inventoryHistoryView = 'inventory_history';
export const firmwareHistoryView = 'inventory_firmware_history';

/** The inventory read model's tables, for kysely. */
export type InventoryTables = {
  inventory_nodes: TableRow<typeof inventoryNodesTable>;
  inventory_firmware: TableRow<typeof inventoryFirmwareTable>;
  inventory_history: TableRow<typeof inventoryNodesTable> & Validity;
  inventory_firmware_history: TableRow<typeof inventoryFirmwareTable> & Validity;
};

const nodeColumns: Array<[keyof NodeInventory, string, 'ms' | 'plain']> = [
  ['nodeId', 'node_id', 'plain'],
  ['site', 'site', 'plain'],
  ['rack', 'rack', 'plain'],
  ['manufacturer', 'manufacturer', 'plain'],
  ['model', 'model', 'plain'],
  ['serial', 'serial', 'plain'],
  ['bmcModel', 'bmc_model', 'plain'],
  ['bmcFirmware', 'bmc_firmware', 'plain'],
  ['biosVersion', 'bios_version', 'plain'],
  ['cpuCount', 'cpu_count', 'plain'],
  ['gpuModel', 'gpu_model', 'plain'],
  ['gpuCount', 'gpu_count', 'plain'],
  ['memoryGiB', 'memory_gib', 'plain'],
  ['dialect', 'dialect', 'plain'],
  ['source', 'source', 'plain'],
  ['firstSeenAt', 'first_seen_at', 'ms'],
  ['inventoryObservedAt', 'inventory_observed_at', 'ms'],
  ['firmwareObservedAt', 'firmware_observed_at', 'ms'],
  ['certificateFingerprint', 'certificate_fingerprint', 'plain'],
  ['certificateNotAfter', 'certificate_not_after', 'ms'],
  ['certificateSelfSigned', 'certificate_self_signed', 'plain'],
];

export function inventoryToRow(state: NodeInventory): Row {
  return Object.fromEntries(nodeColumns.map(([key, column]) => [column, state[key]]));
}

export function inventoryFromRow(row: Row): NodeInventory {
  return Object.fromEntries(nodeColumns.map(([key, column, kind]) => [key, kind === 'ms' ? toMillis(row[column]) : (row[column] ?? null)])) as unknown as NodeInventory;
}

export function firmwareToRow(fact: FirmwareFact): Row {
  return {
    node_id: fact.nodeId,
    component: fact.component,
    version: fact.version,
    normalized_version: fact.normalizedVersion,
    normalization_rule: fact.normalizationRule,
    dialect: fact.dialect,
    updateable: fact.updateable,
    first_seen_at: fact.firstSeenAt,
    last_observed_at: fact.lastObservedAt,
  };
}

export function firmwareFromRow(row: Row): FirmwareFact {
  return {
    nodeId: row.node_id as string,
    component: row.component as string,
    version: row.version as string,
    normalizedVersion: row.normalized_version as string,
    normalizationRule: row.normalization_rule as string,
    dialect: row.dialect as string,
    updateable: (row.updateable as boolean | null | undefined) ?? null,
    firstSeenAt: toMillis(row.first_seen_at)!,
    lastObservedAt: toMillis(row.last_observed_at)!,
  };
}
