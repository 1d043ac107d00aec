/**
 * A rotation's own stream (`rotation-<id>`) folded into its state: the frozen plan, approvals, the versions staged per
 * reference, the open wave, which BMCs were dispatched and how each settled, the sticky stops (pause, halt, abort) and
 * the retirement. Updated in place (a rotation of 25,000 BMCs holds as many outcomes) and returned. Pure.
 */
import { assertNever, isRotationStreamEvent, type RotationOutcome } from '../../events/index.js';
import { actorName, type SagaEvent } from '../saga-event.js';
import type { RotationPlan, RotationTarget } from './rotation-planner.js';

export type RotationStatus = 'none' | 'awaiting-approval' | 'running' | 'paused' | 'halted' | 'aborted' | 'completed';

export interface RotationState {
  rotationId: string;
  version: number;
  status: RotationStatus;
  plan: RotationPlan | undefined;
  targets: Map<string, RotationTarget>;
  waveMembers: string[][];
  approvers: string[];
  /** The version staged for each reference, with its digest. */
  staged: Map<string, { version: string; digest: string }>;
  openWave: number;
  currentWave: number;
  dispatched: Map<string, { wave: number; slotId: string }>;
  outcomes: Map<string, { wave: number; outcome: RotationOutcome }>;
  waveProgress: Array<{ outcomes: number; failures: number; drainedAt: number | undefined }>;
  failures: number;
  acknowledgedFailures: number;
  stopReason: string | undefined;
  skippedBeforeDispatch: Set<string>;
  retired: boolean;
  completedAt: number | undefined;
}

export function initialRotation(rotationId: string): RotationState {
  return {
    rotationId,
    version: 0,
    status: 'none',
    plan: undefined,
    targets: new Map(),
    waveMembers: [],
    approvers: [],
    staged: new Map(),
    openWave: -1,
    currentWave: 0,
    dispatched: new Map(),
    outcomes: new Map(),
    waveProgress: [],
    failures: 0,
    acknowledgedFailures: 0,
    stopReason: undefined,
    skippedBeforeDispatch: new Set(),
    retired: false,
    completedAt: undefined,
  };
}

export function rotationStream(rotationId: string): string {
  return `rotation-${rotationId}`;
}

const isFailure = (outcome: RotationOutcome): boolean => outcome === 'held' || outcome === 'kept';

export function evolveRotation(state: RotationState, event: SagaEvent): RotationState {
  state.version += 1;
  if (!isRotationStreamEvent(event)) return state;
  switch (event.type) {
    case 'CredentialRotationPlanned': {
      const { plan } = event.data;
      state.plan = plan;
      state.status = 'awaiting-approval';
      state.waveMembers = plan.waves.map(() => []);
      state.waveProgress = plan.waves.map(() => ({ outcomes: 0, failures: 0, drainedAt: undefined }));
      for (const target of plan.targets) {
        state.targets.set(target.nodeId, target);
        state.waveMembers[target.wave]!.push(target.nodeId);
      }
      break;
    }
    case 'CredentialRotationApproved': {
      const name = actorName(event.actor);
      if (!state.approvers.includes(name)) state.approvers = [...state.approvers, name];
      break;
    }
    case 'CredentialRotationStarted':
      if (state.status === 'awaiting-approval') state.status = 'running';
      break;
    case 'CredentialVersionStaged':
      state.staged.set(event.data.credentialRef, { version: event.data.version, digest: event.data.digest });
      break;
    case 'CredentialRotationWaveOpened':
      state.openWave = event.data.wave;
      state.currentWave = event.data.wave;
      break;
    case 'CredentialRotationNodeDispatched':
      state.dispatched.set(event.data.nodeId, { wave: event.data.wave, slotId: event.data.slotId });
      break;
    case 'CredentialRotationNodeSettled': {
      const data = event.data;
      if (state.outcomes.has(data.nodeId)) break;
      const progress = state.waveProgress[data.wave];
      state.outcomes.set(data.nodeId, { wave: data.wave, outcome: data.outcome });
      if (progress) {
        progress.outcomes += 1;
        if (isFailure(data.outcome)) {
          progress.failures += 1;
          state.failures += 1;
        }
        if (progress.outcomes >= (state.waveMembers[data.wave]?.length ?? 0)) progress.drainedAt = event.recordedAt;
      }
      break;
    }
    case 'CredentialRotationPaused':
      if (state.status === 'running') {
        state.status = 'paused';
        state.stopReason = event.data.reason;
      }
      break;
    case 'CredentialRotationHalted':
      if (state.status === 'running' || state.status === 'paused') {
        state.status = 'halted';
        state.stopReason = event.data.reason;
      }
      break;
    case 'CredentialRotationResumed':
      if (state.status === 'paused' || state.status === 'halted') {
        state.status = 'running';
        state.stopReason = undefined;
        state.acknowledgedFailures = state.failures;
      }
      break;
    case 'CredentialRotationAborted':
      if (state.status !== 'completed') {
        state.status = 'aborted';
        state.stopReason = event.data.reason;
      }
      break;
    case 'CredentialRotationNodeVerb': {
      const data = event.data;
      if (data.verb === 'skip' && !state.dispatched.has(data.nodeId)) state.skippedBeforeDispatch.add(data.nodeId);
      break;
    }
    case 'CredentialRotationWaveAdvanced':
      state.currentWave = event.data.to;
      break;
    case 'CredentialRotationCompleted':
      state.status = 'completed';
      state.completedAt = event.recordedAt;
      break;
    case 'CredentialVersionsRetired':
      state.retired = true;
      break;
    default:
      return assertNever(event);
  }
  return state;
}

export function rotationOutcomeCounts(state: Pick<RotationState, 'outcomes'>): Record<RotationOutcome, number> {
  const counts: Record<RotationOutcome, number> = { rotated: 0, kept: 0, held: 0, skipped: 0 };
  for (const { outcome } of state.outcomes.values()) counts[outcome] += 1;
  return counts;
}
