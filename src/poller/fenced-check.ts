/**
 * The liveness check of a node a credential rotation fences: the Redfish service root, which needs no login (no
 * credential goes out, so no login the BMC could count as failed), counted as contact. Other protocols have no such
 * request: the check is recorded `latched` (the gap explained) until the fence is lifted.
 */
import type { PollOutcomeKind } from '../../events/index.js';
import type { PollPolicy } from './poll-policy.js';
import type { PollTimers } from './poll-timers.js';
import type { Credential, PollTarget } from './poll-target.js';
import type { Visitor, VisitOptions } from './redfish-visitor.js';
import { leaseOf, type TargetState } from './target-state.js';
import { backoffFactor, sessionLimit as targetSessionLimit } from './target-limits.js';
import { boundedVisit, visitBoundMs } from './visit-bound.js';
import { outcomeOfError } from './visit-outcome.js';

/** What the check uses of the poller that runs it. */
export interface FencedCheckHost {
  visitor(): Visitor;
  policy(): PollPolicy;
  timers(): PollTimers;
  clock(): number;
  random(): number;
  /** The shard lease's guard and signal for a visit (cluster mode). */
  visitOptions(state: TargetState): Partial<VisitOptions>;
  cutByHandOver(state: TargetState, error: unknown): boolean;
  latched(target: PollTarget): boolean;
  record(target: PollTarget, outcome: PollOutcomeKind, latencyMs: number, at: number, lease: { shard: string; epoch: number } | undefined): void;
  enqueue(state: TargetState): void;
  requeueAfterCut(state: TargetState): void;
  abandoned(target: PollTarget, boundMs: number): void;
  /** Whether the node is still polled here. */
  polled(nodeId: string): boolean;
  started(): void;
  ended(): void;
}

export async function fencedCheck(host: FencedCheckHost, state: TargetState, now: number): Promise<void> {
  const { target } = state;
  const interval = target.expectedIntervalS * 1000;
  if ((target.protocol ?? 'redfish') !== 'redfish' || host.latched(target)) {
    host.record(target, 'latched', 0, now, leaseOf(state));
    state.due.liveness = now + Math.min(interval, 10_000);
    host.enqueue(state);
    return;
  }
  const policy = host.policy();
  state.checking = true;
  host.started();
  try {
    const anonymous: Credential = { username: '', password: '', version: 'anonymous', endpoints: [] };
    const visit = host.visitor().visit(target, anonymous, ['liveness'], {
      requestTimeoutMs: policy.requestTimeoutMs,
      firmwareTimeoutMs: policy.firmwareTimeoutMs,
      visitDeadlineMs: policy.visitDeadlineMs,
      sessionLimit: targetSessionLimit(policy, target),
      anonymous: true,
      ...host.visitOptions(state),
    });
    const boundMs = visitBoundMs(policy, ['liveness']);
    const result = await boundedVisit(host.timers(), visit, boundMs, target, ['liveness'], () => host.abandoned(target, boundMs));
    const done = host.clock();
    if (!result.ok && host.cutByHandOver(state, result.error)) {
      state.due.liveness = Math.min(state.due.liveness, done);
      host.requeueAfterCut(state);
      return;
    }
    const outcome: PollOutcomeKind = result.ok ? 'success' : outcomeOfError(result.error) === 'auth' ? 'protocol' : outcomeOfError(result.error);
    host.record(target, outcome, result.latencyMs, done, leaseOf(state));
    if (!host.polled(target.nodeId)) return;
    const jitter = -host.random() * policy.jitter * interval;
    if (result.ok) {
      state.neverContacted = false;
      state.lastContactAt = done;
      state.consecutiveFailures = 0;
      state.due.liveness = Math.max(done, now + interval + jitter);
    } else {
      // Never latched: no credential was sent.
      state.consecutiveFailures += 1;
      state.due.liveness = Math.max(done, now + interval * backoffFactor(policy, state) + jitter);
    }
    host.enqueue(state);
  } finally {
    state.checking = false;
    host.ended();
  }
}
