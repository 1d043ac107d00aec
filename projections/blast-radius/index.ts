export * from './blast-radius-evolve.js';
export { TopologyProjection } from './topology-projection.js';
export * from './topology-queries.js';
