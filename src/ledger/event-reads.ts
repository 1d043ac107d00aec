/**
 * Reads of the log: one stream, the whole log (filtered), pages bounded in bytes, the head and a stream's version.
 * Every read answers `LEDGER_CLOSED` once the store is closed and `LEDGER_STORE_UNAVAILABLE` (retryable) when the
 * database cannot be reached; payloads are upcast to their current schema versions.
 */
import { sql, type Kysely, type Selectable, type SelectQueryBuilder } from 'kysely';
import type { EventCatalogue, RecordedEvent } from '../../events/index.js';
import type { LedgerDatabase, LedgerEventsTable } from './database.js';
import { recordedEvent, type EventRow } from './event-row.js';
import { LedgerError, isLedgerError } from './ledger-error.js';

/** An ordered, limited page of the log, before a byte bound is put on it. */
type EventPage = SelectQueryBuilder<LedgerDatabase, 'ledger_events', Selectable<LedgerEventsTable>>;

export interface ReadStreamOptions {
  /** First stream version to return (forward) or the highest (backward). */
  fromVersion?: number;
  direction?: 'forward' | 'backward';
  limit?: number;
  /** Only events of these types (the database leaves the others unread: a node's stream holds every observation). */
  types?: readonly string[];
  /** Forward reads: no event past this stream version. */
  toVersion?: number;
}

export interface ReadAllOptions {
  /** First global position to return (inclusive). Positions start at 1. */
  fromPosition?: number;
  /** Last global position to return (inclusive). */
  toPosition?: number;
  limit?: number;
  types?: readonly string[];
  streamPrefix?: string;
}

export interface LedgerHead {
  position: number;
  hash: string;
  recordedAt: Date;
}

function escapeLike(prefix: string): string {
  return prefix.replace(/[\\%_]/g, (c) => `\\${c}`);
}

/** The reads of one store, through its main pool (or, for `headOn` and `readAllQuery`, a pool given). */
export class EventReads {
  readonly #db: Kysely<LedgerDatabase>;
  readonly #catalogue: EventCatalogue;
  readonly #isClosed: () => boolean;

  constructor(db: Kysely<LedgerDatabase>, catalogue: EventCatalogue, isClosed: () => boolean) {
    this.#db = db;
    this.#catalogue = catalogue;
    this.#isClosed = isClosed;
  }

  /** Events of one stream in version order (or reverse), data upcast to current versions. */
  async readStream(stream: string, options: ReadStreamOptions = {}): Promise<RecordedEvent[]> {
    const direction = options.direction ?? 'forward';
    let query = this.#db.selectFrom('ledger_events').selectAll().where('stream', '=', stream);
    if (options.fromVersion !== undefined) query = query.where('stream_version', direction === 'forward' ? '>=' : '<=', options.fromVersion);
    if (options.toVersion !== undefined) query = query.where('stream_version', '<=', options.toVersion);
    if (options.types) query = options.types.length > 0 ? query.where('type', 'in', [...options.types]) : query.where(sql<boolean>`false`);
    const rows = await this.read('readStream', () =>
      query
        .orderBy('stream_version', direction === 'forward' ? 'asc' : 'desc')
        .limit(options.limit ?? 10_000)
        .execute(),
    );
    return rows.map((row) => recordedEvent(row as unknown as EventRow, this.#catalogue));
  }

  /**
   * Every event of a stream from `fromVersion` (default 1) to its end, read in pages: `readStream` stops at its
   * limit, and a fold over a long stream (a rollout of 25,000 nodes, a site's capacity) needs all of it.
   */
  async readStreamToEnd(stream: string, fromVersion = 1, pageSize = 10_000): Promise<RecordedEvent[]> {
    const events: RecordedEvent[] = [];
    for (let from = fromVersion; ; ) {
      const page = await this.readStream(stream, { fromVersion: from, limit: pageSize });
      for (const event of page) events.push(event);
      if (page.length < pageSize) return events;
      from = page[page.length - 1]!.streamVersion + 1;
    }
  }

  /** Events of the whole log in position order, optionally filtered by type and stream prefix. */
  async readAll(options: ReadAllOptions = {}): Promise<RecordedEvent[]> {
    const rows = await this.read('readAll', () => this.readAllQuery(options).execute());
    return rows.map((row) => recordedEvent(row as unknown as EventRow, this.#catalogue));
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
  async readAllBounded(options: ReadAllOptions & { maxBytes: number }): Promise<{ events: RecordedEvent[]; cut: boolean }> {
    return this.#readBounded('readAll', this.readAllQuery(options), 'position', options.maxBytes);
  }

  /** A page of `readStream` (forward) bounded in payload bytes as well as events, as `readAllBounded`. */
  async readStreamBounded(stream: string, options: { fromVersion?: number; limit?: number; maxBytes: number }): Promise<{ events: RecordedEvent[]; cut: boolean }> {
    const query = this.#db
      .selectFrom('ledger_events')
      .selectAll()
      .where('stream', '=', stream)
      .where('stream_version', '>=', options.fromVersion ?? 1)
      .orderBy('stream_version', 'asc')
      .limit(options.limit ?? 10_000);
    return this.#readBounded('readStream', query, 'stream_version', options.maxBytes);
  }

  /** Takes the rows of an ordered, limited page while the payloads before each total less than `maxBytes`. */
  async #readBounded(
    operation: string,
    page: EventPage,
    order: 'position' | 'stream_version',
    maxBytes: number,
  ): Promise<{ events: RecordedEvent[]; cut: boolean }> {
    const rows = await this.read(operation, () =>
      this.#db
        .selectFrom(
          this.#db
            // Each payload's size taken once, in the limited page (`|| '{}'` makes PostgreSQL decompress it).
            .selectFrom(page.select(sql<number>`pg_column_size(data || '{}'::jsonb)`.as('own_bytes')).as('page'))
            .selectAll('page')
            .select([sql<number>`sum(page.own_bytes) OVER (ORDER BY ${sql.ref(`page.${order}`)})`.as('running_bytes'), sql<number>`count(*) OVER ()`.as('page_rows')])
            .as('sized'),
        )
        .selectAll('sized')
        .where(sql<boolean>`sized.running_bytes - sized.own_bytes < ${maxBytes}`)
        .orderBy(`sized.${order}`, 'asc')
        .execute(),
    );
    const pageRows = rows.length > 0 ? Number((rows[0] as { page_rows: number | string }).page_rows) : 0;
    return { events: rows.map((row) => recordedEvent(row as unknown as EventRow, this.#catalogue)), cut: rows.length < pageRows };
  }

  /** The query of a `readAll` page, on `db` (the main pool by default). */
  readAllQuery(options: ReadAllOptions, db: Kysely<LedgerDatabase> = this.#db) {
    let query = db.selectFrom('ledger_events').selectAll().where('position', '>=', options.fromPosition ?? 1);
    if (options.toPosition !== undefined) query = query.where('position', '<=', options.toPosition);
    if (options.types && options.types.length > 0) query = query.where('type', 'in', [...options.types]);
    if (options.streamPrefix) query = query.where(sql<boolean>`stream LIKE ${`${escapeLike(options.streamPrefix)}%`}`);
    return query.orderBy('position', 'asc').limit(options.limit ?? 1000);
  }

  /** The last committed position and its hash (position 0 and the genesis hash for an empty log). */
  async head(): Promise<LedgerHead> {
    return this.headOn(this.#db);
  }

  /** `head`, read through `db`. */
  async headOn(db: Kysely<LedgerDatabase>): Promise<LedgerHead> {
    const row = await this.read('head', () => db.selectFrom('ledger_head').select(['position', 'hash', 'recorded_at']).executeTakeFirstOrThrow());
    return { position: Number(row.position), hash: row.hash.toString('hex'), recordedAt: row.recorded_at };
  }

  /** The current version of a stream, or null when it has no events. */
  async streamVersion(stream: string): Promise<number | null> {
    const row = await this.read('streamVersion', () => this.#db.selectFrom('ledger_streams').select('version').where('stream', '=', stream).executeTakeFirst());
    return row ? row.version : null;
  }

  /** Runs a read, answering `LEDGER_CLOSED` after close and `LEDGER_STORE_UNAVAILABLE` for a database away. */
  async read<T>(operation: string, run: () => Promise<T>): Promise<T> {
    if (this.#isClosed()) throw new LedgerError('LEDGER_CLOSED', { operation }, 'the ledger is closed');
    try {
      return await run();
    } catch (error) {
      if (isLedgerError(error)) throw error;
      throw new LedgerError('LEDGER_STORE_UNAVAILABLE', { operation, cause: String(error) }, `${operation} failed: ${String(error)}`);
    }
  }
}
