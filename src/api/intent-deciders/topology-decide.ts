/**
 * Declaring a rack's topology, decided from its `rack-<rack>` stream: the same PDUs, ToR switches and CDU again (in
 * any order) records nothing and is answered with the position of the declaration in force; any other declaration
 * records `TopologyDeclared`. Pure: imports no I/O.
 */
import type { EventOf, FleetEvent } from '../../../events/index.js';
import { record, unchanged, type Decider, type Decision, type Placement } from '../../../sagas/index.js';
import { sameContent } from './same-content.js';

export type RackTopology = EventOf<'TopologyDeclared'>['data'];

export interface TopologyState {
  readonly declared: { readonly data: RackTopology; readonly position: number } | undefined;
}

/** A declaration as content: the feeds of a rack are sets, their order is not what was declared. */
const asContent = (topology: RackTopology) => ({ ...topology, pdu: [...topology.pdu].sort(), tor: [...topology.tor].sort() });

export function evolveTopology(state: TopologyState, event: FleetEvent, { position }: Placement): TopologyState {
  return event.type === 'TopologyDeclared' ? { declared: { data: event.data, position } } : state;
}

export function decideTopology(command: RackTopology, state: TopologyState): Decision<FleetEvent, never> {
  if (state.declared && sameContent(asContent(state.declared.data), asContent(command))) return unchanged(state.declared.position);
  return record<FleetEvent>({ type: 'TopologyDeclared', data: command });
}

export const topologyDecider: Decider<RackTopology, FleetEvent, TopologyState> = {
  initialState: () => ({ declared: undefined }),
  evolve: evolveTopology,
  decide: decideTopology,
};
