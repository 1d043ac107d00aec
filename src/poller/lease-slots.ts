import type { ShardConfig } from './shard-of.js';

/**
 * The layout of a poll lease mirrored into shared memory by the cluster's keeper thread (`src/cluster`), read by the
 * poller's thread before every request. It lives here, below the cluster, because the poller reads it and nothing
 * imports upward; the cluster writes it. Per shard slot: epoch, pollAfter, validUntil (ms since the epoch), draining
 * (0/1); zero: not held.
 */
export const leaseSlotWidth = 4;

/** What the poller needs of a cluster membership whose keeper mirrors its leases into shared memory. */
export interface PollerClusterView {
  readonly processId: string;
  readonly shardConfig: ShardConfig;
  readonly leaseSlots: SharedArrayBuffer;
  /** The shard of a node (and a note to the member that the node is known). */
  shardOf(site: string, nodeId: string): string;
  /** A write refused for a superseded epoch: the member drops the lease. */
  fenced(shard: string, epoch: number): void;
  slotOf(shard: string): number | undefined;
}

/** A poll lease as mirrored into shared memory by its keeper (`ClusterMember` with `shared`). */
export interface LeaseInSlot {
  epoch: number;
  pollAfter: number;
  validUntil: number;
  draining: boolean;
}

/**
 * The lease in `slot` of the keeper's shared memory, or null when it is not held. Any thread may read it: the keeper
 * writes `validUntil` last (and zeroes it first), so a reader never pairs a new epoch with an old validity.
 */
export function readLeaseSlot(slots: BigInt64Array, slot: number): LeaseInSlot | null {
  const at = slot * leaseSlotWidth;
  const validUntil = Number(Atomics.load(slots, at + 2));
  if (validUntil === 0) return null;
  return { epoch: Number(Atomics.load(slots, at)), pollAfter: Number(Atomics.load(slots, at + 1)), validUntil, draining: Atomics.load(slots, at + 3) === 1n };
}

/** Whether a request may go out under `epoch` at `now`: the lease is this epoch's, past its hand-over wait, not run out. */
export function leaseAllowsRequest(held: LeaseInSlot | null, epoch: number, now: number): boolean {
  return held !== null && held.epoch === epoch && now >= held.pollAfter && now < held.validUntil;
}
