/**
 * A liveness check where push answers for it. A node whose stream proves contact (a heartbeat within its grace) and
 * whose audit is not due is checked without a request: the contact is recorded as the check's outcome, at latency 0.
 * A node due for discovery, re-subscription or audit gets a push visit in the check's session instead of the plain
 * check; it is contact too. Everything else (no stream offered, a BMC with too few sessions, a fallback waiting, a
 * push visit that failed) goes to the plain check, so a node without trustworthy push is polled exactly as before.
 */
import type { PollOutcomeKind } from '../../../events/index.js';
import type { BmcTransports } from '../bmc-transports.js';
import type { PollPolicy } from '../poll-policy.js';
import type { PollerOptions } from '../poller-options.js';
import type { Credential, PollTarget } from '../poll-target.js';
import type { TargetState } from '../target-state.js';
import { sessionLimit } from '../target-limits.js';
import { PushKeeper, type PushVisitGuards } from './push-keeper.js';

export interface PushCheckHost {
  keeper: PushKeeper;
  clock(): number;
  sessionLimit(target: PollTarget): number;
  record(state: TargetState, outcome: PollOutcomeKind, latencyMs: number, at: number): void;
  enqueue(state: TargetState): void;
  /** The node's visit guards (its shard's lease, its rotation fence): asked before every request of a push visit. */
  guards(state: TargetState): PushVisitGuards;
  log?: (message: string, fields?: Record<string, unknown>) => void;
}

/** The poller's side of push: its keeper (streams, audits) wired to the poller's targets, outcomes and queues. */
export function pollerPush(
  options: PollerOptions,
  policy: PollPolicy,
  transports: BmcTransports,
  states: ReadonlyMap<string, TargetState>,
  poller: Pick<PushCheckHost, 'clock' | 'record' | 'enqueue' | 'guards'>,
): PushCheckHost | undefined {
  if (!options.push) return undefined;
  const limitOf = (target: PollTarget): number => sessionLimit(policy, target);
  const keeper = new PushKeeper({
    store: options.store,
    policy: options.push,
    requestTimeoutMs: policy.requestTimeoutMs,
    clock: poller.clock,
    dispatcherFor: (target) => transports.connectionFor(target, limitOf(target))?.dispatcher,
    // The node's push is no longer trusted: its liveness check is due now.
    onFallback: (nodeId) => {
      const state = states.get(nodeId);
      if (!state) return;
      state.due.liveness = Math.min(state.due.liveness, poller.clock());
      poller.enqueue(state);
    },
    ...(options.log ? { log: options.log } : {}),
  });
  return { keeper, sessionLimit: limitOf, ...poller, ...(options.log ? { log: options.log } : {}) };
}

/** True when push answered for this check; false when the plain check must run. */
export async function pushCheck(host: PushCheckHost, state: TargetState, credential: Credential, now: number): Promise<boolean> {
  const { target } = state;
  const { keeper } = host;
  if (state.neverContacted || state.model === undefined || (target.protocol ?? 'redfish') !== 'redfish') return false;
  if (host.sessionLimit(target) < keeper.policy.minSessionLimit) return false;
  const interval = target.expectedIntervalS * 1000;
  const contact = keeper.contactAt(target.nodeId, now);
  if (contact !== undefined && !keeper.auditDue(target.nodeId, now)) {
    // Recorded at the stream's last record: the contact it proves, not the moment it was looked at.
    answered(host, state, 0, contact, now + interval);
    return true;
  }
  if (!keeper.wantsVisit(target.nodeId, now)) return false;
  const started = performance.now();
  try {
    await keeper.visit(target, credential, now, host.guards(state));
  } catch (error) {
    host.log?.('a push visit failed: the node is checked as usual', { nodeId: target.nodeId, error: String(error) });
    return false;
  }
  const done = host.clock();
  answered(host, state, Math.round(performance.now() - started), done, done + interval);
  return true;
}

/** A contact at `at` is recorded as the check's outcome; the next check is due at `nextDue` (never in the past). */
function answered(host: PushCheckHost, state: TargetState, latencyMs: number, at: number, nextDue: number): void {
  host.record(state, 'success', latencyMs, at);
  state.lastContactAt = at;
  state.consecutiveFailures = 0;
  state.sessionLimitStreak = 0;
  state.due.liveness = nextDue;
  host.enqueue(state);
}
