export * from './drift-evolve.js';
export { driftEventTypes, driftFactOf } from './drift-facts.js';
export { DriftProjection, loadDriftStates } from './drift-projection.js';
export { dialectFirmwareComparator } from './firmware-comparator.js';
export * from './drift-queries.js';
