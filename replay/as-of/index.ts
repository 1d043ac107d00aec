/**
 * Time travel over the read models: snapshots taken as the projections advance, points (positions or instants)
 * resolved, views materialized as of a position from the newest snapshot plus the tail, rollouts folded up to a point.
 */
export { AsOfEngine, type AsOfOptions, type AsOfStats } from './as-of-engine.js';
export { AsOfError, asOfErrorCatalogue, isAsOfError, isPointError, type AnyAsOfError, type AsOfErrorCode, type AsOfErrorDetails } from './as-of-error.js';
export { asOfDescription, parsePoint, type AsOfPoint, type PointQuestion } from './as-of-point.js';
export type { MaterializeStats } from './materialize.js';
export { snapshotsToPrune, type RetentionPolicy } from './retention.js';
export type { SnapshotSummary } from './snapshot-store.js';
