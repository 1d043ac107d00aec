/**
 * Operators' intents about one node, decided from the node's state: an intent that changes the node records one
 * event; one that changes nothing (cordon a cordoned node, clear a latch that is not there) records nothing and is
 * answered with the position since which the node has been so, as `kubectl cordon` answers "already cordoned".
 * An intent about a node nobody registered or declared is refused. Pure: imports no I/O.
 */
import { assertNever, type FleetEvent } from '../../events/index.js';
import { record, refuse, unchanged, type Decider, type Decision } from '../decider.js';
import { evolveNode, initialNodeState, nodeIntentEventTypes, type NodeFlag, type NodeState } from './node-evolve.js';

export type NodeIntent =
  | { readonly intent: 'cordon'; readonly nodeId: string; readonly reason: string }
  | { readonly intent: 'uncordon'; readonly nodeId: string; readonly reason?: string }
  | { readonly intent: 'quarantine'; readonly nodeId: string; readonly reason: string }
  | { readonly intent: 'release'; readonly nodeId: string; readonly reason?: string }
  | { readonly intent: 'decommission'; readonly nodeId: string; readonly reason: string }
  | { readonly intent: 'clear-latch'; readonly nodeId: string; readonly reason: string }
  | { readonly intent: 'accept-certificate'; readonly nodeId: string; readonly fingerprint: string; readonly reason: string }
  | { readonly intent: 'set-maintenance'; readonly nodeId: string; readonly from: string; readonly until: string; readonly reason: string };

export type NodeIntentRefusal = { readonly code: 'NODE_UNKNOWN'; readonly nodeId: string };

const withReason = (nodeId: string, reason: string | undefined): { nodeId: string; reason?: string } => ({ nodeId, ...(reason !== undefined ? { reason } : {}) });

/** The event an intent records when it changes the node (the authorization policy judges this one either way). */
export function eventOfNodeIntent(command: NodeIntent): FleetEvent {
  const { nodeId } = command;
  switch (command.intent) {
    case 'cordon':
      return { type: 'NodeCordoned', data: { nodeId, reason: command.reason } };
    case 'uncordon':
      return { type: 'NodeUncordoned', data: withReason(nodeId, command.reason) };
    case 'quarantine':
      return { type: 'NodeQuarantined', data: { nodeId, reason: command.reason } };
    case 'release':
      return { type: 'NodeReleased', data: withReason(nodeId, command.reason) };
    case 'decommission':
      return { type: 'NodeDecommissioned', data: { nodeId, reason: command.reason } };
    case 'clear-latch':
      return { type: 'LockoutLatchCleared', data: { nodeId, reason: command.reason } };
    case 'accept-certificate':
      return { type: 'BmcCertificateAccepted', data: { nodeId, fingerprint: command.fingerprint, reason: command.reason } };
    case 'set-maintenance':
      return { type: 'MaintenanceWindowSet', data: { nodeId, from: command.from, until: command.until, reason: command.reason } };
    default:
      return assertNever(command, 'node intent');
  }
}

export function decideNodeIntent(command: NodeIntent, state: NodeState): Decision<FleetEvent, NodeIntentRefusal> {
  if (state.status === 'unknown') return refuse({ code: 'NODE_UNKNOWN', nodeId: command.nodeId });
  /** Records the intent's event unless `flag` already is `on`, since the position the flag names. */
  const unless = (flag: NodeFlag, on: boolean): Decision<FleetEvent, NodeIntentRefusal> => (flag.on === on ? unchanged(flag.since) : record(eventOfNodeIntent(command)));
  switch (command.intent) {
    case 'cordon':
      return unless(state.cordoned, true);
    case 'uncordon':
      return unless(state.cordoned, false);
    case 'quarantine':
      return unless(state.quarantined, true);
    case 'release':
      return unless(state.quarantined, false);
    case 'decommission':
      return unless(state.decommissioned, true);
    case 'clear-latch':
      return unless(state.latched, false);
    case 'accept-certificate':
      // Accepting the certificate already pinned, with none other presented since, changes nothing.
      return state.certificate.pinned === command.fingerprint && state.certificate.presented === undefined ? unchanged(state.certificate.since) : record(eventOfNodeIntent(command));
    case 'set-maintenance': {
      // The same window again (the same two instants, however written) changes nothing; another reason does not matter.
      const window = state.maintenance;
      if (window && Date.parse(window.from) === Date.parse(command.from) && Date.parse(window.until) === Date.parse(command.until)) return unchanged(window.position);
      return record(eventOfNodeIntent(command));
    }
    default:
      return assertNever(command, 'node intent');
  }
}

/** The node decider: `node-<nodeId>` streams, operators' intents. */
export const nodeDecider: Decider<NodeIntent, FleetEvent, NodeState, NodeIntentRefusal> = {
  initialState: initialNodeState,
  evolve: evolveNode,
  decide: decideNodeIntent,
  folds: nodeIntentEventTypes,
};

export const nodeStream = (nodeId: string): string => `node-${nodeId}`;
