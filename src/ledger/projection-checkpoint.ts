import { sql, type Transaction } from 'kysely';
import type { DynamicDatabase } from './database.js';
import type { Projection } from './projection.js';
import { projectionLockKey } from './projection-lock.js';
import type { ProjectionRunnerContext } from './projection-runner-context.js';
import type { ProjectionFailure } from './projection-status.js';

/** Another writer moved a projection's checkpoint under this instance: the batch under way is not applied twice. */
export class CheckpointMovedError extends Error {}

/**
 * The projection's tables and checkpoint row, if absent. One process at a time, under an advisory lock of its own:
 * `CREATE TABLE IF NOT EXISTS` is not safe concurrently (two sessions both find the table absent and one fails on
 * the catalogue's unique index), and processes sharing a database start at the same moment. Each statement commits
 * on its own (not one transaction): a `CREATE INDEX IF NOT EXISTS` locks its table until commit, and holding several
 * at once would deadlock with the live instance applying batches to the same tables.
 */
export async function ensureProjectionTables(context: ProjectionRunnerContext, projection: Projection): Promise<void> {
  const key = projectionLockKey(`${projection.name} tables`).toString();
  await context.db.connection().execute(async (connection) => {
    await sql`SELECT pg_advisory_lock(${key}::bigint)`.execute(connection);
    try {
      await projection.createTables(connection);
      await connection
        .insertInto('projection_checkpoints')
        .values({ name: projection.name, version: projection.version, position: 0, status: 'running', error: null, updated_at: new Date() })
        .onConflict((oc) => oc.column('name').doNothing())
        .execute();
    } finally {
      await sql`SELECT pg_advisory_unlock(${key}::bigint)`.execute(connection).catch(() => undefined);
    }
  });
}

/** Moves a projection's checkpoint from `from` to `to`, refusing when another writer moved it meanwhile. */
export async function moveCheckpoint(trx: Transaction<DynamicDatabase>, name: string, from: number, to: number): Promise<void> {
  const moved = await trx.updateTable('projection_checkpoints').set({ position: to, updated_at: new Date() }).where('name', '=', name).where('position', '=', from).executeTakeFirst();
  if (Number(moved.numUpdatedRows) !== 1) throw new CheckpointMovedError(`checkpoint of ${name} moved under this instance (expected ${from})`);
}

/** Records on the checkpoint row that the projection stopped, and on which event: it stays stopped until cleared. */
export async function markProjectionFailed(context: ProjectionRunnerContext, name: string, failure: ProjectionFailure): Promise<void> {
  await context.db.updateTable('projection_checkpoints').set({ status: 'failed', error: JSON.stringify(failure), updated_at: new Date() }).where('name', '=', name).execute();
}
