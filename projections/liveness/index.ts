export * from './liveness-evolve.js';
export { livenessEventTypes, livenessNodeIds, forEachLivenessFact } from './liveness-facts.js';
export { LivenessProjection } from './liveness-projection.js';
export * from './liveness-queries.js';
