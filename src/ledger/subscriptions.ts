/**
 * Subscriptions: followers of the log, catch-up then live, in position order, never skipping or repeating. Woken by
 * the NOTIFY every append sends (one LISTEN connection per store) or by the polling interval, whichever comes first;
 * paused, not ended, while the database is away (see `store-outage.ts`). `follow` is the paced form; the rxjs
 * Observables (`subscribeBatches`, `subscribe`) are built on it.
 */
import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import { Observable, Subject } from 'rxjs';
import type { EventCatalogue, RecordedEvent } from '../../events/index.js';
import { APPENDED_CHANNEL } from './append-lock.js';
import { boundedConnection, type ConnectionBounds } from './connection-bounds.js';
import type { LedgerDatabase } from './database.js';
import { recordedEvent, type EventRow } from './event-row.js';
import type { EventReads, LedgerHead } from './event-reads.js';
import { isStoreUnavailable, outageBackoffMs } from './store-outage.js';

export interface SubscribeOptions {
  fromPosition?: number;
  /**
   * `feeds`: read through a small pool of its own (`feedPoolSize`), for followers outside the process (the API's live
   * feed): however many of them wake at each append, appends and the projections never wait for a connection
   * behind them. Default `main`.
   */
  pool?: 'main' | 'feeds';
  /** Deliver batches with no matching events too, so a filtered consumer's checkpoint keeps up with the head. */
  reportEmptyBatches?: boolean;
  types?: readonly string[];
  streamPrefix?: string;
  batchSize?: number;
}

/**
 * A batch delivered by a subscription. `checkpoint` is the highest position this subscription has
 * examined (even when filters dropped some events); persist it and resume from `checkpoint + 1`.
 */
export interface SubscriptionBatch {
  events: RecordedEvent[];
  checkpoint: number;
}

/** What subscriptions read through and how: the store's reads, its main pool, and the settings of the feeds' pool. */
export interface SubscriptionsOptions {
  reads: EventReads;
  db: Kysely<LedgerDatabase>;
  catalogue: EventCatalogue;
  connectionString: string;
  connectionBounds: Partial<ConnectionBounds> | undefined;
  feedPoolSize: number;
  pollIntervalMs: number;
  isClosed: () => boolean;
}

/** The followers of one store, its LISTEN connection and the feeds' pool. */
export class Subscriptions {
  readonly #options: SubscriptionsOptions;
  #listener: pg.Client | null = null;
  #listenerStarting: Promise<void> | null = null;
  readonly #appended = new Subject<number>();
  readonly #subscriptions = new Set<() => void>();
  #feedDb: Kysely<LedgerDatabase> | null = null;
  #feedPool: pg.Pool | null = null;

  constructor(options: SubscriptionsOptions) {
    this.#options = options;
  }

  /** The feeds' pool, once opened (for `poolUse`). */
  get feedPool(): pg.Pool | null {
    return this.#feedPool;
  }

  /** The feeds' own pool, opened at first use. */
  #feeds(): Kysely<LedgerDatabase> {
    if (!this.#feedDb) {
      const pool = new pg.Pool({ ...boundedConnection(this.#options.connectionString, this.#options.connectionBounds), max: this.#options.feedPoolSize });
      pool.on('error', () => undefined);
      pool.on('connect', (client) => client.on('error', () => undefined));
      this.#feedPool = pool;
      this.#feedDb = new Kysely<LedgerDatabase>({ dialect: new PostgresDialect({ pool }) });
    }
    return this.#feedDb;
  }

  /**
   * Catch-up then live, in position order, never skipping or repeating: pages up to the head as read
   * before the page (every position at or below a read head is committed, because commit order is log
   * order), then waits for a NOTIFY or the polling interval, whichever comes first.
   */
  subscribeBatches(options: SubscribeOptions = {}): Observable<SubscriptionBatch> {
    return new Observable<SubscriptionBatch>((subscriber) => {
      const abort = new AbortController();
      this.follow(options, (batch) => subscriber.next(batch), abort.signal).then(
        () => subscriber.complete(),
        (error: unknown) => subscriber.error(error),
      );
      return () => abort.abort();
    });
  }

  /**
   * The paced form of `subscribeBatches`: the next page is read only after `onBatch` settled, so a slow
   * consumer (a projection catching up on millions of events) holds one page in memory, not the log.
   * Resolves when `signal` aborts or the store closes; rejects with the first error of `onBatch`, or of a read
   * that is not the database being away: a lost connection or a restarting server pauses the follower (retried
   * with backoff, see store-outage.ts), so no follower ends its process on an outage.
   */
  async follow(options: SubscribeOptions, onBatch: (batch: SubscriptionBatch) => Promise<void> | void, signal?: AbortSignal): Promise<void> {
    const batchSize = options.batchSize ?? 500;
    let next = Math.max(1, options.fromPosition ?? 1);
    let stopped = signal?.aborted ?? false;
    let wake: (() => void) | null = null;
    const woken = this.#appended.subscribe(() => wake?.());
    const stop = (): void => {
      stopped = true;
      wake?.();
    };
    signal?.addEventListener('abort', stop);
    this.#subscriptions.add(stop);
    void this.#ensureListener();
    try {
      const db = options.pool === 'feeds' ? this.#feeds() : this.#options.db;
      let outage = 0;
      while (!stopped) {
        let page: { head: LedgerHead; rows: unknown[] };
        try {
          const head = await this.#options.reads.headOn(db);
          const query = { fromPosition: next, toPosition: head.position, limit: batchSize, types: options.types, streamPrefix: options.streamPrefix };
          page = { head, rows: head.position >= next ? await this.#options.reads.read('follow', () => this.#options.reads.readAllQuery(query, db).execute()) : [] };
          outage = 0;
        } catch (error) {
          // The store away (a restart, a failover) pauses the follower, never ends it: it reads again from where it
          // was, with backoff, so nothing is skipped or repeated and the process outlives its database.
          if (stopped) return;
          if (!isStoreUnavailable(error)) throw error;
          await this.#sleep(outageBackoffMs(outage++), (resolve) => (wake = resolve));
          wake = null;
          continue;
        }
        const { head, rows } = page;
        if (head.position >= next) {
          const events = rows.map((row) => recordedEvent(row as EventRow, this.#options.catalogue));
          if (stopped) return;
          const full = events.length === batchSize;
          const checkpoint = full ? events[events.length - 1]!.position : head.position;
          if (events.length > 0 || options.reportEmptyBatches) await onBatch({ events, checkpoint });
          next = checkpoint + 1;
          if (full) continue;
        }
        if (stopped) return;
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, this.#options.pollIntervalMs);
          wake = () => {
            clearTimeout(timer);
            resolve();
          };
        });
        wake = null;
      }
    } finally {
      woken.unsubscribe();
      signal?.removeEventListener('abort', stop);
      this.#subscriptions.delete(stop);
    }
  }

  /** Resolves after `ms`, or as soon as the function handed to `onWake` is called (an append, a stop). */
  #sleep(ms: number, onWake: (wake: () => void) => void): Promise<void> {
    return new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ms);
      onWake(() => {
        clearTimeout(timer);
        resolve();
      });
    });
  }

  /** `subscribeBatches`, one event at a time; each event's position is its checkpoint. */
  subscribe(options: SubscribeOptions = {}): Observable<RecordedEvent> {
    return new Observable<RecordedEvent>((subscriber) => {
      const inner = this.subscribeBatches(options).subscribe({
        next: (batch) => {
          for (const event of batch.events) subscriber.next(event);
        },
        error: (error: unknown) => subscriber.error(error),
        complete: () => subscriber.complete(),
      });
      return () => inner.unsubscribe();
    });
  }

  /** One LISTEN connection per store, shared by its subscriptions; reconnects after a loss. */
  async #ensureListener(): Promise<void> {
    if (this.#listener || this.#listenerStarting || this.#options.isClosed()) return this.#listenerStarting ?? undefined;
    this.#listenerStarting = (async () => {
      const client = new pg.Client(boundedConnection(this.#options.connectionString));
      client.on('notification', (message) => this.#appended.next(Number(message.payload)));
      client.on('error', () => {
        // Polling keeps subscriptions correct meanwhile; reconnect in the background.
        this.#listener = null;
        void client.end().catch(() => undefined);
        if (!this.#options.isClosed()) setTimeout(() => void this.#ensureListener(), 1000).unref();
      });
      try {
        await client.connect();
        await client.query(`LISTEN ${APPENDED_CHANNEL}`);
        if (this.#options.isClosed()) await client.end();
        else this.#listener = client;
      } catch {
        await client.end().catch(() => undefined);
        if (!this.#options.isClosed()) setTimeout(() => void this.#ensureListener(), 1000).unref();
      }
    })().finally(() => {
      this.#listenerStarting = null;
    });
    return this.#listenerStarting;
  }

  /** Stops every follower, completes the wake-ups and closes the LISTEN connection and the feeds' pool. */
  async close(): Promise<void> {
    for (const stop of this.#subscriptions) stop();
    this.#appended.complete();
    const listener = this.#listener;
    this.#listener = null;
    if (this.#listenerStarting) await this.#listenerStarting.catch(() => undefined);
    await listener?.end().catch(() => undefined);
    await this.#feedDb?.destroy();
  }
}
