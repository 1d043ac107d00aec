export * from './shards.js';
export * from './cluster-member.js';
export * from './threaded-member.js';
export { leaseAllowsRequest, readLeaseSlot, leaseSlotWidth, type LeaseInSlot } from '../poller/index.js';
