/**
 * The shape a saga's `evolve` reads: a recorded event's type, payload, actor and the time the ledger recorded it.
 * Deciders never read a clock: `now` is passed in, and times in their state come from `recordedAt`.
 */
import type { Actor } from '../events/index.js';

export interface SagaEvent<TType extends string = string, TData = unknown> {
  type: TType;
  data: TData;
  actor: Actor;
  /** Milliseconds since the epoch. */
  recordedAt: number;
}

/** The name an actor is counted under (two approvals need two distinct names). */
export function actorName(actor: Actor): string {
  return `${actor.kind}:${actor.id}`;
}
