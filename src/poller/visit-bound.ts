import { DriverError, isExpandQuery } from '../drivers/index.js';
import type { PollPolicy } from './poll-policy.js';
import type { PollWork } from './poll-target.js';

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
