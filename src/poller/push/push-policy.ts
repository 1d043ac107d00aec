/** How the poller uses push, where a BMC offers it (`docs/push.md`). */
export interface PushPolicy {
  /** How often each stream is audited by poll (subscriptions listed, state compared), in seconds. */
  auditIntervalS: number;
  /** A stream with a heartbeat is stalled after this many heartbeat intervals with nothing on it. */
  heartbeatGrace: number;
  /** An audit that finds the BMC changed waits this long for an event still on its way before calling it silence. */
  eventGraceMs: number;
  /**
   * Streams are held only on BMCs with at least this many sessions: the stream, a liveness check and a heavy read
   * must fit together under the BMC's limit.
   */
  minSessionLimit: number;
  /** How often stalled streams are looked for, in milliseconds. */
  sweepMs: number;
}

export const defaultPushPolicy: PushPolicy = { auditIntervalS: 300, heartbeatGrace: 3, eventGraceMs: 2_000, minSessionLimit: 3, sweepMs: 1_000 };
