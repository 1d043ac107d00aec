/**
 * Operators' verbs on a credential rotation (approve, pause, resume, abort, skip a BMC) and its request, decided from
 * the rotation's state: each records one event with the principal who asked, or is refused with a typed reason (a
 * verb the state does not allow, a stale revision, a rotation that does not exist). Pure: imports no I/O.
 */
import { assertNever, type DataOf, type EventShape, type FleetEvent } from '../../events/index.js';
import { record, refuse, type Decider, type Decision } from '../decider.js';
import type { RolloutRefusal } from '../firmware-rollout/rollout-verb-decide.js';
import { evolveRotation, initialRotation, type RotationState } from './rotation-evolve.js';
import type { RotationPlan } from './rotation-planner.js';

export type RotationVerb =
  | { verb: 'approve'; reason: string }
  | { verb: 'pause'; reason: string }
  | { verb: 'resume'; reason: string }
  | { verb: 'abort'; reason: string }
  | { verb: 'skip'; nodeId: string; reason: string };

export type RotationOperatorCommand = (RotationVerb & { expectedRevision?: number }) | { verb: 'request'; plan: RotationPlan };

type Decided = Decision<FleetEvent, RolloutRefusal>;

export function decideRotationCommand(command: RotationOperatorCommand, state: RotationState): Decided {
  const { rotationId } = state;
  if (command.verb === 'request') {
    if (state.version > 0) return refuse({ code: 'SAGA_EXISTS', message: `rotation ${rotationId} already exists`, details: { rolloutId: rotationId } });
    if (command.plan.targets.length === 0) return refuse({ code: 'SAGA_INVALID_REQUEST', message: 'the selector matches no BMC that may be rotated', details: { excluded: command.plan.excluded.length } });
    return record({ type: 'CredentialRotationPlanned', data: { rotationId, plan: command.plan } as DataOf<'CredentialRotationPlanned'> });
  }
  if (!state.plan) return refuse({ code: 'SAGA_NOT_FOUND', message: `no rotation ${rotationId}`, details: { rolloutId: rotationId } });
  if (command.expectedRevision !== undefined && command.expectedRevision !== state.version) {
    return refuse({ code: 'SAGA_STALE_REVISION', message: `rotation ${rotationId} is at revision ${state.version}, not ${command.expectedRevision}`, details: { expected: command.expectedRevision, actual: state.version } });
  }
  const invalid = (why: string): Decided => refuse({ code: 'SAGA_INVALID_STATE', message: `cannot ${command.verb} rotation ${rotationId}: ${why}`, details: { status: state.status } });
  switch (command.verb) {
    case 'approve':
      if (state.status !== 'awaiting-approval') return invalid(`it is ${state.status}`);
      return record({ type: 'CredentialRotationApproved', data: { rotationId, reason: command.reason } });
    case 'pause':
      if (state.status !== 'running') return invalid(`it is ${state.status}`);
      return record({ type: 'CredentialRotationPaused', data: { rotationId, reason: 'operator', detail: command.reason } });
    case 'resume':
      if (state.status !== 'paused' && state.status !== 'halted') return invalid(`it is ${state.status}`);
      return record({ type: 'CredentialRotationResumed', data: { rotationId, reason: command.reason, acknowledged: state.stopReason ?? 'none' } });
    case 'abort':
      if (state.status === 'completed' || state.status === 'aborted') return invalid(`it is already ${state.status}`);
      return record({ type: 'CredentialRotationAborted', data: { rotationId, reason: command.reason } });
    case 'skip':
      if (!state.targets.has(command.nodeId)) return refuse({ code: 'SAGA_NOT_FOUND', message: `node ${command.nodeId} is not a target of rotation ${rotationId}`, details: { nodeId: command.nodeId } });
      if (state.dispatched.has(command.nodeId)) return invalid(`node ${command.nodeId} was dispatched already (its step ends by itself; a held BMC is brought back by a new rotation of it)`);
      return record({ type: 'CredentialRotationNodeVerb', data: { rotationId, nodeId: command.nodeId, verb: 'skip', reason: command.reason } });
    default:
      return assertNever(command, 'rotation verb');
  }
}

/** The decider of one rotation's operator commands (`rotation-<rotationId>`). */
export function rotationCommandDecider(rotationId: string): Decider<RotationOperatorCommand, FleetEvent, RotationState, RolloutRefusal> {
  return {
    initialState: () => initialRotation(rotationId),
    evolve: (state, event, placement) => evolveRotation(state, { ...(event as EventShape), actor: placement.actor, recordedAt: placement.recordedAt }),
    decide: decideRotationCommand,
  };
}
