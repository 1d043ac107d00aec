import type { PushStats } from './push/push-keeper.js';
import type { PollOutcomeKind } from '../../events/index.js';
import type { TargetState } from './target-state.js';

export interface PollerStats {
  targets: number;
  visits: number;
  visitsInFlight: number;
  latched: number;
  circuitOpen: number;
  outcomes: Record<PollOutcomeKind, number>;
  observationsAppended: number;
  outcomeBytesAppended: number;
  /** Outcomes recorded but not yet in the log (the ledger unreachable): bounded by `maxPendingOutcomes`. */
  pendingOutcomes: number;
  /** Outcomes dropped because the ledger stayed unreachable past that budget. */
  outcomesDropped: number;
  /** Cluster mode: outcomes and observations the ledger refused because their shard had been taken over. */
  appendsFenced: number;
  /**
   * Visits the poller stopped waiting for: still unsettled well past every deadline they were given (`visitBoundMs`).
   * Each is recorded as a timeout and its slot given back, so one stuck visit never takes its BMC out of polling.
   */
  visitsAbandoned: number;
  /** Lockout latches taken but not yet in the log (the ledger unreachable); retried at every flush. */
  unrecordedLatches: number;
  /** For each target contacted at least once, ms since its last successful contact (max and p99). */
  sinceContactMaxMs: number;
  /**
   * Per-BMC health in a bounded form (a fixed number of values however large the fleet, so a metrics backend is not
   * handed one series per BMC): targets by consecutive failed visits, in buckets...
   */
  failureBuckets: Record<FailureBucket, number>;
  /** ...targets whose last visits met a full session table... */
  sessionLimitedTargets: number;
  /** ...targets whose credential was not sent (the address is not one it is bound to, or plain http)... */
  credentialRefusedTargets: number;
  /** ...targets a credential rotation fences now (no login; heavy reads wait), and their login-free checks so far... */
  fencedTargets: number;
  fencedChecks: number;
  /** ...and the few failing longest, by name, for an operator's first look (at most `worstTargetsShown`). */
  worstTargets: Array<{ nodeId: string; site: string; consecutiveFailures: number; sessionLimitStreak: number }>;
  /** Push, when the poller holds streams (`docs/push.md`): streams, gaps by kind, events, event-to-ledger times. */
  push?: PushStats;
}

/** The buckets of consecutive failed visits per target. */
export const failureBucketNames = ['0', '1', '2-3', '4-7', '8+'] as const;
export type FailureBucket = (typeof failureBucketNames)[number];

function failureBucket(failures: number): FailureBucket {
  return failures <= 0 ? '0' : failures === 1 ? '1' : failures <= 3 ? '2-3' : failures <= 7 ? '4-7' : '8+';
}

/** How many of the targets failing longest `stats()` names. */
export const worstTargetsShown = 5;

/** The per-target part of `PollerStats`: latches, open circuits, contact age and the bounded health figures. */
export type TargetStats = Pick<PollerStats, 'latched' | 'circuitOpen' | 'sinceContactMaxMs' | 'failureBuckets' | 'sessionLimitedTargets' | 'worstTargets'>;

export function targetStats(states: Iterable<TargetState>, now: number, breakerThreshold: number): TargetStats {
  let latched = 0;
  let circuitOpen = 0;
  let sinceContactMaxMs = 0;
  let sessionLimitedTargets = 0;
  const failureBuckets = Object.fromEntries(failureBucketNames.map((name) => [name, 0])) as Record<FailureBucket, number>;
  const worst: TargetState[] = [];
  for (const state of states) {
    if (state.latch) latched += 1;
    if (state.consecutiveFailures >= breakerThreshold) circuitOpen += 1;
    if (state.lastContactAt !== null) sinceContactMaxMs = Math.max(sinceContactMaxMs, now - state.lastContactAt);
    failureBuckets[failureBucket(state.consecutiveFailures)] += 1;
    if (state.sessionLimitStreak > 0) sessionLimitedTargets += 1;
    if (state.consecutiveFailures > 0) {
      // A bounded insertion: the list never holds more than `worstTargetsShown`.
      const at = worst.findIndex((other) => other.consecutiveFailures < state.consecutiveFailures);
      if (at >= 0) worst.splice(at, 0, state);
      else worst.push(state);
      if (worst.length > worstTargetsShown) worst.pop();
    }
  }
  const worstTargets = worst.map((state) => ({ nodeId: state.target.nodeId, site: state.target.site, consecutiveFailures: state.consecutiveFailures, sessionLimitStreak: state.sessionLimitStreak }));
  return { latched, circuitOpen, sinceContactMaxMs, failureBuckets, sessionLimitedTargets, worstTargets };
}
