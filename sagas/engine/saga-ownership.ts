/**
 * Which process drives a saga: the one holding its PostgreSQL session advisory lock (`hashtext` of the saga's key,
 * the same lock rollout engines have always taken, so processes of an older release still exclude newer ones).
 *
 * Guarantees:
 * - one owner at a time: the locks of a process live on one connection of its own, outside the store's pool, and a
 *   saga is taken with `pg_try_advisory_lock`, so a process standing by holds nothing while it waits (a waiter blocked
 *   in `pg_advisory_lock` held a pooled connection per saga running elsewhere, and enough of them left the process
 *   none for its own work);
 * - when the owning process dies, PostgreSQL ends its session and the lock is free at once for the next try;
 * - when the lock's session is lost while the process lives (terminated by an administrator or an
 *   `idle_session_timeout`, the connection reset), every lease taken on it is `lost` at once: its saga stops and
 *   refuses to append, instead of going on beside the process that takes the lock next (Argo Rollouts #2117).
 * - fenced: taking the lock raises the saga's epoch in `saga_leases` (migration 0007), and every event the saga appends
 *   carries `{ saga, epoch }` in its actor; the append transaction refuses an epoch that is no longer current
 *   (`LEDGER_STALE_EPOCH`). A process that lost the lock and has not noticed yet (its append already queued, its event
 *   loop busy) therefore cannot commit once the next owner has taken the saga, and the next owner reads the saga's
 *   state only after raising the epoch, so it sees every append of the old owner that did commit.
 * What a lost lease cannot undo: a request to a BMC already under way, whose answer is then left for the next owner
 * to find by probing, exactly as after a crash.
 */
import { hostname } from 'node:os';
import pg from 'pg';
import type { SagaLeaseStamp } from '../../events/index.js';
import { boundedConnection } from '../../src/ledger/index.js';

export interface SagaLease {
  readonly key: string;
  /** The saga's fencing epoch raised by this take: put `stamp` in the actor of every event the saga appends. */
  readonly epoch: number;
  readonly stamp: SagaLeaseStamp;
  /** Aborted when the session holding the lock is gone: the saga is no longer this process's to drive. */
  readonly lost: AbortSignal;
  release(): Promise<void>;
}

interface LockSession {
  client: pg.Client;
  lost: AbortController;
  /** The session's queries, one at a time (a `pg` client must not be sent a query while one runs). */
  queue: Promise<unknown>;
}

function query<T extends pg.QueryResultRow>(session: LockSession, text: string, values: unknown[]): Promise<pg.QueryResult<T>> {
  const result = session.queue.then(() => session.client.query<T>(text, values));
  session.queue = result.catch(() => undefined);
  return result;
}

export class SagaOwnership {
  #session: Promise<LockSession> | undefined;
  readonly #held = new Set<string>();
  #closed = false;
  /** Who takes a saga, as `saga_leases.owner` records it. */
  readonly #owner = `${hostname()}:${process.pid}`;

  constructor(
    private readonly connectionString: string,
    private readonly log: (message: string, fields?: Record<string, unknown>) => void = () => undefined,
  ) {}

  /** The keys this process holds now. */
  get held(): ReadonlySet<string> {
    return this.#held;
  }

  /**
   * Takes the saga's lock if no session holds it: a lease, or undefined when another process (or another engine of
   * this one) drives the saga.
   */
  async tryTake(key: string): Promise<SagaLease | undefined> {
    if (this.#closed) throw new Error('saga ownership is closed');
    if (this.#held.has(key)) return undefined; // session locks are re-entrant: two engines here must not both pass
    const session = await this.#open();
    this.#held.add(key);
    let locked = false;
    try {
      locked = (await query<{ locked: boolean }>(session, 'SELECT pg_try_advisory_lock(hashtext($1)) AS locked', [key])).rows[0]?.locked === true;
    } finally {
      if (!locked) this.#held.delete(key);
    }
    if (!locked) return undefined;
    let epoch: number;
    try {
      // Raised on the lock's own session, after the lock: an append in flight under the old epoch holds the row FOR
      // SHARE, so this waits for it to commit (or be refused) before the new owner reads anything.
      const raised = await query<{ epoch: string }>(
        session,
        `INSERT INTO saga_leases (saga, epoch, owner) VALUES ($1, 1, $2)
         ON CONFLICT (saga) DO UPDATE SET epoch = saga_leases.epoch + 1, owner = EXCLUDED.owner, taken_at = now()
         RETURNING epoch`,
        [key, this.#owner],
      );
      epoch = Number(raised.rows[0]!.epoch);
    } catch (error) {
      this.#held.delete(key);
      if (!session.lost.signal.aborted) await query(session, 'SELECT pg_advisory_unlock(hashtext($1))', [key]).catch(() => undefined);
      throw error;
    }
    if (session.lost.signal.aborted) {
      this.#held.delete(key);
      return undefined;
    }
    let released = false;
    return {
      key,
      epoch,
      stamp: { saga: key, epoch },
      lost: session.lost.signal,
      release: async () => {
        if (released) return;
        released = true;
        this.#held.delete(key);
        if (!session.lost.signal.aborted) await query(session, 'SELECT pg_advisory_unlock(hashtext($1))', [key]).catch(() => undefined);
      },
    };
  }

  /** Ends the lock session: every lease taken on it is lost. */
  async close(): Promise<void> {
    this.#closed = true;
    const session = await this.#session?.catch(() => undefined);
    this.#session = undefined;
    if (!session) return;
    session.lost.abort(new Error('saga ownership closed'));
    await session.client.end().catch(() => undefined);
  }

  #open(): Promise<LockSession> {
    const current = this.#session;
    if (current) {
      return current.then(
        (session) => (session.lost.signal.aborted ? this.#connect() : session),
        () => this.#connect(),
      );
    }
    return this.#connect();
  }

  #connect(): Promise<LockSession> {
    const client = new pg.Client(boundedConnection(this.connectionString));
    const lost = new AbortController();
    const lose = (why: string) => (error?: unknown): void => {
      if (lost.signal.aborted) return;
      // Every lock of this session went with it; the next take opens a new session.
      const sagas = [...this.#held];
      this.#held.clear();
      lost.abort(error instanceof Error ? error : new Error(why));
      if (!this.#closed) this.log('saga lock session lost: the sagas it held stop here', { why, ...(error === undefined ? {} : { error: String(error) }), sagas });
    };
    client.on('error', lose('error'));
    client.on('end', lose('ended'));
    const opening = client.connect().then(
      (): LockSession => ({ client, lost, queue: Promise.resolve() }),
      async (error: unknown) => {
        lost.abort(error);
        await client.end().catch(() => undefined);
        throw error;
      },
    );
    this.#session = opening;
    return opening;
  }
}

/**
 * Waits for a saga's lease, trying every `retryMs` (a process standing by holds no connection meanwhile). Undefined
 * when `signal` aborts first. A database that does not answer is retried the same way.
 */
export async function waitForSagaLease(ownership: SagaOwnership, key: string, options: { retryMs: number; signal?: AbortSignal | undefined; stopping?: () => boolean; log?: (message: string, fields?: Record<string, unknown>) => void }): Promise<SagaLease | undefined> {
  let waiting = false;
  while (!options.signal?.aborted && !options.stopping?.()) {
    try {
      const lease = await ownership.tryTake(key);
      if (lease) return lease;
      if (!waiting) options.log?.('saga driven by another process: standing by', { saga: key });
      waiting = true;
    } catch (error) {
      options.log?.('saga lock not taken; trying again', { saga: key, error: String(error) });
    }
    await new Promise<void>((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        options.signal?.removeEventListener('abort', done);
        resolve();
      };
      const timer = setTimeout(done, options.retryMs);
      options.signal?.addEventListener('abort', done, { once: true });
    });
  }
  return undefined;
}
