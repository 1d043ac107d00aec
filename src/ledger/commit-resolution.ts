/**
 * Commit-unknown resolution: what happened to a group commit whose COMMIT may have reached the server when the
 * connection was lost (or whose guarded write answered in an unexpected shape). The outcome is asked of the database,
 * never guessed: a caller told "not committed" of a batch that was would retry and duplicate it.
 */
import pg from 'pg';
import { APPEND_LOCK_KEY } from './append-lock.js';
import { boundedConnection } from './connection-bounds.js';
import { awaitDurable, serverInstanceQuery } from './durability.js';
import { LedgerError } from './ledger-error.js';

/** Where and for how long an unknown outcome is asked: the store's database and its `commitResolutionMs`. */
export interface CommitResolution {
  connectionString: string;
  commitResolutionMs: number;
}

/** An error the server answered with (a statement failed, a deadline passed): the transaction did not commit. */
export function isStatementError(error: unknown): boolean {
  const candidate = error as { code?: unknown; severity?: unknown };
  return typeof candidate?.code === 'string' && /^[0-9A-Z]{5}$/.test(candidate.code) && typeof candidate.severity === 'string';
}

/**
 * Waits until server process `pid` is gone: while it runs a statement it is let finish (a COMMIT it received is kept);
 * once it waits for its client (idle, in a transaction or not) it is ended. A process this role may not see the state
 * of is left alone (the append lock, taken next, still waits for a transaction it holds). Throws at `deadline`.
 */
async function endBackend(client: pg.Client, pid: number, deadline: number): Promise<void> {
  for (;;) {
    const found = await client.query<{ state: string | null }>('SELECT state FROM pg_stat_activity WHERE pid = $1', [pid]);
    const state = found.rows[0]?.state;
    if (found.rows.length === 0 || state === null || state === undefined) return;
    if (state.startsWith('idle')) {
      const ended = await client.query('SELECT pg_terminate_backend($1)', [pid]).then(
        () => true,
        (error: unknown) => {
          // insufficient_privilege: not this role's to end; the append lock, taken next, still orders what follows.
          if ((error as { code?: string }).code === '42501') return false;
          throw error;
        },
      );
      if (!ended) return;
    }
    if (Date.now() >= deadline) throw new Error(`server process ${pid} of the lost connection did not end`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/**
 * What a committed guarded write did, from its answer: one row whose `outcome` is the text 'written' or 'refused' (the
 * guard's boolean is turned into text in SQL, so a process that changed pg's global bool parser reads the same). An
 * answer of any other shape is not guessed from: the database is asked whether the rows are stored, since telling the
 * callers "not written" of a batch that was would have it written again and refused as a duplicate.
 */
export async function guardedOutcome(target: CommitResolution, rows: Array<Record<string, unknown>>, eventIds: string[], positions: number[]): Promise<'written' | 'refused'> {
  const outcome = rows.length === 1 ? rows[0]!['outcome'] : undefined;
  if (outcome === 'written' || outcome === 'refused') return outcome;
  const resolved = await resolveCommit(target, eventIds, positions, new Error(`unexpected answer from the guarded write: ${JSON.stringify(rows).slice(0, 200)}`), null);
  if (resolved === 'committed') return 'written';
  if (resolved === 'not-committed') return 'refused';
  throw new LedgerError('LEDGER_COMMIT_UNKNOWN', { eventIds, cause: 'unexpected answer from the guarded write' }, `append outcome unknown: the guarded write answered ${JSON.stringify(rows).slice(0, 200)} and the database could not be asked within ${target.commitResolutionMs} ms; retry with the same event ids`);
}

/** The server process that served a lost connection, and the server instance it ran on (`serverInstanceQuery`). */
export interface LostBackend {
  pid: number;
  /** Null when it was not read (the process is then looked for on whichever server answers, as before). */
  server: string | null;
}

/**
 * Whether a batch whose COMMIT outcome is unknown was committed: its new event ids are all stored at the positions
 * it gave them (one transaction: all or none; an id alone could be a retry's, stored before). Asked on fresh
 * connections, through the same connection string (behind a Patroni front, whichever node is primary now), until the
 * database answers or the resolution deadline passes (then 'unknown').
 *
 * With `backend`, the server process that served the lost connection is first let finish what it is running and then
 * ended, so nothing still on its way to it (a message the network delivers late, carrying BEGIN, the lock, the write
 * and COMMIT) can commit after the rows were counted. Only on the server instance it ran on: after a failover or a
 * restart the same process id on the server that answers is someone else's session, and nothing of the lost
 * connection can reach that server any more.
 *
 * 'committed' is answered only once the rows are durable: a fence commit after the count (`durability.ts`) returns
 * when the synchronous standby has everything before it, so rows a primary restarted in place recovered from its own
 * WAL (on no standby yet) are never called committed while a failover could still lose them.
 */
export async function resolveCommit(target: CommitResolution, eventIds: string[], positions: number[], cause: unknown, backend: LostBackend | null): Promise<'committed' | 'not-committed' | 'unknown'> {
  const deadline = Date.now() + target.commitResolutionMs;
  for (let attempt = 0; ; attempt += 1) {
    const client = new pg.Client(boundedConnection(target.connectionString, { connectMs: Math.max(1000, Math.min(10_000, deadline - Date.now())) }));
    client.on('error', () => undefined);
    let timer: NodeJS.Timeout | undefined;
    try {
      await client.connect();
      if (backend !== null) {
        const instance = backend.server === null ? null : (await client.query<{ server: string }>(`SELECT ${serverInstanceQuery} AS server`)).rows[0]?.server;
        if (backend.server === null || instance === backend.server) await endBackend(client, backend.pid, deadline);
      }
      // The batch's transaction may still be running on the server (the write, then the COMMIT it already received):
      // its rows are counted only once it has ended, which taking the append lock it holds waits for.
      await client.query('BEGIN');
      await client.query(`SET LOCAL lock_timeout = ${Math.max(1, Math.round(deadline - Date.now()))}`);
      await client.query('SELECT pg_advisory_xact_lock($1)', [APPEND_LOCK_KEY]);
      const found = await client.query<{ n: string }>(
        'SELECT count(*) AS n FROM ledger_events e JOIN unnest($1::uuid[], $2::bigint[]) AS w(id, p) ON e.position = w.p AND e.event_id = w.id',
        [eventIds, positions],
      );
      await client.query('ROLLBACK');
      const stored = Number(found.rows[0]?.n ?? 0);
      if (stored === 0) return 'not-committed';
      if (stored !== eventIds.length) return 'unknown';
      // Durable before called committed; bounded by the deadline from here (a cancelled wait would pass for durable).
      const late = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error('the synchronous standby did not confirm in time')), Math.max(1, deadline - Date.now()))));
      const fence = awaitDurable(client);
      fence.catch(() => undefined);
      await Promise.race([fence, late]);
      return 'committed';
    } catch {
      if (Date.now() >= deadline) return 'unknown';
      await new Promise((resolve) => setTimeout(resolve, Math.min(2000, 100 * 2 ** Math.min(attempt, 5))));
    } finally {
      clearTimeout(timer);
      await client.end().catch(() => undefined);
    }
    void cause;
  }
}
