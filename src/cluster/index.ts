export * from './shards.js';
export * from './cluster-member.js';
