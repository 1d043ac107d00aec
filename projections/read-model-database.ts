/**
 * Every read model's tables in one kysely database interface, each derived from its projection's table specs: what an
 * analyst's SQL sees, typed. A query that reads one projection asks for that projection's tables only.
 */
import type { AlarmsTables } from './alarms/alarms-table.js';
import type { TopologyTables } from './blast-radius/topology-projection.js';
import type { DriftTables } from './drift/drift-tables.js';
import type { InventoryTables } from './inventory/inventory-tables.js';
import type { LivenessTables } from './liveness/liveness-tables.js';

export type { AlarmsTables, DriftTables, InventoryTables, LivenessTables, TopologyTables };

export type ReadModelDatabase = LivenessTables & InventoryTables & DriftTables & TopologyTables & AlarmsTables;
