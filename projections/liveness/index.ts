export * from './liveness-evolve.js';
export { livenessEventTypes, livenessFactsByNode, livenessNodeIds, forEachLivenessFact } from './liveness-facts.js';
export { LivenessProjection } from './liveness-projection.js';
export * from './liveness-queries.js';
