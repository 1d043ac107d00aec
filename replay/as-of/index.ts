/** Time travel over the read models: snapshots, instants resolved to positions, views materialized as of a position. */
export { AsOfEngine, AsOfError, type AsOfOptions, type AsOfPoint, type AsOfView } from './as-of-engine.js';
