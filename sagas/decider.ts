/**
 * The one shape every decision in fleet-ledger takes: a `Decider` turns a command and the state folded from one
 * stream into the events to record, or into "nothing changes", or into a typed refusal.
 *
 * Guarantees a decider gives (and `handleCommand` relies on): `decide` and `evolve` are pure functions of their
 * arguments (times and ids come in on the command or the event, never from a clock or a random source), so the same
 * stream and the same command always give the same decision, on any process and at replay. Pure: imports no I/O.
 */
import type { Actor } from '../events/index.js';

/**
 * Where a recorded event sits in the log and who recorded it, handed to `evolve` beside the event (a decider may keep
 * positions in its state, or count approvals by actor). The envelope is kept apart from the event so that `decide`
 * returns events as the domain says them, and the shell stamps actor, ids and positions.
 */
export interface Placement {
  /** Global position in the log. */
  readonly position: number;
  /** 1-based version of the event in its stream. */
  readonly streamVersion: number;
  /** The ledger's clock at recording, milliseconds since the epoch. */
  readonly recordedAt: number;
  readonly actor: Actor;
}

/**
 * What `decide` answers:
 * - `record`: append these events (at least one), with the version the state was folded from;
 * - `unchanged`: the state already is what the command asks; nothing is recorded, and `position` is where the stream
 *   came to be so (the event that made it so), the answer a caller gets instead of a new one;
 * - `refused`: the command is not allowed in this state; nothing is recorded.
 */
export type Decision<Event, Refusal> =
  | { readonly kind: 'record'; readonly events: readonly [Event, ...Event[]] }
  | { readonly kind: 'unchanged'; readonly position: number }
  | { readonly kind: 'refused'; readonly refusal: Refusal };

/**
 * A decider over one stream (Emmett's `decide` / `evolve` / `initialState`). `Event` is the stream's closed union,
 * `Refusal` a union of typed refusals (each with a literal `code`), so a caller can map every refusal completely.
 */
export interface Decider<Command, Event, State, Refusal = never> {
  /** The state of a stream that holds nothing yet. */
  initialState(): State;
  /** The state after one more event; returns a new state or the same object updated (the shell never shares it). */
  evolve(state: State, event: Event, placement: Placement): State;
  decide(command: Command, state: State): Decision<Event, Refusal>;
  /**
   * The event types `evolve` changes the state for, when it ignores all others (besides the stream's first event,
   * which the shell always passes): the shell then reads only these from the stream. A node's stream holds every
   * observation of the node; an intent decided on it reads its intents, not its years of sensor readings.
   */
  readonly folds?: readonly string[];
}

export const record = <Event>(first: Event, ...rest: Event[]): { kind: 'record'; events: [Event, ...Event[]] } => ({ kind: 'record', events: [first, ...rest] });
export const unchanged = (position: number): { kind: 'unchanged'; position: number } => ({ kind: 'unchanged', position });
export const refuse = <Refusal>(refusal: Refusal): { kind: 'refused'; refusal: Refusal } => ({ kind: 'refused', refusal });

/** Folds events with their placements from the initial state: what `handleCommand` does after reading a stream. */
export function foldStream<Event, State>(decider: Pick<Decider<unknown, Event, State, unknown>, 'initialState' | 'evolve'>, events: Iterable<{ event: Event; placement: Placement }>): State {
  let state = decider.initialState();
  for (const { event, placement } of events) state = decider.evolve(state, event, placement);
  return state;
}
