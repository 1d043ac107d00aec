import { changedObservations, storableValue } from '../drivers/index.js';
import type { EventStore } from '../ledger/index.js';
import { isStaleEpoch } from './lease-errors.js';
import type { PollerCluster } from './poller-options.js';
import { recordedObservationHashes } from './recorded-observations.js';
import { leaseOf, type TargetState } from './target-state.js';

/** Appends a node's observations when their content changed, under the target's lease (cluster mode). */
export class ObservationAppender {
  /** Observations appended. */
  appended = 0;
  /** Observations refused because their lease epoch was stale (cluster mode). */
  fenced = 0;

  constructor(
    private readonly store: EventStore,
    private readonly cluster: PollerCluster | undefined,
    private readonly log?: (message: string, fields?: Record<string, unknown>) => void,
  ) {}

  /** True when what changed is in the log (or nothing did); false when it could not be stored this time. */
  async append(state: TargetState, observations: Parameters<typeof changedObservations>[1], at: number): Promise<boolean> {
    if (!state.observationsRecalled) {
      // What the log holds of the node already (an earlier run of this process, or the shard's previous owner):
      // compared against, so a restart records what changed, not every node's inventory and event log again.
      try {
        const recorded = await recordedObservationHashes(this.store, state.target.nodeId);
        for (const [type, hash] of state.observationHashes) recorded.set(type, hash);
        state.observationHashes = recorded;
        state.observationsRecalled = true;
      } catch (error) {
        // Not appended rather than appended twice: the next visit reads again.
        this.log?.('could not read the observations recorded for a node; its new ones wait for the next visit', { nodeId: state.target.nodeId, error: String(error) });
        return false;
      }
    }
    const { changed, hashes } = changedObservations(state.target.nodeId, observations, state.observationHashes);
    if (changed.length === 0) return true;
    const lease = leaseOf(state);
    try {
      await this.store.append(
        `node-${state.target.nodeId}`,
        changed.map((observation) => ({ type: observation.type, data: storableValue(observation.data), observedAt: new Date(at), actor: { kind: 'driver' as const, id: `${state.target.protocol ?? 'redfish'}:${state.target.nodeId}`, ...(lease ? { lease } : {}) } })),
      );
      state.observationHashes = hashes; // only once stored, so a failed append is retried next visit
      this.appended += changed.length;
      return true;
    } catch (error) {
      if (lease && isStaleEpoch(error)) {
        this.fenced += changed.length;
        this.cluster?.fenced(lease.shard, lease.epoch);
        return false;
      }
      this.log?.('could not append observations', { nodeId: state.target.nodeId, error: String(error) });
      return false;
    }
  }
}
