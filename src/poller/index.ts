/** The per-target poll scheduler and poll-outcome recording. */
export * from './poll-target.js';
export * from './poll-policy.js';
export * from './poll-timers.js';
export * from './poller.js';
export { IpmiVisitor, ProtocolVisitor, RedfishVisitor, SnmpVisitor, type Visitor, type VisitOptions, type VisitResult } from './redfish-visitor.js';
export { OutcomeRecorder } from './outcome-recorder.js';
export { outcomeOfError } from './visit-outcome.js';
export { ThreadedPoller, type ThreadedPollerOptions } from './threaded-poller.js';
export type { LoopDelay } from './poller-thread.js';
export { leaseAllowsRequest, leaseSlotWidth, readLeaseSlot, type LeaseInSlot, type PollerClusterView } from './lease-slots.js';
export { shardOf, type ShardConfig } from './shard-of.js';
export { BmcTransports, type BmcTransportsOptions, type SiteTlsPolicy } from './bmc-transports.js';
export { defaultPushPolicy, type PushPolicy, type PushStats } from './push/index.js';
