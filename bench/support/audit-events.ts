import { randomUUID } from 'node:crypto';
import type { ProposedEvent } from '../../events/index.js';

const operator = { kind: 'operator', id: 'bench@fleet-ledger', role: 'operator' } as const;

/** An operator intent about a node with its id set: the event the audit benchmark appends and loads. */
export function cordonEvent(nodeId: string, reason: string): ProposedEvent & { eventId: string } {
  return { type: 'NodeCordoned', data: { nodeId, reason }, actor: operator, eventId: randomUUID() };
}
