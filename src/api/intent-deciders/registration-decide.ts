/**
 * Registering a node, decided from its `node-<nodeId>` stream: the same registration again (same site, rack, BMC
 * endpoint and interval) while the node is registered records nothing and is answered with the position of the
 * registration in force; a registration that changes any of them, the first one, or one after a decommission (which
 * brings the node back) records `NodeRegistered`. Pure: imports no I/O.
 */
import type { EventOf, FleetEvent } from '../../../events/index.js';
import { record, unchanged, type Decider, type Decision, type Placement } from '../../../sagas/index.js';
import { sameContent } from './same-content.js';

export type NodeRegistration = EventOf<'NodeRegistered'>['data'];

export interface RegistrationState {
  /** The registration in force and where it was recorded; undefined: never registered, or decommissioned since. */
  readonly inForce: { readonly data: NodeRegistration; readonly position: number } | undefined;
}

export function evolveRegistration(state: RegistrationState, event: FleetEvent, { position }: Placement): RegistrationState {
  // Only these two of the stream's events bear on a registration; observations and other intents leave it be.
  if (event.type === 'NodeRegistered') return { inForce: { data: event.data, position } };
  if (event.type === 'NodeDecommissioned') return { inForce: undefined };
  return state;
}

export function decideRegistration(command: NodeRegistration, state: RegistrationState): Decision<FleetEvent, never> {
  if (state.inForce && sameContent(state.inForce.data, command)) return unchanged(state.inForce.position);
  return record<FleetEvent>({ type: 'NodeRegistered', data: command });
}

export const registrationDecider: Decider<NodeRegistration, FleetEvent, RegistrationState> = {
  initialState: () => ({ inForce: undefined }),
  evolve: evolveRegistration,
  decide: decideRegistration,
};
