import pg from 'pg';
import type { RecordedEvent } from '../../events/index.js';
import { boundedConnection } from './connection-bounds.js';
import type { Projection } from './projection.js';
import { CheckpointMovedError, markProjectionFailed, moveCheckpoint } from './projection-checkpoint.js';
import { LockLostError, tryLockProjection } from './projection-lock.js';
import { rebuildLocked } from './projection-rebuild.js';
import type { ProjectionRunnerContext } from './projection-runner-context.js';
import { BatchApplyError, countSetAside, locateFailure, setAside } from './projection-set-aside.js';
import type { ProjectionFailure, ProjectionStatus } from './projection-status.js';
import { isTransientDatabaseError } from './transient-database-error.js';

/**
 * Running a projection live: take its lock (or stand by), then follow the log from its checkpoint, applying each batch
 * with the checkpoint in one transaction, setting aside what cannot be applied, and pausing while the database is away.
 */

/** One projection's live loop in this process: its status, how to stop it, and the connection holding its lock. */
export interface LiveProjection {
  projection: Projection;
  status: ProjectionStatus;
  abort: AbortController;
  done: Promise<void>;
  lastAppliedAt: Date | null;
  lockClient: pg.Client | null;
}

/**
 * Runs the projection; when the database goes away (restart, failover, shutdown) it waits and resumes
 * from the checkpoint instead of failing: only an event the projection cannot apply stops it for good.
 */
export async function superviseProjection(context: ProjectionRunnerContext, live: LiveProjection): Promise<void> {
  const { projection, abort } = live;
  const { log } = context.options;
  for (let attempt = 0; !abort.signal.aborted; attempt += 1) {
    try {
      await run(context, live);
      return;
    } catch (error) {
      if (error instanceof LockLostError || error instanceof CheckpointMovedError) {
        // Another instance may be live now: this one stands by again (never `failed`: nothing is wrong with the
        // projection, and a failed loop would never take it over again when that instance dies).
        live.status.state = 'standby';
        log('projection no longer held by this instance: standing by', { projection: projection.name, reason: error.message });
        attempt = -1;
        continue;
      }
      if (!isTransientDatabaseError(error)) {
        live.status.state = 'failed';
        live.status.error ??= { position: -1, eventId: '', type: '', stream: '', reason: String(error) };
        log('projection stopped by an error', { projection: projection.name, error: String(error) });
        return;
      }
      live.status.state = 'starting';
      log('database unavailable: projection resumes from its checkpoint', { projection: projection.name, error: String(error) });
      await pauseForOutage(abort.signal, attempt);
    }
  }
}

/** Waits before the next attempt (backing off up to 10 s), or until the loop is stopped. */
function pauseForOutage(signal: AbortSignal, attempt: number): Promise<void> {
  return new Promise<void>((resolve) => {
    const done = (): void => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, Math.min(10_000, 500 * 2 ** Math.min(attempt, 5)));
    signal.addEventListener('abort', done, { once: true });
  });
}

async function run(context: ProjectionRunnerContext, live: LiveProjection): Promise<void> {
  // Applying stops when the run is stopped or the lock is lost, whichever comes first.
  const held = new AbortController();
  const stop = (): void => held.abort();
  live.abort.signal.addEventListener('abort', stop, { once: true });
  try {
    await runHeld(context, live, held);
  } finally {
    // One listener per run, gone with it: a projection that lives through many outages does not pile them up.
    live.abort.signal.removeEventListener('abort', stop);
  }
}

/**
 * One live instance: a session-level advisory lock held on a connection of its own. Waits as standby until it is
 * taken (or the loop is stopped); the connection is `live.lockClient`.
 */
async function takeLock(context: ProjectionRunnerContext, live: LiveProjection, held: AbortController): Promise<void> {
  const { projection, abort } = live;
  while (!abort.signal.aborted) {
    const client = new pg.Client(boundedConnection(context.store.connectionString));
    client.on('error', (error) => context.options.log('projection lock connection lost', { projection: projection.name, error: String(error) }));
    await client.connect();
    if (await tryLockProjection(client, projection.name)) {
      live.lockClient = client;
      // Losing this connection loses the lock, and another instance may take it at once: stop applying (the
      // checkpoint guard keeps a batch already under way from being applied twice) and stand by again.
      const lost = (): void => held.abort(new LockLostError(`the lock connection of projection ${projection.name} was lost`));
      client.on('error', lost);
      client.on('end', lost);
      break;
    }
    await client.end();
    live.status.state = 'standby';
    await new Promise((resolve) => setTimeout(resolve, context.options.standbyRetryMs));
  }
}

async function runHeld(context: ProjectionRunnerContext, live: LiveProjection, held: AbortController): Promise<void> {
  const { projection, abort } = live;
  const { db, options } = context;
  await takeLock(context, live, held);
  try {
    if (abort.signal.aborted) return;
    const checkpoint = await db.selectFrom('projection_checkpoints').selectAll().where('name', '=', projection.name).executeTakeFirstOrThrow();
    if (checkpoint.status === 'failed') {
      live.status.state = 'failed';
      live.status.error = checkpoint.error as ProjectionFailure;
      live.status.position = Number(checkpoint.position);
      return;
    }
    if (checkpoint.version !== projection.version) {
      options.log('projection version changed: rebuilding from zero', { projection: projection.name, from: checkpoint.version, to: projection.version });
      await rebuildLocked(context, projection);
    }
    let position = Number((await db.selectFrom('projection_checkpoints').select('position').where('name', '=', projection.name).executeTakeFirstOrThrow()).position);
    live.status.position = position;
    live.status.setAside = await countSetAside(context, projection.name);
    live.status.state = 'running';
    await context.store.follow(
      { fromPosition: position + 1, types: projection.eventTypes, batchSize: options.batchSize, reportEmptyBatches: true },
      async (batch) => {
        live.status.setAside += await applyBatch(context, projection, position, batch.events, batch.checkpoint);
        position = batch.checkpoint;
        live.status.position = position;
        const last = batch.events[batch.events.length - 1];
        if (last) live.lastAppliedAt = last.recordedAt;
        if (batch.events.length > 0) options.onApplied(projection.name, batch.events[0]!.recordedAt, batch.events.length, new Date());
      },
      held.signal,
    );
    if (!abort.signal.aborted && held.signal.reason instanceof LockLostError) throw held.signal.reason;
  } catch (error) {
    if (error instanceof BatchApplyError) {
      live.status.state = 'failed';
      live.status.error = error.failure;
      await markProjectionFailed(context, projection.name, error.failure);
      options.log('projection stopped: an event could not be applied', { projection: projection.name, ...error.failure });
      return;
    }
    throw error;
  } finally {
    await live.lockClient?.end().catch(() => undefined);
    live.lockClient = null;
    if (live.status.state !== 'failed') live.status.state = 'stopped';
  }
}

/**
 * Applies one batch and moves the checkpoint from `from` to `to` in the same transaction. An event the projection
 * cannot apply is set aside (see `setAside`) and the rest of the batch applied; returns how many were set aside.
 */
async function applyBatch(context: ProjectionRunnerContext, projection: Projection, from: number, events: readonly RecordedEvent[], to: number): Promise<number> {
  try {
    await context.db.transaction().execute(async (trx) => {
      if (events.length > 0) await projection.apply(trx, events);
      await moveCheckpoint(trx, projection.name, from, to);
    });
    return 0;
  } catch (error) {
    if (error instanceof CheckpointMovedError) throw error;
    if (isTransientDatabaseError(error)) throw error;
    // With no event in the batch (only the checkpoint moves) there is no event to blame: the error is the run's.
    if (events.length === 0) throw error;
    const failure = await locateFailure(context, projection, events, error);
    if (context.options.onFailure === 'stop' || failure.located === false) throw new BatchApplyError(failure);
    const index = events.findIndex((event) => event.position === failure.position);
    await setAside(context, projection, failure, async (trx) => {
      if (index > 0) await projection.apply(trx, events.slice(0, index));
      await moveCheckpoint(trx, projection.name, from, failure.position);
    });
    context.options.log('projection set an event aside and goes on', { projection: projection.name, ...failure });
    return 1 + (await applyBatch(context, projection, failure.position, events.slice(index + 1), to));
  }
}
