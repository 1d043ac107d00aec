/**
 * The one engine shell every decider runs in: read the stream, fold it with `evolve`, `decide`, and append what was
 * decided with the stream version that was read. The API's intents and verbs and the sagas' operator commands all go
 * through it.
 *
 * Guarantees:
 * - A decision is recorded only against the state it was made on: the append expects the version read, so a writer
 *   that got in between makes it fail with `LEDGER_WRONG_EXPECTED_VERSION`, and the command is decided again on the
 *   new state (at most `attempts` times in all; then the conflict is thrown, retryable as the store states).
 * - `unchanged` and `refused` record nothing.
 * - Event ids come from the caller (`eventId`), so a retried request with the same key is answered by the store's
 *   idempotent append rather than recorded twice.
 */
import { assertNever, type Actor, type FleetEvent, type ProposedEvent, type RecordedEvent } from '../../events/index.js';
import { isLedgerError, type AppendResult, type EventStore, type ExpectedVersion } from '../../src/ledger/index.js';
import type { Decider, Placement } from '../decider.js';

/** What a command came to: the answer a caller turns into its reply. `state` is the stream's state after it. */
export type CommandOutcome<State, Refusal> =
  | { readonly kind: 'recorded'; readonly stream: string; readonly positions: number[]; readonly streamVersion: number; readonly idempotentReplay: boolean; readonly state: State }
  | { readonly kind: 'unchanged'; readonly stream: string; readonly position: number; readonly streamVersion: number; readonly state: State }
  | { readonly kind: 'refused'; readonly stream: string; readonly refusal: Refusal; readonly streamVersion: number; readonly state: State };

export interface HandleCommandOptions<Event> {
  /** Who asks: stamped on every event recorded. */
  actor: Actor;
  /** The event id of the `index`-th event decided (deterministic ids make a repeated request a no-op). */
  eventId?: (index: number) => string | undefined;
  /**
   * The decider's view of a recorded event, or undefined for one it does not fold (it still counts in the stream's
   * version). By default every event is passed as it was recorded (its type and payload, as the catalogue checked them).
   */
  toEvent?: (event: RecordedEvent) => Event | undefined;
  /** From a decided event to what is appended (defaults to its `type` and `data`). */
  toProposed?: (event: Event) => Omit<ProposedEvent, 'actor' | 'eventId'>;
  /** Decide-and-append attempts in all when other writers keep getting in first. Default 3. */
  attempts?: number;
  /** Wraps the append (timing, a lease check before writing); by default `store.append`. */
  append?: (stream: string, events: ProposedEvent[], expectedVersion: ExpectedVersion) => Promise<AppendResult>;
}

const placementOf = (event: RecordedEvent): Placement => ({ position: event.position, streamVersion: event.streamVersion, recordedAt: event.recordedAt.getTime(), actor: event.actor });

/** Events of one stream read at once while a decider's state is loaded. */
const pageSize = 10_000;

/**
 * The state of `stream` folded by `decider`, and the version it was folded to (0: the stream holds nothing). A decider
 * that names what it `folds` is given the stream's first event and the events of those types only, up to the stream's
 * version read first (the version a decision is then recorded against).
 */
export async function loadDeciderState<Event, State>(
  store: EventStore,
  stream: string,
  decider: Pick<Decider<unknown, Event, State, unknown>, 'initialState' | 'evolve' | 'folds'>,
  toEvent: (event: RecordedEvent) => Event | undefined = (event) => event as unknown as Event,
  from: { state: State; version: number } = { state: decider.initialState(), version: 0 },
): Promise<{ state: State; version: number }> {
  let { state, version } = from;
  const fold = (recorded: RecordedEvent): void => {
    const event = toEvent(recorded);
    if (event !== undefined) state = decider.evolve(state, event, placementOf(recorded));
  };
  if (!decider.folds) {
    for (const recorded of await store.readStreamToEnd(stream, version + 1)) {
      fold(recorded);
      version = recorded.streamVersion;
    }
    return { state, version };
  }
  const head = (await store.streamVersion(stream)) ?? 0;
  if (head <= version) return { state, version };
  let next = version + 1;
  if (next === 1) {
    const [first] = await store.readStream(stream, { fromVersion: 1, limit: 1 });
    if (first) fold(first);
    next = 2;
  }
  while (next <= head) {
    const page = await store.readStream(stream, { fromVersion: next, toVersion: head, types: decider.folds, limit: pageSize });
    for (const recorded of page) fold(recorded);
    if (page.length < pageSize) break;
    next = page[page.length - 1]!.streamVersion + 1;
  }
  return { state, version: head };
}

/** Decides `command` on `stream` and records the decision (see the module's guarantees). */
export async function handleCommand<Command, Event, State, Refusal>(
  store: EventStore,
  stream: string,
  decider: Decider<Command, Event, State, Refusal>,
  command: Command,
  options: HandleCommandOptions<Event>,
): Promise<CommandOutcome<State, Refusal>> {
  const attempts = Math.max(1, options.attempts ?? 3);
  const toProposed = options.toProposed ?? ((event: Event) => ({ type: (event as FleetEvent).type, data: (event as FleetEvent).data }));
  const append = options.append ?? ((name, events, expectedVersion) => store.append(name, events, { expectedVersion }));
  for (let attempt = 1; ; attempt++) {
    const read = await loadDeciderState(store, stream, decider, options.toEvent);
    const decision = decider.decide(command, read.state);
    switch (decision.kind) {
      case 'unchanged':
        return { kind: 'unchanged', stream, position: decision.position, streamVersion: read.version, state: read.state };
      case 'refused':
        return { kind: 'refused', stream, refusal: decision.refusal, streamVersion: read.version, state: read.state };
      case 'record':
        break;
      default:
        assertNever(decision, 'decision');
    }
    const proposed = decision.events.map((event, index): ProposedEvent => {
      const eventId = options.eventId?.(index);
      return { ...toProposed(event), actor: options.actor, ...(eventId !== undefined ? { eventId } : {}) };
    });
    try {
      const result = await append(stream, proposed, read.version === 0 ? 'no_stream' : read.version);
      // The state as recorded (recorded times are the ledger's): fold what this append wrote, and anything after it.
      const after = await loadDeciderState(store, stream, decider, options.toEvent, read);
      return { kind: 'recorded', stream, positions: result.positions, streamVersion: result.nextExpectedVersion, idempotentReplay: result.idempotentReplay, state: after.state };
    } catch (error) {
      if (attempt < attempts && isLedgerError(error) && error.code === 'LEDGER_WRONG_EXPECTED_VERSION') continue; // someone wrote in between: decide again
      throw error;
    }
  }
}
