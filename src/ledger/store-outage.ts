import { isLedgerError } from './ledger-error.js';

/**
 * How a long-lived reader of the ledger waits out PostgreSQL being away (a restart, a failover, the embedded
 * postmaster being started again): the process outlives its database, so a lost connection pauses the reader and
 * never ends it. Only a failure to reach the store is waited out; a refused append, a closed store or a consumer's
 * own error still ends the reader, as before.
 */

/** True for the errors that mean "the store could not be reached; the same call may succeed later". */
export function isStoreUnavailable(error: unknown): boolean {
  if (isLedgerError(error)) return error.code === 'LEDGER_STORE_UNAVAILABLE' || error.code === 'LEDGER_COMMIT_UNKNOWN';
  // Errors of pg itself, before the ledger wrapped them: connection refused or reset, terminated sessions
  // (57P01 admin_shutdown, 57P02 crash_shutdown, 57P03 cannot_connect_now) and the class 08 connection exceptions.
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === 'string' && (/^08/.test(code) || /^57P0[1-3]$/.test(code) || ['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT'].includes(code))) return true;
  // A server in recovery (25006 read_only_sql_transaction: a write refused on a standby, or on a primary still replaying
  // its WAL): behind a failover front (HAProxy on Patroni's REST API) a connection can reach a node for the moment
  // it takes the front to see that the node is not, or not yet, the primary; the next connection reaches the primary.
  if (code === '25006') return true;
  // pg's own messages for a connection lost mid-use ("not queryable" on every later call) and a server that is
  // restarting (it refuses, then says it is starting up or not yet accepting connections), or a database closed to
  // connections for maintenance (ALLOW_CONNECTIONS false, SQLSTATE 55000, a code too broad to go by); and a server in
  // recovery where its code is too broad (0A000 "cannot set transaction read-write mode during recovery", 55000).
  const message = error instanceof Error ? error.message : String(error);
  return /Connection terminated|connection refused|connection timeout|timeout exceeded when trying to connect|not queryable|the database system is|terminating connection|is not currently accepting connections|during recovery|recovery is in progress/i.test(message);
}

/** The wait before the next attempt: 0.5, 1, 2, 4 ... up to `maxMs` (default 5 s), so a recovered store is found soon. */
export function outageBackoffMs(attempt: number, maxMs = 5_000): number {
  return Math.min(maxMs, 500 * 2 ** Math.min(attempt, 16));
}

/** Resolves after `ms`, or at once when `signal` aborts (the reader then sees it stopped and returns). */
export function pause(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const done = (): void => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
  });
}
