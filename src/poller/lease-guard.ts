import { isFenced } from './lease-errors.js';
import type { PollerCluster } from './poller-options.js';
import type { ActiveShard, TargetState } from './target-state.js';

/** Whether a target may be visited now: always outside cluster mode; else while its shard's lease allows requests. */
export function leaseAllows(cluster: PollerCluster | undefined, state: TargetState): boolean {
  return !cluster || (state.shard !== undefined && state.epoch !== undefined && cluster.mayRequest(state.shard, state.epoch));
}

/** What a visit is given in cluster mode: the lease guard before every request, the shard's stop, the process's name. */
export function clusterVisitOptions(cluster: PollerCluster | undefined, active: ReadonlyMap<string, ActiveShard>, state: TargetState): { guard?: () => boolean; signal?: AbortSignal; headers?: Record<string, string> } {
  if (!cluster || state.shard === undefined || state.epoch === undefined) return {};
  const { shard, epoch } = state;
  const held = active.get(shard);
  return {
    guard: () => cluster.mayRequest(shard, epoch),
    ...(held ? { signal: held.controller.signal } : {}),
    headers: { 'x-fleet-ledger-poller': cluster.processId },
  };
}

/** A visit cut by a hand-over or a lost lease: it says nothing of the BMC and is not recorded. */
export function cutByHandOver(cluster: PollerCluster | undefined, active: ReadonlyMap<string, ActiveShard>, state: TargetState, error: unknown): boolean {
  if (!cluster || state.shard === undefined) return false;
  return isFenced(error) || active.get(state.shard)?.epoch !== state.epoch;
}
