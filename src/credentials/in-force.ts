/**
 * Which credential version is in force on each node, and which nodes are fenced, folded from the log: the one answer
 * the poller, the drivers and the rotation saga all use (pure: events in, a map out).
 *
 * - `CredentialStepStarted` fences the node: a rotation is about to touch its BMC, so nothing else logs in to it (a
 *   login with the old version racing the change is a failed login, and a lockout is three of them).
 * - `BmcPasswordChanged` puts the new version in force and lifts the fence.
 * - `CredentialStepHeld` lifts the fence when the version the BMC holds is known (`inForce`), and puts that one in
 *   force; when it is not known the node stays fenced: no login at all until an operator acts.
 * - A node with no such event uses its reference's default version in the store (`version` undefined).
 */
import type { EventShape } from '../../events/index.js';

export interface NodeCredential {
  /** The reference in force when it is not the registered one (a factory credential a held step proved). */
  credentialRef?: string;
  /** The version in force; undefined: the reference's default. */
  version?: string;
  /** A rotation step holds the node: no login, heavy reads wait, the liveness check asks only what needs no login. */
  fenced: boolean;
  /** The rotation holding the fence (or that last set the version). */
  rotationId?: string;
}

/** The event types this fold reads. */
export const credentialInForceTypes = ['CredentialStepStarted', 'BmcPasswordChanged', 'CredentialStepHeld'] as const;

function field(data: unknown, name: string): unknown {
  return typeof data === 'object' && data !== null ? (Reflect.get(data, name) as unknown) : undefined;
}

/**
 * Applies one event to the node's entry (creating it); returns the node id it changed, or undefined for an event this
 * fold does not read. `registeredRef`: the node's registered reference, when known (a version of it needs no ref).
 */
export function applyCredentialEvent(nodes: Map<string, NodeCredential>, event: EventShape, registeredRef?: (nodeId: string) => string | undefined): string | undefined {
  const nodeId = field(event.data, 'nodeId');
  if (typeof nodeId !== 'string') return undefined;
  const rotationId = field(event.data, 'rotationId');
  const entry = nodes.get(nodeId) ?? { fenced: false };
  const ref = (value: unknown): string | undefined => (typeof value === 'string' && value !== registeredRef?.(nodeId) ? value : undefined);
  switch (event.type) {
    case 'CredentialStepStarted':
      nodes.set(nodeId, { ...entry, fenced: true, ...(typeof rotationId === 'string' ? { rotationId } : {}) });
      return nodeId;
    case 'BmcPasswordChanged': {
      const version = field(event.data, 'version');
      const credentialRef = ref(field(event.data, 'credentialRef'));
      nodes.set(nodeId, { fenced: false, ...(typeof version === 'string' ? { version } : {}), ...(credentialRef ? { credentialRef } : {}), ...(typeof rotationId === 'string' ? { rotationId } : {}) });
      return nodeId;
    }
    case 'CredentialStepHeld': {
      const inForce = field(event.data, 'inForce');
      if (typeof inForce !== 'string') {
        nodes.set(nodeId, { ...entry, fenced: true });
        return nodeId;
      }
      const credentialRef = ref(field(event.data, 'credentialRef'));
      nodes.set(nodeId, { fenced: false, version: inForce, ...(credentialRef ? { credentialRef } : {}), ...(typeof rotationId === 'string' ? { rotationId } : {}) });
      return nodeId;
    }
    default:
      return undefined;
  }
}

/** The credential a node's BMC may be logged in to with now: `fenced` (none), or the reference and version to ask the store for. */
export function loginCredentialOf(entry: NodeCredential | undefined, registeredRef: string): { kind: 'fenced' } | { kind: 'use'; credentialRef: string; version: string | undefined } {
  if (entry?.fenced) return { kind: 'fenced' };
  return { kind: 'use', credentialRef: entry?.credentialRef ?? registeredRef, version: entry?.version };
}
