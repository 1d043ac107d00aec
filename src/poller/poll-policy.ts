import type { PollWork } from './poll-target.js';

/**
 * How often and how hard the poller may touch a BMC. Defaults follow what BMCs tolerate: a light
 * liveness check every minute, health every five, identity and inventory every half hour, the full
 * firmware inventory (minutes on some models) every four hours.
 */
export interface PollPolicy {
  /** Seconds between visits per kind of work; liveness defaults to the target's expected interval. */
  intervals: Record<Exclude<PollWork, 'liveness'>, number>;
  /** Per-request deadline. */
  requestTimeoutMs: number;
  /** Per-request deadline while reading the firmware inventory, which is slow on some models. */
  firmwareTimeoutMs: number;
  /** Total deadline of a heavy visit (every request of it; logout excepted). */
  visitDeadlineMs: number;
  /** Sessions the poller may hold on one BMC at once when the target and the dialect say nothing. */
  defaultSessionLimit: number;
  /** Liveness checks in flight across the whole fleet. */
  maxConcurrentVisits: number;
  /** Heavy reads (health, inventory, firmware) in flight across the whole fleet. */
  maxConcurrentReads: number;
  /** Visits started per second across the fleet (token bucket). */
  maxVisitsPerSecond: number;
  /** Retries within one visit, only for errors that are retryable and not a sign of overload. */
  maxRetries: number;
  retryBaseMs: number;
  /** Consecutive failed visits after which the circuit opens and the liveness check backs off. */
  breakerThreshold: number;
  /** The longest a failing BMC's liveness check is stretched to, as a multiple of its interval. */
  maxBackoffFactor: number;
  /** Random spread taken off every liveness due time (never added), as a share of the interval. */
  jitter: number;
  /** How often outcomes are flushed as one event per site. */
  flushIntervalMs: number;
  /**
   * A target added is first read (health, inventory, firmware) within this many seconds of its first contact, spread
   * at random, instead of somewhere in its first full interval (four hours for firmware): a fleet brought up, or a
   * ledger back after downtime, has every node read in minutes, paced by `maxConcurrentReads`. Later reads keep their
   * intervals.
   */
  firstReadSpreadS: number;
  /**
   * A heavy read that failed before the work was ever read is tried again after this many seconds, doubled at each
   * further failure, up to the work's interval (a work read once waits its interval after a failure, as after a success).
   */
  firstReadRetryS: number;
  /**
   * Ask collections for their members expanded where a BMC's root announces `$expand` (one request per collection
   * instead of one per member). False reads every member on its own, fleet-wide: for a firmware whose expanded
   * answers are wrong in a way a read cannot see.
   */
  expandCollections: boolean;
}

export const defaultPollPolicy: PollPolicy = {
  intervals: { health: 300, inventory: 1800, firmware: 4 * 3600 },
  requestTimeoutMs: 10_000,
  firmwareTimeoutMs: 180_000,
  // A full read of a slow model (Supermicro X13, GB200) takes one to three minutes; past five, the slot goes back.
  visitDeadlineMs: 300_000,
  defaultSessionLimit: 2,
  maxConcurrentVisits: 512,
  maxConcurrentReads: 64,
  maxVisitsPerSecond: 2000,
  maxRetries: 2,
  retryBaseMs: 500,
  breakerThreshold: 10,
  maxBackoffFactor: 8,
  jitter: 0.05,
  flushIntervalMs: 5000,
  firstReadSpreadS: 300,
  firstReadRetryS: 60,
  expandCollections: true,
};
