import { DriverError, isExpandQuery } from '../drivers/index.js';
import type { PollPolicy } from './poll-policy.js';
import type { PollTimers, TimerHandle } from './poll-timers.js';
import type { PollTarget, PollWork } from './poll-target.js';
import type { VisitResult } from './redfish-visitor.js';

/** A timeout of a request that asked for a collection expanded (`?$expand=`): its `url` detail names it. */
export function expandedRequestTimedOut(error: unknown): boolean {
  if (!(error instanceof DriverError) || error.code !== 'DRIVER_TIMEOUT') return false;
  const url = (error.details as { url?: unknown } | undefined)?.url;
  return typeof url === 'string' && isExpandQuery(url);
}

/**
 * The longest a visit can take when every deadline it was given holds, plus a margin: a liveness check's attempts
 * and the waits between them; a heavy read's total deadline and its logout.
 */
export function visitBoundMs(policy: PollPolicy, works: readonly PollWork[]): number {
  const margin = Math.min(10_000, 5 * policy.requestTimeoutMs);
  if (works.every((work) => work === 'liveness')) {
    let waits = 0;
    for (let attempt = 1; attempt <= policy.maxRetries; attempt += 1) waits += policy.retryBaseMs * 2 ** (attempt - 1) * 1.5;
    // Two deadlines per attempt: an IPMI check may try a second cipher suite after the first was refused.
    return (policy.maxRetries + 1) * 2 * policy.requestTimeoutMs + waits + margin;
  }
  return policy.visitDeadlineMs + Math.max(policy.requestTimeoutMs, 2_000) + margin;
}

/**
 * The visit's result, or, once it is still unsettled `boundMs` after it began, a timeout: every request of a visit has
 * its own deadline, so this fires only for a visit stuck where no deadline reaches (a defect, here or in a library).
 * The stuck visit is left to itself and its answer, if one ever comes, is ignored; the poller records the timeout,
 * gives the slot back and polls the BMC again on schedule. Left waiting, it would hold the target's `checking` (or
 * `reading`) flag for good, and the node would never be polled again: silent, with no miss recorded to show it.
 * `abandoned` is told (to count and log it) when the bound is reached.
 */
export function boundedVisit(timers: PollTimers, visit: Promise<VisitResult>, boundMs: number, target: PollTarget, works: readonly PollWork[], abandoned: () => void): Promise<VisitResult> {
  let timer: TimerHandle | undefined;
  const timedOut = new Promise<VisitResult>((resolve) => {
    timer = timers.setTimeout(() => {
      abandoned();
      resolve({ ok: false, latencyMs: boundMs, observations: [], error: new DriverError('DRIVER_TIMEOUT', `visit to ${target.nodeId} (${works.join(', ')}) still unsettled after ${boundMs} ms`, { deadlineMs: boundMs }) });
    }, boundMs);
    timer.unref?.();
  });
  return Promise.race([visit, timedOut]).finally(() => timers.clearTimeout(timer));
}
