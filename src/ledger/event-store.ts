import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import type { Observable } from 'rxjs';
import { fleetCatalogue, type EventCatalogue, type ProposedEvent, type RecordedEvent } from '../../events/index.js';
import type { AppendOptions, AppendResult } from './append-types.js';
import type { LedgerDatabase } from './database.js';
import { EventReads, type LedgerHead, type ReadAllOptions, type ReadStreamOptions } from './event-reads.js';
import { GroupCommit, type AppendStats } from './group-commit.js';
import { LedgerError } from './ledger-error.js';
import { migrateToLatest } from './migrations/index.js';
import { boundedConnection, type ConnectionBounds } from './connection-bounds.js';
import { Subscriptions, type SubscribeOptions, type SubscriptionBatch } from './subscriptions.js';
import { fastTimestamptzParser, pgTimestamptzParser } from './timestamp-parser.js';
import { verifyLog, type ChainVerification } from './verify-log.js';

// int8 as JS number: positions stay far below 2^53 (9e15 events).
pg.types.setTypeParser(pg.types.builtins.INT8, (value) => Number(value));
// timestamptz by character codes (every event carries two); pg's own parser for any other form.
pg.types.setTypeParser(pg.types.builtins.TIMESTAMPTZ, fastTimestamptzParser(pgTimestamptzParser));

export { APPEND_LOCK_KEY, APPENDED_CHANNEL } from './append-lock.js';
export type { LedgerHead, ReadAllOptions, ReadStreamOptions } from './event-reads.js';
export type { AppendStats } from './group-commit.js';
export type { SubscribeOptions, SubscriptionBatch } from './subscriptions.js';
export type { ChainVerification } from './verify-log.js';

export interface EventStoreOptions {
  connectionString: string;
  catalogue?: EventCatalogue;
  /** Connections in this store's pool (appends use one at a time; reads share the rest). */
  poolSize?: number;
  /** Most events committed in one group-commit transaction. */
  maxBatchEvents?: number;
  /** Subscriptions re-read at least this often even if no notification arrives. */
  pollIntervalMs?: number;
  /**
   * The ledger clock (`recorded_at`). By default the database server's: one clock for every writer, so a process
   * whose own clock runs ahead (2099, say) cannot pin `recorded_at` for every later event (it never runs backwards).
   * A given clock is for tests. `observedAt`, when a caller leaves it out, is this process's clock either way.
   */
  clock?: () => Date;
  /** Connections of the pool that outside followers read through (`SubscribeOptions.pool: 'feeds'`). Default 4. */
  feedPoolSize?: number;
  /** Skip migrations (when another process owns them). */
  migrate?: boolean;
  /** Connect timeout, keepalive and idle-in-transaction bound of every connection (see `connection-bounds.ts`). */
  connectionBounds?: Partial<ConnectionBounds>;
  /**
   * Deadline of one group-commit transaction's statements, waiting for the append lock included: an append that
   * cannot commit within it fails (retryable) instead of queueing every writer behind a stalled one. Default 30 s.
   */
  appendTimeoutMs?: number;
  /** How long an append whose COMMIT outcome is unknown (connection lost after COMMIT was sent) keeps asking the
   * database whether its events are stored, before it answers `LEDGER_COMMIT_UNKNOWN`. Default 30 s. */
  commitResolutionMs?: number;
  /**
   * A group commit sends its events' data and actors as one JSON array each up to this many characters in all
   * (default 32 Mi); a larger batch sends one text per event (PostgreSQL caps a jsonb array at 256 MB).
   */
  maxJsonArrayChars?: number;
  /**
   * Free space kept in reserve on the disk that holds the database (the embedded backend's data folder): below
   * `minFreeBytes`, appends are refused with `LEDGER_STORAGE_FULL` before they reach PostgreSQL, which on a full
   * disk cannot write its WAL, aborts every session and will not start again until space returns. Checked at
   * most every 250 ms. Absent for a server backend (its disk is not ours to see): a full disk there is still
   * answered `LEDGER_STORAGE_FULL`, from PostgreSQL's own error.
   */
  storageReserve?: { path: string; minFreeBytes: number };
}

/** A pool's connections (open, idle) and the callers waiting for one. */
export interface PoolUse {
  total: number;
  idle: number;
  waiting: number;
}

/**
 * The event store: one append-only, hash-chained log in PostgreSQL.
 *
 * Guarantees:
 * - Commit order is log order: every append takes one transaction-scoped advisory lock and its global
 *   positions inside it, so a reader of `position > checkpoint` never skips an event committed later.
 * - Group commit: concurrent `append` calls of this process share one transaction; each keeps its own
 *   expected-version check and validation, and a failure rejects only that append.
 * - An append resolves only after its transaction committed; a retry with the same event ids after an
 *   unknown outcome returns the original result and writes nothing.
 *
 * It composes its parts: the group commit (`group-commit.ts`), the reads (`event-reads.ts`) and the subscriptions
 * (`subscriptions.ts`); chain verification is `verify-log.ts`.
 */
export class EventStore {
  readonly catalogue: EventCatalogue;
  readonly db: Kysely<LedgerDatabase>;
  readonly pool: pg.Pool;
  readonly stats: AppendStats;
  readonly connectionString: string;
  #closed = false;
  readonly #commits: GroupCommit;
  readonly #reads: EventReads;
  readonly #follows: Subscriptions;

  private constructor(options: EventStoreOptions) {
    this.connectionString = options.connectionString;
    this.catalogue = options.catalogue ?? fleetCatalogue;
    this.pool = new pg.Pool({ ...boundedConnection(options.connectionString, options.connectionBounds), max: options.poolSize ?? 8 });
    // A lost connection (server restart, Ctrl-C reaching PostgreSQL) must not crash the process: the pool
    // handles idle clients, and this listener covers checked-out ones between statements, where pg would
    // otherwise emit an unhandled 'error'. The statement in flight still fails, and the caller sees it.
    this.pool.on('error', () => undefined);
    this.pool.on('connect', (client) => client.on('error', () => undefined));
    this.db = new Kysely<LedgerDatabase>({ dialect: new PostgresDialect({ pool: this.pool }) });
    const isClosed = (): boolean => this.#closed;
    this.#commits = new GroupCommit({
      connectionString: options.connectionString,
      connectionBounds: options.connectionBounds,
      catalogue: this.catalogue,
      maxBatchEvents: options.maxBatchEvents ?? 5000,
      appendTimeoutMs: options.appendTimeoutMs ?? 30_000,
      commitResolutionMs: options.commitResolutionMs ?? 30_000,
      maxJsonArrayChars: options.maxJsonArrayChars ?? 32 * 1024 * 1024,
      clock: options.clock,
      storageReserve: options.storageReserve,
    });
    this.stats = this.#commits.stats;
    this.#reads = new EventReads(this.db, this.catalogue, isClosed);
    this.#follows = new Subscriptions({
      reads: this.#reads,
      db: this.db,
      catalogue: this.catalogue,
      connectionString: options.connectionString,
      connectionBounds: options.connectionBounds,
      feedPoolSize: options.feedPoolSize ?? 4,
      pollIntervalMs: options.pollIntervalMs ?? 1000,
      isClosed,
    });
  }

  /** Connects, migrates the schema to the latest version, and returns a ready store. */
  static async open(options: EventStoreOptions): Promise<EventStore> {
    const store = new EventStore(options);
    if (options.migrate !== false) {
      try {
        await migrateToLatest(store.db as unknown as Kysely<unknown>);
      } catch (error) {
        await store.close();
        throw new LedgerError('LEDGER_STORE_UNAVAILABLE', { operation: 'migrate', cause: String(error) }, `could not migrate the ledger schema: ${String(error)}`);
      }
    }
    await store.#commits.connectAhead();
    return store;
  }

  /**
   * Appends events to one stream if it is at the expected version. Resolves after commit with the new
   * stream version and the events' global positions.
   */
  append(stream: string, events: readonly ProposedEvent[], options: AppendOptions = {}): Promise<AppendResult> {
    if (this.#closed) return Promise.reject(new LedgerError('LEDGER_CLOSED', { operation: 'append' }, 'the ledger is closed'));
    return this.#commits.append(stream, events, options);
  }

  /** Events of one stream in version order (or reverse), data upcast to current versions. */
  readStream(stream: string, options: ReadStreamOptions = {}): Promise<RecordedEvent[]> {
    return this.#reads.readStream(stream, options);
  }

  /**
   * Every event of a stream from `fromVersion` (default 1) to its end, read in pages: `readStream` stops at its
   * limit, and a fold over a long stream (a rollout of 25,000 nodes, a site's capacity) needs all of it.
   */
  readStreamToEnd(stream: string, fromVersion = 1, pageSize = 10_000): Promise<RecordedEvent[]> {
    return this.#reads.readStreamToEnd(stream, fromVersion, pageSize);
  }

  /** Events of the whole log in position order, optionally filtered by type and stream prefix. */
  readAll(options: ReadAllOptions = {}): Promise<RecordedEvent[]> {
    return this.#reads.readAll(options);
  }

  /**
   * A page of `readAll` bounded in bytes as well as events: events are taken in order while the payloads before
   * each one total less than `maxBytes` (so the first always comes, however large). The database does the cut, so a
   * page of 5,000 large events never crosses the wire or sits in memory. `cut` says the byte bound ended the page
   * (more matching events follow at once). A payload's bytes are its size as PostgreSQL holds it uncompressed (the
   * binary jsonb: about 1.3 times its text for poll outcomes, more for small payloads), taken once per row: for one
   * page of 20,000 events of a rebuild, 0.3 s of server work against 4.8 s when every payload was written out as
   * text, twice, to be counted (README, replay).
   */
  readAllBounded(options: ReadAllOptions & { maxBytes: number }): Promise<{ events: RecordedEvent[]; cut: boolean }> {
    return this.#reads.readAllBounded(options);
  }

  /** A page of `readStream` (forward) bounded in payload bytes as well as events, as `readAllBounded`. */
  readStreamBounded(stream: string, options: { fromVersion?: number; limit?: number; maxBytes: number }): Promise<{ events: RecordedEvent[]; cut: boolean }> {
    return this.#reads.readStreamBounded(stream, options);
  }

  /**
   * Refuses from now on every append that would take a position at or below `size` (`LEDGER_POSITION_SIGNED`): the
   * transparency log calls it with the size of the tree it folded and the checkpoints it signed or published. On an
   * intact log the head is never behind those, so this costs nothing; on a log whose tail was deleted and whose head
   * was rewound (or an older copy restored), the next append would reuse a signed position and never be signed itself.
   * Only grows.
   */
  refusePositionsUpTo(size: number): void {
    this.#commits.refusePositionsUpTo(size);
  }

  /** The last committed position and its hash (position 0 and the genesis hash for an empty log). */
  head(): Promise<LedgerHead> {
    return this.#reads.head();
  }

  /** Connections of the main pool, the feeds' pool and the group commit's, and callers waiting for one (metrics, tests). */
  poolUse(): { main: PoolUse; feeds: PoolUse | null; append: PoolUse } {
    const use = (pool: pg.Pool): PoolUse => ({ total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount });
    const feeds = this.#follows.feedPool;
    return { main: use(this.pool), feeds: feeds ? use(feeds) : null, append: use(this.#commits.appendPool) };
  }

  /** The current version of a stream, or null when it has no events. */
  streamVersion(stream: string): Promise<number | null> {
    return this.#reads.streamVersion(stream);
  }

  /**
   * Catch-up then live, in position order, never skipping or repeating: pages up to the head as read
   * before the page (every position at or below a read head is committed, because commit order is log
   * order), then waits for a NOTIFY or the polling interval, whichever comes first.
   */
  subscribeBatches(options: SubscribeOptions = {}): Observable<SubscriptionBatch> {
    return this.#follows.subscribeBatches(options);
  }

  /**
   * The paced form of `subscribeBatches`: the next page is read only after `onBatch` settled, so a slow
   * consumer (a projection catching up on millions of events) holds one page in memory, not the log.
   * Resolves when `signal` aborts or the store closes; rejects with the first error of `onBatch`, or of a read
   * that is not the database being away: a lost connection or a restarting server pauses the follower (retried
   * with backoff, see store-outage.ts), so no follower ends its process on an outage.
   */
  follow(options: SubscribeOptions, onBatch: (batch: SubscriptionBatch) => Promise<void> | void, signal?: AbortSignal): Promise<void> {
    return this.#follows.follow(options, onBatch, signal);
  }

  /** `subscribeBatches`, one event at a time; each event's position is its checkpoint. */
  subscribe(options: SubscribeOptions = {}): Observable<RecordedEvent> {
    return this.#follows.subscribe(options);
  }

  /**
   * Recomputes the hash chain over [from, to] (default: the whole log) and reports the first position
   * whose row was altered, deleted, inserted or moved; head and rows are read in one snapshot (`verify-log.ts`).
   */
  verifyChain(options: { from?: number; to?: number } = {}): Promise<ChainVerification> {
    return this.#reads.read('verify', () => verifyLog(this.db, options));
  }

  /** Waits for queued appends, stops subscriptions and closes connections. */
  async close(): Promise<void> {
    if (this.#closed) return;
    while (this.#commits.flushing) await this.#commits.flushing;
    this.#closed = true;
    await this.#follows.close();
    await this.#commits.close();
    await this.db.destroy();
  }
}
