export * from './shards.js';
export * from './cluster-member.js';
export * from './threaded-member.js';
export * from './lease-slots.js';
