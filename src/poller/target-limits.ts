import type { PollPolicy } from './poll-policy.js';
import type { PollTarget } from './poll-target.js';
import type { TargetState } from './target-state.js';

/**
 * Sessions (visits) the poller may hold on a target at once: its registration's limit, else 1 for an SNMP device
 * (management cards answer one request at a time, so its check never overlaps its walk), else the policy's default.
 */
export function sessionLimit(policy: PollPolicy, target: PollTarget): number {
  return target.sessionLimit ?? (target.protocol === 'snmp' ? 1 : policy.defaultSessionLimit);
}

/** 1 while the BMC answers; doubling per session refusal and per failure past the breaker threshold. */
export function backoffFactor(policy: PollPolicy, state: TargetState): number {
  const overBreaker = Math.max(0, state.consecutiveFailures - policy.breakerThreshold + 1);
  const exponent = overBreaker + state.sessionLimitStreak;
  return Math.min(policy.maxBackoffFactor, 2 ** exponent);
}
