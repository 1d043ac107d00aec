/**
 * The shape a saga's `evolve` reads: a recorded event's type, payload, actor and the time the ledger recorded it.
 * Deciders never read a clock: `now` is passed in, and times in their state come from `recordedAt`.
 */
import type { Actor, EventShape } from '../events/index.js';

/** What a saga's `evolve` reads beside the event itself. */
export interface SagaEventContext {
  actor: Actor;
  /** Milliseconds since the epoch. */
  recordedAt: number;
}

/** One event `E` (untyped by default; a stream's closed union narrows on `type`) with its actor and recording time. */
export type SagaEvent<E extends EventShape = EventShape> = SagaEventContext & E;

/** The name an actor is counted under (two approvals need two distinct names). */
export function actorName(actor: Actor): string {
  return `${actor.kind}:${actor.id}`;
}
