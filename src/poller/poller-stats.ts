import type { PollOutcomeKind } from '../../events/index.js';

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
  /** ...and the few failing longest, by name, for an operator's first look (at most `worstTargetsShown`). */
  worstTargets: Array<{ nodeId: string; site: string; consecutiveFailures: number; sessionLimitStreak: number }>;
}

/** The buckets of consecutive failed visits per target. */
export const failureBucketNames = ['0', '1', '2-3', '4-7', '8+'] as const;
export type FailureBucket = (typeof failureBucketNames)[number];

export function failureBucket(failures: number): FailureBucket {
  return failures <= 0 ? '0' : failures === 1 ? '1' : failures <= 3 ? '2-3' : failures <= 7 ? '4-7' : '8+';
}

/** How many of the targets failing longest `stats()` names. */
export const worstTargetsShown = 5;
