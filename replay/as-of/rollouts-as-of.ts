/**
 * Rollouts as of a position. A rollout is a saga stream (`rollout-<id>`), not a read model: its state as of P is the
 * fold of its stream's events up to P with the saga's own `evolveRollout`, exactly as `loadRollout` folds the whole
 * stream; a node's step the same way with `evolveStep`. Stream versions grow with positions, so the fold stops at the
 * first event past P.
 */
import { sql, type Kysely } from 'kysely';
import type { RecordedEvent } from '../../events/index.js';
import { evolveRollout, evolveStep, initialRollout, initialStep, rolloutStream, stepStream, type RolloutState, type StepState } from '../../sagas/index.js';
import type { EventStore, DynamicDatabase } from '../../src/ledger/index.js';

const pageSize = 10_000;

/** The events of `stream` at positions up to `position`, in stream order. */
export async function streamUpTo(store: EventStore, stream: string, position: number): Promise<RecordedEvent[]> {
  const events: RecordedEvent[] = [];
  for (let from = 1; ; ) {
    const page = await store.readStream(stream, { fromVersion: from, limit: pageSize });
    for (const event of page) {
      if (event.position > position) return events;
      events.push(event);
    }
    if (page.length < pageSize) return events;
    from = page[page.length - 1]!.streamVersion + 1;
  }
}

/** The rollout as of `position`, or null when it had not been planned by then. */
export async function rolloutAsOf(store: EventStore, rolloutId: string, position: number): Promise<RolloutState | null> {
  const state = initialRollout(rolloutId);
  for (const event of await streamUpTo(store, rolloutStream(rolloutId), position)) {
    evolveRollout(state, { type: event.type, data: event.data, actor: event.actor, recordedAt: event.recordedAt.getTime() });
  }
  return state.plan ? state : null;
}

/** One node's firmware step of a rollout as of `position`. */
export async function stepAsOf(store: EventStore, rolloutId: string, nodeId: string, position: number): Promise<StepState> {
  let state = initialStep();
  for (const event of await streamUpTo(store, stepStream(rolloutId, nodeId), position)) {
    state = evolveStep(state, { type: event.type, data: event.data, actor: event.actor, recordedAt: event.recordedAt.getTime() });
  }
  return state;
}

/** Every rollout planned at or before `position` (ids in stream order). */
export async function rolloutsAsOf(store: EventStore, position: number): Promise<RolloutState[]> {
  const db = store.db.withTables<DynamicDatabase>();
  // A rollout stream existed at P if its first event is at or before P (one probe of the (stream, stream_version) index each).
  const streams = (
    await sql<{ stream: string }>`
      SELECT s.stream FROM ledger_streams s JOIN ledger_events e ON e.stream = s.stream AND e.stream_version = 1
       WHERE s.stream LIKE 'rollout-%' AND e.position <= ${position} ORDER BY s.stream`.execute(db)
  ).rows;
  const states: RolloutState[] = [];
  for (const { stream } of streams) {
    const state = await rolloutAsOf(store, stream.slice('rollout-'.length), position);
    if (state) states.push(state);
  }
  return states;
}
