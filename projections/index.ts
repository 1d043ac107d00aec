/** Projections: read models derived from the log, each with its tables and its apply function. */
import type { BlastRadiusOptions } from './blast-radius/blast-radius-evolve.js';
import { AlarmsProjection } from './alarms/alarms-projection.js';
import { TopologyProjection } from './blast-radius/topology-projection.js';
import { DriftProjection } from './drift/drift-projection.js';
import { InventoryProjection } from './inventory/inventory-projection.js';
import type { LivenessOptions } from './liveness/liveness-evolve.js';
import { LivenessProjection } from './liveness/liveness-projection.js';
import type { Projection } from './projection.js';

export * from './projection.js';
export { asOfViewSchema, ensureAsOfViews, setAsOfPosition, versionedReadModels } from './time-travel.js';
export type { Validity } from './support/versions.js';
export * from './liveness/index.js';
export * from './inventory/index.js';
export * from './drift/index.js';
export * from './compliance/index.js';
export * from './blast-radius/index.js';
export * from './alarms/index.js';
export type * from './read-model-database.js';
export { ThreadedProjectionRunner, type ThreadedProjectionRunnerOptions } from './threaded-runner.js';

export interface FleetProjectionOptions {
  /** Dark after N consecutive misses (default 10), healthy again after M contacts (default 2). */
  liveness?: Partial<LivenessOptions>;
  /** Root-cause correlation window and thresholds (default 120 s, 3 nodes or 50% of the nodes fed). */
  blastRadius?: Partial<BlastRadiusOptions>;
}

/** Every read model of the fleet, ready for a `ProjectionRunner`. */
export function fleetProjections(options: FleetProjectionOptions = {}): Projection[] {
  return [
    new LivenessProjection(options.liveness),
    new InventoryProjection(),
    new DriftProjection(),
    new TopologyProjection(),
    new AlarmsProjection({ liveness: options.liveness, blastRadius: options.blastRadius }),
  ];
}
export { nodeHasHistory, nodeHistory, type AlarmInterval, type HistoryInterval, type InventoryInterval, type LivenessInterval, type NodeHistory } from './node-history.js';
export * from './push/index.js';
