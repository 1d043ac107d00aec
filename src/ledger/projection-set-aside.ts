import type { Transaction } from 'kysely';
import type { RecordedEvent } from '../../events/index.js';
import type { DynamicDatabase } from './database.js';
import { inHeld } from './held-apply.js';
import { nameUuid } from './name-uuid.js';
import type { HeldTableSet, Projection } from './projection.js';
import type { ProjectionRunnerContext } from './projection-runner-context.js';
import type { ProjectionFailure } from './projection-status.js';

/** An event the projection cannot apply, named, where the projection stops (instead of setting it aside). */
export class BatchApplyError extends Error {
  constructor(readonly failure: ProjectionFailure) {
    super(`event ${failure.position} (${failure.type}) could not be applied: ${failure.reason}`);
  }
}

class RollbackProbe extends Error {}

/**
 * Sets one event aside: first the `ProjectionEventSetAside` event (its id derived from projection, version and
 * position, so a crash and retry appends it once), then, in one transaction with `work` (the batch's prefix and the
 * checkpoint), the dead-letter row. A set-aside event that itself cannot be applied raises no further event.
 */
export async function setAside(
  context: ProjectionRunnerContext,
  projection: Projection,
  failure: ProjectionFailure,
  work: (trx: Transaction<DynamicDatabase>) => Promise<void>,
  options: { record?: boolean } = {},
): Promise<void> {
  if (failure.type !== 'ProjectionEventSetAside') {
    await context.store.append(`projection-${projection.name}`, [
      {
        eventId: nameUuid(`projection-set-aside\u0000${projection.name}\u0000${projection.version}\u0000${failure.position}`),
        type: 'ProjectionEventSetAside',
        data: { projection: projection.name, projectionVersion: projection.version, position: failure.position, eventId: failure.eventId, type: failure.type, stream: failure.stream, reason: failure.reason.slice(0, 2000) },
        actor: { kind: 'system', id: 'projection-runner' },
      },
    ]);
  }
  await context.db.transaction().execute(async (trx) => {
    await work(trx);
    // A rebuild keeps its dead letters until the swap, which replaces the projection's rows at once.
    if (options.record === false) return;
    await trx.insertInto('projection_dead_letters').values(deadLetterRow(projection, failure)).onConflict((oc) => oc.columns(['projection', 'position']).doNothing()).execute();
  });
}

/** How many events the projection has set aside since its last rebuild. */
export async function countSetAside(context: ProjectionRunnerContext, name: string): Promise<number> {
  const row = await context.db.selectFrom('projection_dead_letters').select((eb) => eb.fn.countAll<string>().as('n')).where('projection', '=', name).executeTakeFirst();
  return Number(row?.n ?? 0);
}

/**
 * A batch failed: find the first event that fails on its own (applying the batch's prefix in rolled-back
 * transactions) so the error names the event, not just the batch.
 */
export async function locateFailure(
  context: ProjectionRunnerContext,
  projection: Projection,
  events: readonly RecordedEvent[],
  cause: unknown,
  schema?: string,
  memory?: HeldTableSet | null,
): Promise<ProjectionFailure> {
  const describe = (event: RecordedEvent, reason: unknown): ProjectionFailure => ({
    position: event.position,
    eventId: event.eventId,
    type: event.type,
    stream: event.stream,
    reason: reason instanceof Error ? reason.message : String(reason),
  });
  const named = cause as { event?: RecordedEvent };
  if (named?.event && typeof named.event.position === 'number') return describe(named.event, cause);
  for (let end = 1; end <= events.length; end += 1) {
    try {
      await inHeld(memory, () =>
        context.db.transaction().execute(async (trx) => {
          await projection.apply(schema ? trx.withSchema(schema) : trx, events.slice(0, end));
          throw new RollbackProbe();
        }),
      );
    } catch (error) {
      if (!(error instanceof RollbackProbe)) return describe(events[end - 1]!, error);
    }
  }
  return { ...describe(events[events.length - 1]!, cause), located: false };
}

/** The `projection_dead_letters` row of an event set aside. */
export function deadLetterRow(projection: Projection, failure: ProjectionFailure): Record<string, unknown> {
  return {
    projection: projection.name,
    position: failure.position,
    event_id: failure.eventId,
    type: failure.type,
    stream: failure.stream,
    reason: failure.reason.slice(0, 2000),
    projection_version: projection.version,
    set_aside_at: new Date(),
  };
}
