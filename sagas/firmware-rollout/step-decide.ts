/**
 * What one node's update step does next, from its state and the time: a pure function, so every path is tested
 * without a BMC and a restarted engine makes the same choice the dead one would have.
 *
 * The rules that make kill -9 safe:
 * - `submit` is only ever chosen from `preflighted` or `retry-wait`, each of which exists only before an intent
 *   for the new attempt is recorded; an intent with no recorded submission (`intent`) leads to `probe`, never to
 *   a second request under the same key;
 * - a task's outcome is advisory: only `verifyReads` consecutive reads of the target version complete a node;
 * - an unclear outcome keeps the node (and its slot) until the BMC is read or an operator acts: `probe`, then a
 *   named hold.
 */
import { compareFirmwareVersions, dialectVersionRules } from '../../src/firmware/index.js';
import type { RolloutPlan } from './rollout-planner.js';

/**
 * Whether a version read from a BMC is the target. Vendors decorate what they report (`iLO 5 v2.72` on the Manager,
 * `2.72 Sep 04 2022` in the inventory), so equality of strings is not enough: the dialects' version rules are
 * tried, then the target as a whole token of the reading (`v9.90.10.01` holds `9.90.10.01`; `19.90.10.01` does not).
 */
export function versionMatches(observed: string | null | undefined, target: string, component = 'BMC'): boolean {
  if (observed === null || observed === undefined || observed === '') return false;
  if (observed === target) return true;
  for (const dialect of Object.keys(dialectVersionRules)) if (compareFirmwareVersions(dialect, component, observed, target).equal) return true;
  const at = observed.indexOf(target);
  for (let index = at; index >= 0; index = observed.indexOf(target, index + 1)) {
    const before = index === 0 ? '' : observed[index - 1]!;
    const after = observed[index + target.length] ?? '';
    if (!/[0-9.]/.test(before) && !/[0-9A-Za-z.]/.test(after === '' ? '' : after)) return true;
  }
  return false;
}
import { terminalPhases, type StepState } from './step-evolve.js';

export interface StepTiming {
  /** Between two reads of the task monitor. */
  pollIntervalMs: number;
  /** Between two version reads while verifying or waiting for a reset to finish. */
  readIntervalMs: number;
  /** Between two reconcile probes. */
  probeIntervalMs: number;
  /** Probes of an unreachable BMC before the step is held. */
  maxProbes: number;
  /** Reads of another version after the task ended (or after activation) before it counts as not applied. */
  maxMismatchedReads: number;
  /**
   * And the time those reads must span, from the last sign of work (the task's end, the reset asked for): a BMC
   * that activates by rebooting itself reports the old version until it is back, however often it is read.
   */
  settleMs: number;
  /** Wait before a new attempt. */
  retryBackoffMs: number;
  /**
   * Attempts that left no trace on the BMC (killed between intent and request, or a request the BMC dropped) are
   * retried without spending the retry budget, this many times; then the step is held for an operator.
   */
  maxUntracedAttempts: number;
}

export const defaultStepTiming: StepTiming = {
  pollIntervalMs: 5_000,
  readIntervalMs: 10_000,
  probeIntervalMs: 15_000,
  maxProbes: 20,
  maxMismatchedReads: 6,
  settleMs: 600_000,
  retryBackoffMs: 60_000,
  maxUntracedAttempts: 5,
};

/** The deadline of one request to a BMC during an update step, unless the rollout's policy sets another. */
export const defaultRequestTimeoutMs = 15_000;

/** The timing a step runs with: the defaults, then the rollout's policy, then an engine's override (tests, benches). */
export function stepTimingOf(policy: Partial<StepTiming> | undefined, override: Partial<StepTiming> | undefined): StepTiming {
  const defined = <T extends object>(value: T | undefined): Partial<T> => Object.fromEntries(Object.entries(value ?? {}).filter(([, v]) => v !== undefined)) as Partial<T>;
  return { ...defaultStepTiming, ...defined(policy), ...defined(override) };
}

export type StepAction =
  | { kind: 'start' }
  | { kind: 'preflight' }
  | { kind: 'submit'; attempt: number; key: string }
  | { kind: 'poll-task'; taskMonitor: string }
  | { kind: 'activate' }
  | { kind: 'read-version' }
  | { kind: 'verified'; version: string; reads: number }
  | { kind: 'probe' }
  | { kind: 'succeed'; outcome: 'updated' | 'already-at-target'; version: string }
  | { kind: 'retry'; attempt: number; notBefore: number; cause: string }
  | { kind: 'fail'; cause: string }
  | { kind: 'hold'; hold: 'reconcile-required' | 'deadline-exceeded'; reason: string }
  | { kind: 'held' }
  | { kind: 'done' };

export interface StepContext {
  rolloutId: string;
  nodeId: string;
  plan: Pick<RolloutPlan, 'firmware' | 'verifyReads' | 'retryBudget' | 'stepDeadlineMs' | 'quietPeriodMs'>;
  timing: StepTiming;
}

export function idempotencyKey(context: StepContext, attempt: number): string {
  const { firmware } = context.plan;
  return `${context.rolloutId}:${context.nodeId}:${firmware.component}:${firmware.version}:${attempt}`;
}

/** The next action, and the earliest time it is due (`due` ≤ `now` means now). */
export function decideStep(state: StepState, now: number, context: StepContext): { action: StepAction; due: number } {
  const { plan, timing } = context;
  const at = (action: StepAction, due = now): { action: StepAction; due: number } => ({ action, due });
  if (terminalPhases.has(state.phase)) return at({ kind: 'done' });
  if (state.phase === 'held') return at({ kind: 'held' });
  if (state.phase === 'new') return at({ kind: 'start' });
  if (state.startedAt !== undefined && now - state.startedAt > plan.stepDeadlineMs) {
    return at({ kind: 'hold', hold: 'deadline-exceeded', reason: `in ${state.phase} past the step deadline of ${plan.stepDeadlineMs} ms` });
  }
  // The budget counts attempts the BMC saw; one that left no trace is retried apart, up to its own bound.
  const spent = state.attempt - state.untracedAttempts;
  const retryOrFail = (cause: string): { action: StepAction; due: number } => {
    // The BMC called the request itself wrong: the same request would be refused again.
    if (state.permanentRefusal) return at({ kind: 'fail', cause: `${cause} (refused as permanent by the BMC: not retried; attempt ${spent} of ${1 + plan.retryBudget})` });
    if (state.lastAttemptUntraced) {
      return state.untracedAttempts <= timing.maxUntracedAttempts
        ? at({ kind: 'retry', attempt: state.attempt + 1, notBefore: now + timing.retryBackoffMs, cause })
        : at({ kind: 'hold', hold: 'reconcile-required', reason: `${state.untracedAttempts} requests left no trace on the BMC: ${cause}` });
    }
    return spent < 1 + plan.retryBudget
      ? at({ kind: 'retry', attempt: state.attempt + 1, notBefore: now + timing.retryBackoffMs, cause })
      : at({ kind: 'fail', cause: `${cause} (attempt ${spent} of ${1 + plan.retryBudget})` });
  };

  switch (state.phase) {
    case 'started':
      if (state.matchingReads > 0) return at({ kind: 'succeed', outcome: 'already-at-target', version: plan.firmware.version });
      return at({ kind: 'preflight' });
    case 'preflighted':
      return at({ kind: 'submit', attempt: 1, key: idempotencyKey(context, 1) });
    case 'retry-wait': {
      const attempt = state.attempt + 1;
      return at({ kind: 'submit', attempt, key: idempotencyKey(context, attempt) }, state.notBefore ?? now);
    }
    case 'intent':
      // Only after a crash between the intent and the answer: read the BMC, never send again blindly.
      return at({ kind: 'probe' });
    case 'reconcile':
      if (state.probes >= timing.maxProbes) return at({ kind: 'hold', hold: 'reconcile-required', reason: `outcome still unclear after ${state.probes} probes: ${state.cause ?? ''}` });
      return at({ kind: 'probe' }, state.probes === 0 || state.lastProbeAt === undefined ? now : state.lastProbeAt + timing.probeIntervalMs);
    case 'retry-needed':
      return retryOrFail(state.cause ?? 'the update failed');
    case 'submitted': {
      const ended = state.taskState === 'Completed';
      if (!ended) return at({ kind: 'poll-task', taskMonitor: state.taskMonitor! });
      if (state.needsActivation && state.activationAt === undefined) return at({ kind: 'activate' });
      return verify(state, now, context, retryOrFail);
    }
    case 'activating':
    case 'verifying':
      return verify(state, now, context, retryOrFail);
    default:
      return at({ kind: 'held' });
  }
}

function verify(
  state: StepState,
  now: number,
  context: StepContext,
  retryOrFail: (cause: string) => { action: StepAction; due: number },
): { action: StepAction; due: number } {
  const { plan, timing } = context;
  // Verified and succeeded are appended together: the N reads are the proof, nothing else is awaited.
  if (state.matchingReads >= plan.verifyReads) return { action: { kind: 'verified', version: plan.firmware.version, reads: state.matchingReads }, due: now };
  if (state.mismatchedReads >= timing.maxMismatchedReads && now - (state.lastActivityAt ?? 0) >= timing.settleMs) {
    // The task ended but the version did not change: activate once if that was not done, else the update did not take.
    if (state.activationAt === undefined) return { action: { kind: 'activate' }, due: now };
    return retryOrFail(`version still ${state.lastVersion ?? 'unreadable'} after the task ended (${state.taskState ?? 'no task'}, ${state.taskStatus ?? ''}) and the reset`);
  }
  return { action: { kind: 'read-version' }, due: state.readNo === 0 || state.lastReadAt === undefined ? now : state.lastReadAt + timing.readIntervalMs };
}

/** The verdict of a reconcile probe: the only way an unknown outcome moves on. */
export function probeVerdict(
  state: StepState,
  observed: { reachable: boolean; version: string | null; matchingTask: string | null },
  now: number,
  context: StepContext,
): 'at-target' | 'adopt-task' | 'not-accepted' | 'attempt-lost' | 'wait' | 'ambiguous' {
  if (!observed.reachable) return state.probes + 1 >= context.timing.maxProbes ? 'ambiguous' : 'wait';
  if (versionMatches(observed.version, context.plan.firmware.version, context.plan.firmware.component)) return 'at-target';
  if (observed.matchingTask) return 'adopt-task';
  // Quiet means quiet since the last sign of work, not since the intent: a task that vanished a moment ago may be
  // a BMC applying the image and about to reset.
  const since = Math.max(state.intentAt ?? 0, state.lastActivityAt ?? 0, state.startedAt ?? 0) || now;
  // An attempt the BMC acknowledged (a 2xx, a task reading) was seen: if it is now gone without the version, it is
  // lost, and that spends the budget; only an attempt with no sign of the BMC ever having seen it is not accepted.
  if (now - since >= context.plan.quietPeriodMs) return state.acknowledged ? 'attempt-lost' : 'not-accepted';
  return 'wait';
}
