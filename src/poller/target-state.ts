import type { NodeCredential } from '../credentials/index.js';
import { pollWorks, type PollTarget, type PollWork } from './poll-target.js';
import type { PollPolicy } from './poll-policy.js';

/** A shard polled here (cluster mode): its lease epoch, the stop of its visits and the visits in flight. */
export interface ActiveShard {
  epoch: number;
  controller: AbortController;
  visits: Set<Promise<void>>;
}

/** What the poller knows and schedules of one target. */
export interface TargetState {
  target: PollTarget;
  /** Cluster mode: the shard of the target and the lease epoch its visits run under. */
  shard?: string;
  epoch?: number;
  /** Bumped on every reschedule; queue entries with an older seq are stale and skipped. */
  seq: number;
  due: Record<PollWork, number>;
  neverContacted: boolean;
  /** A liveness check in flight. */
  checking: boolean;
  /** A heavy visit (health, inventory, firmware) in flight. */
  reading: boolean;
  consecutiveFailures: number;
  /** The heavy works read at least once by this process (answered, changed or not). */
  readOnce: Set<Exclude<PollWork, 'liveness'>>;
  /** Consecutive heavy visits that failed: the wait before the next try of a work never read doubles with each. */
  heavyFailures: number;
  /** This BMC's firmware deadline, once a visit reading its firmware timed out: doubled, up to the visit's deadline. */
  firmwareTimeoutMs?: number;
  /** Read member by member from now on: a collection asked expanded (`$expand`) did not answer within its deadline. */
  readPlain?: boolean;
  /** Consecutive visits answered with a session-limit refusal: each doubles the wait. */
  sessionLimitStreak: number;
  latch: { fingerprint: string } | null;
  /**
   * The credential version the ledger says is in force on the node, and whether a rotation fences it (no login; heavy
   * reads wait; the liveness check asks only what needs no login). Undefined: the reference's default, not fenced.
   */
  credential?: NodeCredential;
  /** Checks put off while the version in force was being fetched (a threaded poller asks its host for it). */
  credentialWaits?: number;
  observationHashes: Map<string, string>;
  /** Whether `observationHashes` was read from the log (once per node and process, before its first append). */
  observationsRecalled: boolean;
  maintenanceUntil: number;
  lastContactAt: number | null;
  /** The ETag of the last liveness answer (sent as `If-None-Match`). */
  livenessEtag?: string;
  /** What kind of BMC this is (its service root, read at its first contact): orders first reads (the poller's first-read queues). */
  model?: string;
  /**
   * The validators of the last full inventory-and-firmware read: the resources (a list shared by every BMC that
   * served the same ones, `ValidatorKeeper`) and their ETags, one per line. About 1 KB per BMC.
   */
  readValidators?: { paths: readonly string[]; etags: string; askFirst?: string };
}

/** The lease a target's visits run under (cluster mode), or none. */
export function leaseOf(state: TargetState): { shard: string; epoch: number } | undefined {
  return state.shard !== undefined && state.epoch !== undefined ? { shard: state.shard, epoch: state.epoch } : undefined;
}

/**
 * When a new target's works are first due: first contacts spread over one interval (a fleet registered at once is not
 * a thundering herd) and the first heavy read over `firstReadSpreadS` after it (or a work's own interval, if
 * shorter); liveness first. One draw for every work: the first read is one visit, one session, not one per work.
 */
export function firstDue(target: PollTarget, now: number, policy: PollPolicy, random: () => number, options: { spreadFirstVisit?: boolean; spreadMs?: number }): Record<PollWork, number> {
  const interval = target.expectedIntervalS * 1000;
  const first = now + (options.spreadFirstVisit ? random() * Math.min(interval, options.spreadMs ?? interval) : 0);
  const due = { liveness: first } as Record<PollWork, number>;
  const draw = options.spreadFirstVisit ? random() : 0;
  for (const work of pollWorks) {
    if (work === 'liveness') continue;
    due[work] = first + draw * Math.min(policy.intervals[work], policy.firstReadSpreadS) * 1000;
  }
  return due;
}

/** A target as the poller first holds it: never contacted, nothing read, under its shard's lease (cluster mode). */
export function initialTargetState(target: PollTarget, lease: { shard: string; epoch: number } | undefined, due: Record<PollWork, number>): TargetState {
  return {
    target,
    ...(lease ? lease : {}),
    seq: 0,
    due,
    neverContacted: true,
    checking: false,
    reading: false,
    readOnce: new Set(),
    heavyFailures: 0,
    consecutiveFailures: 0,
    sessionLimitStreak: 0,
    latch: null,
    observationHashes: new Map(),
    observationsRecalled: false,
    maintenanceUntil: 0,
    lastContactAt: null,
  };
}
