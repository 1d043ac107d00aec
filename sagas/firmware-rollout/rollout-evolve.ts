/**
 * The rollout's own stream (`rollout-<id>`) folded into its state: the frozen plan, approvals, the open wave,
 * which nodes were dispatched and what became of them, gate verdicts, and the sticky stops (pause, halt, abort).
 * Updated in place (a rollout of 25,000 nodes holds as many outcomes) and returned.
 */
import { assertNever, isRolloutStreamEvent } from '../../events/index.js';
import type { NodeOutcome } from '../../events/index.js';
import { actorName, type SagaEvent } from '../saga-event.js';
import type { RolloutPlan, RolloutTarget } from './rollout-planner.js';

export type RolloutStatus = 'none' | 'awaiting-approval' | 'running' | 'paused' | 'halted' | 'aborted' | 'completed';

export interface RolloutState {
  rolloutId: string;
  version: number;
  status: RolloutStatus;
  plan: RolloutPlan | undefined;
  targets: Map<string, RolloutTarget>;
  /** Node ids per wave, in the frozen dispatch order. */
  waveMembers: string[][];
  approvers: string[];
  cap: number;
  /** The wave dispatch may draw from (-1 before the first is opened). */
  openWave: number;
  /** The wave the rollout is on (opened or about to be). */
  currentWave: number;
  dispatched: Map<string, { wave: number; slotId: string }>;
  outcomes: Map<string, { wave: number; outcome: NodeOutcome }>;
  /** Per wave: outcomes recorded, failures among them, and when the last one was recorded. */
  waveProgress: Array<{ outcomes: number; failures: number; drainedAt: number | undefined }>;
  failures: number;
  /** Failures already acknowledged by a resume (a halt fires again only on new ones). */
  acknowledgedFailures: number;
  gate: Map<number, { verdict: 'pass' | 'fail' | 'inconclusive'; at: number; inconclusiveInARow: number }>;
  stopReason: string | undefined;
  skippedBeforeDispatch: Set<string>;
  completedAt: number | undefined;
}

export function initialRollout(rolloutId: string): RolloutState {
  return {
    rolloutId,
    version: 0,
    status: 'none',
    plan: undefined,
    targets: new Map(),
    waveMembers: [],
    approvers: [],
    cap: 1,
    openWave: -1,
    currentWave: 0,
    dispatched: new Map(),
    outcomes: new Map(),
    waveProgress: [],
    failures: 0,
    acknowledgedFailures: 0,
    gate: new Map(),
    stopReason: undefined,
    skippedBeforeDispatch: new Set(),
    completedAt: undefined,
  };
}

export function rolloutStream(rolloutId: string): string {
  return `rollout-${rolloutId}`;
}

export function evolveRollout(state: RolloutState, event: SagaEvent): RolloutState {
  state.version += 1;
  // Events of other types in the stream count toward its version only.
  if (!isRolloutStreamEvent(event)) return state;
  switch (event.type) {
    case 'RolloutPlanned': {
      const { plan } = event.data;
      state.plan = plan;
      state.status = 'awaiting-approval';
      state.cap = plan.capPerSite;
      state.waveMembers = plan.waves.map(() => []);
      state.waveProgress = plan.waves.map(() => ({ outcomes: 0, failures: 0, drainedAt: undefined }));
      for (const target of plan.targets) {
        state.targets.set(target.nodeId, target);
        state.waveMembers[target.wave]!.push(target.nodeId);
      }
      break;
    }
    case 'RolloutApproved': {
      const name = actorName(event.actor);
      if (!state.approvers.includes(name)) state.approvers = [...state.approvers, name];
      break;
    }
    case 'RolloutStarted':
      if (state.status === 'awaiting-approval') state.status = 'running';
      break;
    case 'WaveOpened':
      state.openWave = event.data.wave;
      state.currentWave = state.openWave;
      break;
    case 'NodeDispatched': {
      const data = event.data;
      state.dispatched.set(data.nodeId, { wave: data.wave, slotId: data.slotId });
      break;
    }
    case 'NodeOutcomeRecorded': {
      const data = event.data;
      if (state.outcomes.has(data.nodeId)) break;
      state.outcomes.set(data.nodeId, { wave: data.wave, outcome: data.outcome });
      const progress = state.waveProgress[data.wave];
      if (progress) {
        progress.outcomes += 1;
        if (data.outcome === 'failed' || data.outcome === 'quarantined') {
          progress.failures += 1;
          state.failures += 1;
        }
        if (progress.outcomes >= (state.waveMembers[data.wave]?.length ?? 0)) progress.drainedAt = event.recordedAt;
      }
      break;
    }
    case 'GateEvaluated': {
      const data = event.data;
      const previous = state.gate.get(data.wave);
      state.gate.set(data.wave, {
        verdict: data.verdict,
        at: event.recordedAt,
        inconclusiveInARow: data.verdict === 'inconclusive' ? (previous?.inconclusiveInARow ?? 0) + 1 : 0,
      });
      break;
    }
    case 'WaveAdvanced':
      state.currentWave = event.data.to;
      break;
    case 'RolloutPaused':
      if (state.status === 'running') {
        state.status = 'paused';
        state.stopReason = event.data.reason;
      }
      break;
    case 'RolloutHalted':
      if (state.status === 'running' || state.status === 'paused') {
        state.status = 'halted';
        state.stopReason = event.data.reason;
      }
      break;
    case 'RolloutResumed':
      if (state.status === 'paused' || state.status === 'halted') {
        state.status = 'running';
        state.stopReason = undefined;
        state.acknowledgedFailures = state.failures;
        // A gate that was inconclusive is evaluated afresh.
        const gate = state.gate.get(state.currentWave);
        if (gate?.verdict === 'inconclusive') state.gate.delete(state.currentWave);
      }
      break;
    case 'RolloutAborted':
      if (state.status !== 'completed') {
        state.status = 'aborted';
        state.stopReason = event.data.reason;
      }
      break;
    case 'RolloutCapTightened':
      state.cap = Math.min(state.cap, event.data.cap);
      break;
    case 'NodeVerbApplied': {
      const data = event.data;
      if (data.verb === 'skip' && !state.dispatched.has(data.nodeId)) state.skippedBeforeDispatch.add(data.nodeId);
      break;
    }
    case 'RolloutCompleted':
      state.status = 'completed';
      state.completedAt = event.recordedAt;
      break;
    default:
      return assertNever(event);
  }
  return state;
}

/** Counts of outcomes, for the status view and `RolloutCompleted`. */
export function outcomeCounts(state: RolloutState): Record<NodeOutcome, number> {
  const counts: Record<NodeOutcome, number> = { updated: 0, 'already-at-target': 0, failed: 0, quarantined: 0, skipped: 0 };
  for (const { outcome } of state.outcomes.values()) counts[outcome] += 1;
  return counts;
}
