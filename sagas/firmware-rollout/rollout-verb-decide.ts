/**
 * Operators' verbs on a rollout (approve, pause, resume, abort, advance, tighten the cap, a node verb) and its
 * request, decided from the rollout's state: each records one event, or is refused with a typed reason (a verb the
 * state does not allow, a stale revision, a rollout that does not exist). Run by `handleCommand`, which appends with
 * the version the decision was made on. Pure: imports no I/O.
 */
import { assertNever, type DataOf, type EventShape, type FleetEvent } from '../../events/index.js';
import { record, refuse, type Decider, type Decision } from '../decider.js';
import { evolveRollout, initialRollout, type RolloutState } from './rollout-evolve.js';
import type { RolloutPlan } from './rollout-planner.js';
import { evolveStep, initialStep, type StepState } from './step-evolve.js';

export type RolloutVerb =
  | { verb: 'approve'; reason: string }
  | { verb: 'pause'; reason: string }
  | { verb: 'resume'; reason: string }
  | { verb: 'abort'; reason: string }
  | { verb: 'advance'; reason: string }
  | { verb: 'tighten-cap'; cap: number; reason: string }
  | { verb: 'node'; nodeId: string; action: 'retry' | 'skip' | 'release' | 'quarantine'; reason: string };

/** A verb with the rollout revision (stream version) the operator saw, if they gave one; or the request that plans it. */
export type RolloutOperatorCommand = (RolloutVerb & { expectedRevision?: number }) | { verb: 'request'; plan: RolloutPlan };

/** Why a rollout command was refused: the codes of `SagaError`, each with its message and data. */
export type RolloutRefusal =
  | { code: 'SAGA_NOT_FOUND'; message: string; details: { rolloutId: string } | { nodeId: string } }
  | { code: 'SAGA_EXISTS'; message: string; details: { rolloutId: string } }
  | { code: 'SAGA_INVALID_REQUEST'; message: string; details: { excluded: number } }
  | { code: 'SAGA_STALE_REVISION'; message: string; details: { expected: number; actual: number } }
  | { code: 'SAGA_INVALID_STATE'; message: string; details: { status: string } };

type Decided = Decision<FleetEvent, RolloutRefusal>;

export function decideRolloutCommand(command: RolloutOperatorCommand, state: RolloutState): Decided {
  const { rolloutId } = state;
  if (command.verb === 'request') {
    if (state.version > 0) return refuse({ code: 'SAGA_EXISTS', message: `rollout ${rolloutId} already exists`, details: { rolloutId } });
    if (command.plan.targets.length === 0) return refuse({ code: 'SAGA_INVALID_REQUEST', message: 'the selector matches no node that may be updated', details: { excluded: command.plan.excluded.length } });
    return record({ type: 'RolloutPlanned', data: { rolloutId, plan: command.plan } as DataOf<'RolloutPlanned'> });
  }
  if (!state.plan) return refuse({ code: 'SAGA_NOT_FOUND', message: `no rollout ${rolloutId}`, details: { rolloutId } });
  if (command.expectedRevision !== undefined && command.expectedRevision !== state.version) {
    return refuse({ code: 'SAGA_STALE_REVISION', message: `rollout ${rolloutId} is at revision ${state.version}, not ${command.expectedRevision}`, details: { expected: command.expectedRevision, actual: state.version } });
  }
  const invalid = (why: string): Decided => refuse({ code: 'SAGA_INVALID_STATE', message: `cannot ${command.verb} rollout ${rolloutId}: ${why}`, details: { status: state.status } });
  switch (command.verb) {
    case 'approve':
      if (state.status !== 'awaiting-approval') return invalid(`it is ${state.status}`);
      return record({ type: 'RolloutApproved', data: { rolloutId, reason: command.reason } });
    case 'pause':
      if (state.status !== 'running') return invalid(`it is ${state.status}`);
      return record({ type: 'RolloutPaused', data: { rolloutId, reason: 'operator', detail: command.reason } });
    case 'resume':
      if (state.status !== 'paused' && state.status !== 'halted') return invalid(`it is ${state.status}`);
      return record({ type: 'RolloutResumed', data: { rolloutId, reason: command.reason, acknowledged: state.stopReason ?? 'none' } });
    case 'abort':
      if (state.status === 'completed' || state.status === 'aborted') return invalid(`it is already ${state.status}`);
      return record({ type: 'RolloutAborted', data: { rolloutId, reason: command.reason } });
    case 'advance': {
      if (state.status !== 'running') return invalid(`it is ${state.status}`);
      const wave = state.currentWave;
      if (state.gate.get(wave)?.verdict !== 'pass') return invalid(`the gate after wave ${wave} has not passed`);
      if (wave + 1 >= state.waveMembers.length) return invalid('it is on its last wave');
      return record({ type: 'WaveAdvanced', data: { rolloutId, from: wave, to: wave + 1, by: 'operator' } });
    }
    case 'tighten-cap':
      if (command.cap >= state.cap) return invalid(`a cap is only tightened live (now ${state.cap}, asked ${command.cap}); loosening needs a new plan`);
      return record({ type: 'RolloutCapTightened', data: { rolloutId, cap: command.cap, previous: state.cap, reason: command.reason } });
    case 'node':
      if (!state.targets.has(command.nodeId)) return refuse({ code: 'SAGA_NOT_FOUND', message: `node ${command.nodeId} is not a target of rollout ${rolloutId}`, details: { nodeId: command.nodeId } });
      return record({ type: 'NodeVerbApplied', data: { rolloutId, nodeId: command.nodeId, verb: command.action, reason: command.reason } });
    default:
      return assertNever(command, 'rollout verb');
  }
}

/** The decider of one rollout's operator commands (`rollout-<rolloutId>`). */
export function rolloutCommandDecider(rolloutId: string): Decider<RolloutOperatorCommand, FleetEvent, RolloutState, RolloutRefusal> {
  return {
    initialState: () => initialRollout(rolloutId),
    // The rollout's evolve updates its state in place and reads the actor (approvals count distinct approvers).
    evolve: (state, event, placement) => evolveRollout(state, { ...(event as EventShape), actor: placement.actor, recordedAt: placement.recordedAt }),
    decide: decideRolloutCommand,
  };
}

/** An operator's node verb as it reaches the node's step stream (`fwstep-…`), once the node was dispatched. */
export type StepOperatorVerb = DataOf<'StepOperatorAction'>;

/** The decider of a step stream's operator actions: every action is recorded (the step's own decider acts on it). */
export const stepActionDecider: Decider<StepOperatorVerb, FleetEvent, StepState> = {
  initialState: initialStep,
  evolve: (state, event, placement) => evolveStep(state, { ...(event as EventShape), actor: placement.actor, recordedAt: placement.recordedAt }),
  decide: (action) => record({ type: 'StepOperatorAction', data: action }),
};
