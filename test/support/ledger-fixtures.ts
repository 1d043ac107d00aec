import { randomUUID } from 'node:crypto';
import type { ProposedEvent } from '../../events/index.js';

export const operator = { kind: 'operator', id: 'alice@example.org', role: 'operator' } as const;

/** A valid operator intent about a node, the shape most tests append. */
export function cordon(nodeId: string, reason = 'disk replacement', eventId?: string): ProposedEvent {
  return { type: 'NodeCordoned', data: { nodeId, reason }, actor: operator, ...(eventId ? { eventId } : {}) };
}

export function withId(event: ProposedEvent): ProposedEvent {
  return { ...event, eventId: randomUUID() };
}
