/**
 * Durable before acknowledged, on a replicated PostgreSQL: what the ledger does so that nothing it acknowledges or
 * publishes can be missing from the standby a failover promotes (docs/failover.md).
 *
 * Under synchronous replication (Patroni's `synchronous_mode`, `synchronous_commit` on or remote_apply) a COMMIT
 * returns only once the synchronous standby has its WAL, and other sessions see the transaction only then. Two things
 * break that, and both are handled here:
 *
 * - A wait for the standby ended by a cancel request (`pg_cancel_backend`, a job that cancels long statements) answers
 *   the COMMIT as a success, with a WARNING that the transaction "has already committed locally, but might not have
 *   been replicated"; a terminated session leaves it committed on the primary alone. `watchSyncWait` notices the
 *   warning (SQLSTATE class 01, the only part of it that is not translated), and the caller then makes the commit
 *   durable with `awaitDurable` before it says anything. (`statement_timeout` never ends that wait: PostgreSQL stops
 *   the statement's timer before it commits.)
 * - An outcome asked of the database after a lost connection (`commit-resolution.ts`) may find rows that a primary
 *   restarted in place recovered from its own WAL, or that a terminated session left, not yet on any standby.
 *   `awaitDurable` after the count makes them durable before they are called committed; a retry answered as a replay
 *   is made durable the same way (`group-commit.ts`).
 *
 * `awaitDurable` is a fence: a transaction that writes one WAL record (a transactional logical message, which any
 * role may emit and no table holds) and commits with `synchronous_commit` on and no deadline. Its commit record comes
 * after every commit the session saw or made before it, and the standby confirms WAL in order, so once it returns
 * everything before it is on the standby too. On a server without synchronous standbys it is one local commit.
 */
import type pg from 'pg';

/** The statement of the fence: one WAL record in a transaction, nothing stored in any table. */
export const durabilityFenceStatement = "SELECT pg_logical_emit_message(true, 'fleet-ledger', 'durable')";

/**
 * Commits a fence on `client` (no transaction may be open on it) and resolves once its commit is confirmed by the
 * synchronous standby, however long that takes: no `statement_timeout` applies, since a cancelled wait would answer as
 * a success. Bound it from outside (`withDeadline`) if the caller must give up; it throws when the confirmation
 * cannot be had (the connection lost, or the wait cancelled by someone else).
 */
export async function awaitDurable(client: pg.ClientBase): Promise<void> {
  const watch = watchSyncWait(client);
  try {
    await client.query(`BEGIN; SET LOCAL synchronous_commit TO on; SET LOCAL statement_timeout TO 0; ${durabilityFenceStatement}; COMMIT`);
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  } finally {
    watch.stop();
  }
  if (watch.cancelled()) throw new Error('the wait for the synchronous standby was cancelled: what this session committed may not be on a standby');
}

/**
 * Listens for the warning of a cancelled wait for synchronous replication on `client` until `stop()`. `cancelled()`
 * is true once a warning (SQLSTATE class 01) came: conservative, since the warning's text may be translated and a
 * COMMIT has no other warnings to give.
 */
export function watchSyncWait(client: pg.ClientBase): { cancelled: () => boolean; stop: () => void } {
  let warned = false;
  const onNotice = (notice: { code?: string }): void => {
    if (typeof notice.code === 'string' && notice.code.startsWith('01')) warned = true;
  };
  client.on('notice', onNotice);
  return { cancelled: () => warned, stop: () => void client.removeListener('notice', onNotice) };
}

/**
 * The server instance behind a connection: its postmaster's start time. A server process id means something only on
 * the instance that gave it: after a failover (another node answers) or a restart, the same number is another
 * session, or none.
 */
export const serverInstanceQuery = 'pg_postmaster_start_time()::text';
