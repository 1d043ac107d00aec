/**
 * A node's state as its operators' intents left it, folded from its `node-<id>` stream: whether it is cordoned,
 * quarantined, decommissioned or latched, and its maintenance window, each with the position where it came to be so.
 * Observations and liveness share the stream and only advance its positions. Pure: imports no I/O.
 */
import { assertNever, type EventOf, type FleetEvent } from '../../events/index.js';
import type { Placement } from '../decider.js';

/** Whether something holds for the node, and the position of the event since which it has (or has not) held. */
export interface NodeFlag {
  readonly on: boolean;
  readonly since: number;
}

export interface MaintenanceWindow {
  readonly from: string;
  readonly until: string;
  readonly position: number;
}

/** The events operators' intents put on a node's stream, and the one the poller adds that an intent clears. */
export type NodeIntentEvent = EventOf<
  'NodeRegistered' | 'NodeDeclared' | 'NodeDecommissioned' | 'MaintenanceWindowSet' | 'NodeCordoned' | 'NodeUncordoned' | 'NodeQuarantined' | 'NodeReleased' | 'LockoutLatched' | 'LockoutLatchCleared'
  | 'BmcCertificateObserved' | 'BmcCertificateChanged' | 'BmcCertificateAccepted'
>;

/** What the node's BMC certificate is as the log has it: the pin, and a different one presented since (latched). */
export interface NodeCertificate {
  /** The fingerprint pinned (first observed at first use, or accepted by an operator); undefined before any. */
  readonly pinned: string | undefined;
  /** The certificate presented in place of the pin, not accepted yet: no credential goes to the BMC. */
  readonly presented: string | undefined;
  readonly since: number;
}

export type NodeState =
  /** Nobody registered or declared the node: its stream holds nothing. */
  | { readonly status: 'unknown' }
  | {
      readonly status: 'known';
      readonly cordoned: NodeFlag;
      readonly quarantined: NodeFlag;
      readonly decommissioned: NodeFlag;
      /** A BMC lockout latch (`LockoutLatched`) not cleared since. */
      readonly latched: NodeFlag;
      readonly maintenance: MaintenanceWindow | undefined;
      readonly certificate: NodeCertificate;
    };

export const initialNodeState = (): NodeState => ({ status: 'unknown' });

/** The events of a node's stream that change what its intents are decided on (the node decider `folds` these). */
export const nodeIntentEventTypes: readonly NodeIntentEvent['type'][] = [
  'NodeRegistered', 'NodeDeclared', 'NodeDecommissioned', 'MaintenanceWindowSet', 'NodeCordoned', 'NodeUncordoned', 'NodeQuarantined', 'NodeReleased', 'LockoutLatched', 'LockoutLatchCleared',
  'BmcCertificateObserved', 'BmcCertificateChanged', 'BmcCertificateAccepted',
];
const intentTypes: ReadonlySet<string> = new Set<string>(nodeIntentEventTypes);

function isNodeIntentEvent(event: FleetEvent): event is NodeIntentEvent {
  return intentTypes.has(event.type);
}

export function evolveNode(state: NodeState, event: FleetEvent, { position }: Placement): NodeState {
  // The first event of any kind makes the node known; every flag is off since then.
  const known =
    state.status === 'known'
      ? state
      : { status: 'known' as const, cordoned: { on: false, since: position }, quarantined: { on: false, since: position }, decommissioned: { on: false, since: position }, latched: { on: false, since: position }, maintenance: undefined, certificate: { pinned: undefined, presented: undefined, since: position } };
  if (!isNodeIntentEvent(event)) return known;
  const set = (on: boolean, flag: NodeFlag): NodeFlag => (flag.on === on ? flag : { on, since: position });
  switch (event.type) {
    case 'NodeRegistered':
      // A registration after a decommission brings the node back.
      return { ...known, decommissioned: set(false, known.decommissioned) };
    case 'NodeDeclared':
      return known;
    case 'NodeDecommissioned':
      return { ...known, decommissioned: set(true, known.decommissioned) };
    case 'MaintenanceWindowSet':
      return { ...known, maintenance: { from: event.data.from, until: event.data.until, position } };
    case 'NodeCordoned':
      return { ...known, cordoned: set(true, known.cordoned) };
    case 'NodeUncordoned':
      return { ...known, cordoned: set(false, known.cordoned) };
    case 'NodeQuarantined':
      return { ...known, quarantined: set(true, known.quarantined) };
    case 'NodeReleased':
      return { ...known, quarantined: set(false, known.quarantined) };
    case 'LockoutLatched':
      return { ...known, latched: set(true, known.latched) };
    case 'LockoutLatchCleared':
      return { ...known, latched: set(false, known.latched) };
    case 'BmcCertificateObserved':
      // The first certificate trusted at first use is the pin; later ones came with a trust of their own.
      return known.certificate.pinned === undefined && event.data.trust === 'first-use' ? { ...known, certificate: { pinned: event.data.certificate.fingerprint, presented: undefined, since: position } } : known;
    case 'BmcCertificateChanged':
      return { ...known, certificate: { ...known.certificate, presented: event.data.presented.fingerprint, since: position } };
    case 'BmcCertificateAccepted':
      return { ...known, certificate: { pinned: event.data.fingerprint, presented: undefined, since: position } };
    default:
      return assertNever(event, 'node intent event');
  }
}
