/**
 * Operators' commands on a node's provisioning (start it, release it from quarantine at a named stage, abandon it),
 * decided from the provisioning stream's state: one event each, or a typed refusal. Run by `handleCommand`. Pure:
 * imports no I/O.
 */
import { assertNever, type DataOf, type EventShape, type FleetEvent } from '../../events/index.js';
import { record, refuse, type Decider, type Decision } from '../decider.js';
import { evolveProvision, initialProvision, type ProvisionState } from './provision-evolve.js';

export type ProvisionResumeStage = DataOf<'QuarantineReleased'>['resumeAt'];

export type ProvisionCommand =
  | { verb: 'start'; spec: DataOf<'ProvisioningStarted'> }
  | { verb: 'release'; resumeAt: ProvisionResumeStage; reason: string }
  | { verb: 'abandon'; reason: string };

export type ProvisionRefusal =
  | { code: 'SAGA_NOT_FOUND'; message: string; details: { nodeId: string } }
  | { code: 'SAGA_EXISTS'; message: string; details: { nodeId: string } }
  | { code: 'SAGA_INVALID_STATE'; message: string; details: { status: string } };

export function decideProvisionCommand(command: ProvisionCommand, state: ProvisionState): Decision<FleetEvent, ProvisionRefusal> {
  const { nodeId } = state;
  if (command.verb === 'start') {
    if (state.version > 0) return refuse({ code: 'SAGA_EXISTS', message: `node ${nodeId} is already being provisioned`, details: { nodeId } });
    return record({ type: 'ProvisioningStarted', data: command.spec });
  }
  if (state.stage === 'none') return refuse({ code: 'SAGA_NOT_FOUND', message: `node ${nodeId} is not being provisioned`, details: { nodeId } });
  switch (command.verb) {
    case 'release':
      if (state.stage !== 'quarantined') return refuse({ code: 'SAGA_INVALID_STATE', message: `node ${nodeId} is ${state.stage}, not quarantined`, details: { status: state.stage } });
      return record({ type: 'QuarantineReleased', data: { nodeId, resumeAt: command.resumeAt, reason: command.reason } });
    case 'abandon':
      if (state.stage === 'ready' || state.stage === 'abandoned') return refuse({ code: 'SAGA_INVALID_STATE', message: `node ${nodeId} is already ${state.stage}`, details: { status: state.stage } });
      return record({ type: 'ProvisioningAbandoned', data: { nodeId, reason: command.reason } });
    default:
      return assertNever(command, 'provisioning command');
  }
}

/** The decider of one node's provisioning commands (`provision-<nodeId>`). */
export function provisionCommandDecider(nodeId: string): Decider<ProvisionCommand, FleetEvent, ProvisionState, ProvisionRefusal> {
  return {
    initialState: () => initialProvision(nodeId),
    evolve: (state, event, placement) => evolveProvision(state, { ...(event as EventShape), actor: placement.actor, recordedAt: placement.recordedAt }),
    decide: decideProvisionCommand,
  };
}
