import { Kysely, PostgresDialect, sql, type Selectable, type SelectQueryBuilder } from 'kysely';
import pg from 'pg';
import { Observable, Subject } from 'rxjs';
import { fleetCatalogue, type EventCatalogue, type ProposedEvent, type RecordedEvent } from '../../events/index.js';
import type { AppendOptions, AppendResult, ExpectedVersion } from './append-types.js';
import { chainHashBytes } from './canonical-json.js';
import type { LedgerDatabase, LedgerEventsTable } from './database.js';
import { recordedEvent, type EventRow } from './event-row.js';
import { LedgerError, isLedgerError } from './ledger-error.js';
import { arrayLiteral, arrayParameter } from './sql-literal.js';
import { migrateToLatest } from './migrations/index.js';
import { boundedConnection, type ConnectionBounds } from './connection-bounds.js';
import { chainText, contentDigest, prepareAppend, type PreparedEvent } from './prepare-append.js';
import { StorageReserve, isDiskFullError } from './storage-reserve.js';
import { isStoreUnavailable, outageBackoffMs } from './store-outage.js';
import { fastTimestamptzParser, pgTimestamptzParser } from './timestamp-parser.js';
import { verifyLog, type ChainVerification } from './verify-log.js';

/** An ordered, limited page of the log, before a byte bound is put on it. */
type EventPage = SelectQueryBuilder<LedgerDatabase, 'ledger_events', Selectable<LedgerEventsTable>>;

// int8 as JS number: positions stay far below 2^53 (9e15 events).
pg.types.setTypeParser(pg.types.builtins.INT8, (value) => Number(value));
// timestamptz by character codes (every event carries two); pg's own parser for any other form.
pg.types.setTypeParser(pg.types.builtins.TIMESTAMPTZ, fastTimestamptzParser(pgTimestamptzParser));

/** The key of the transaction-scoped advisory lock every append takes: one writer at a time, log-wide. */
export const APPEND_LOCK_KEY = 0x0f1ee7_1ed6;
export const APPENDED_CHANNEL = 'fleet_ledger_appended';

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

export interface ReadStreamOptions {
  /** First stream version to return (forward) or the highest (backward). */
  fromVersion?: number;
  direction?: 'forward' | 'backward';
  limit?: number;
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

export interface LedgerHead {
  position: number;
  hash: string;
  recordedAt: Date;
}

export type { ChainVerification } from './verify-log.js';

/** Counters for metrics: what group commit is doing. */
export interface AppendStats {
  batches: number;
  appends: number;
  events: number;
  lastBatchAppends: number;
  maxBatchAppends: number;
  /** Batches committed in one round trip (this process had written the head last). */
  oneRoundTripBatches: number;
  /** One-round-trip guesses that found the log moved (nothing written; the batch then took two round trips). */
  speculationMisses: number;
}

interface PendingAppend {
  stream: string;
  events: PreparedEvent[];
  expected: ExpectedVersion;
  resolve: (result: AppendResult) => void;
  reject: (error: unknown) => void;
}

type Settled = Array<{ ok: true; result: AppendResult } | { ok: false; error: unknown }>;

/** What a batch is chained onto: read under the append lock, or (one round trip) as this process last left it. */
interface BatchBasis {
  position: number;
  hash: Buffer;
  recordedAt: Date;
  versions: Map<string, number>;
  known: Map<string, StoredIdentity>;
  leases: Map<string, { epoch: number; owner: string | null; released: boolean }>;
  sagaLeases: Map<string, { epoch: number; owner: string }>;
}

/** A batch chained onto its basis: the rows to write, the streams' new versions, each append's outcome, the new head. */
interface Assembled {
  columns: WriteColumns;
  touched: Map<string, { version: number; lastPosition: number }>;
  settled: Settled;
  position: number;
  hash: Buffer;
}

/** How far a one-round-trip batch's `recorded_at` may be from the database's clock, in seconds. */
const CLOCK_BOUND_S = 0.25;
/** Streams whose versions a store keeps to assume in one-round-trip batches. */
const KNOWN_STREAMS_MAX = 100_000;

function leaseOf(event: PreparedEvent): unknown {
  return 'lease' in event.actor ? event.actor.lease : undefined;
}

interface StoredIdentity {
  stream: string;
  position: number;
  streamVersion: number;
  /** The stored content's digest, or the event an earlier append of this batch writes (its digest asked only if needed). */
  content: string | PreparedEvent;
}

/** An already-stored event as the group-commit read returns it (JSON, not typed columns). */
interface ExistingRow {
  event_id: string;
  stream: string;
  stream_version: number;
  position: number;
  type: string;
  schema_version: number;
  observed_at: string | null;
  actor: unknown;
  correlation_id: string | null;
  causation_id: string | null;
  data: unknown;
}

function storedIdentity(row: ExistingRow): StoredIdentity {
  return {
    stream: row.stream,
    position: Number(row.position),
    streamVersion: row.stream_version,
    content: contentDigest(row.stream, {
      type: row.type,
      schemaVersion: row.schema_version,
      data: row.data,
      observedAt: row.observed_at === null ? null : new Date(row.observed_at),
      actor: row.actor as RecordedEvent['actor'],
      correlationId: row.correlation_id,
      causationId: row.causation_id,
    }),
  };
}

/** The statements that write one group commit: rows, stream versions, the head, and the NOTIFY. */
/** An error the server answered with (a statement failed, a deadline passed): the transaction did not commit. */
function isStatementError(error: unknown): boolean {
  const candidate = error as { code?: unknown; severity?: unknown };
  return typeof candidate?.code === 'string' && /^[0-9A-Z]{5}$/.test(candidate.code) && typeof candidate.severity === 'string';
}

/**
 * A one-round-trip write refused by a unique index because what it assumed was wrong: its stream already holds that
 * version (unique on (stream, stream_version)), or an event id its caller gave is stored already (a retry).
 */
function isGuessRefused(error: unknown): boolean {
  const candidate = error as { code?: unknown; constraint?: unknown };
  return isStatementError(error) && candidate.code === '23505' && (candidate.constraint === 'ledger_events_stream_version' || candidate.constraint === 'ledger_events_event_id_key');
}

/** The columns of one group commit's new rows, as the arrays its one INSERT unnests. */
interface WriteColumns {
  position: number[];
  eventId: string[];
  stream: string[];
  version: number[];
  type: string[];
  schemaVersion: number[];
  observedAt: Array<string | null>;
  actor: string[];
  correlationId: Array<string | null>;
  causationId: Array<string | null>;
  data: string[];
  /** The chain: the head's hash, then each row's, 32 bytes each (row k's prev_hash is hash k-1). */
  hashes: Buffer[];
}

function emptyColumns(): WriteColumns {
  return { position: [], eventId: [], stream: [], version: [], type: [], schemaVersion: [], observedAt: [], actor: [], correlationId: [], causationId: [], data: [], hashes: [] };
}

/**
 * One parameterised statement that writes a group commit: the rows (no SQL text grows with the batch, and nothing in it
 * is escaped by hand), the streams' versions, the head, and the NOTIFY. Scalar columns are arrays zipped by
 * `ROWS FROM`; `data` and `actor`, already canonical JSON, go as one JSON array each (joined, not escaped element by
 * element as a text array would be); the hashes as one binary parameter of 32 bytes per row after the head's.
 * Data-modifying CTEs all run, to completion, whether or not the final SELECT reads them.
 */
function writeStatement(
  columns: WriteColumns,
  touched: Map<string, { version: number; lastPosition: number }>,
  position: number,
  headHash: Buffer,
  recordedAt: Date,
  maxJsonArrayChars: number,
  guard: WriteGuard | null = null,
): { name: string; text: string; values: unknown[] } {
  const streams = [...touched.entries()];
  // PostgreSQL refuses a jsonb array past 256 MB, and a jsonb can be several times its text (numbers, headers): a
  // batch whose JSON is larger sends one text per row instead, as a text array.
  let chars = 0;
  for (const text of columns.data) chars += text.length;
  for (const text of columns.actor) chars += text.length;
  const asArrays = chars <= maxJsonArrayChars;
  const elements = (parameter: number): string => (asArrays ? `jsonb_array_elements($${parameter}::jsonb)` : `unnest($${parameter}::text[])`);
  // A guarded write (one round trip, see `EventStore.#speculate`) writes only if the head and the clock are as the batch
  // was assembled against; every part is conditioned on the guard, evaluated once under the lock. (The streams' versions
  // need no guard: the unique index on (stream, stream_version) refuses a row whose version is taken.)
  const onlyIf = guard ? ' WHERE (SELECT ok FROM guard)' : '';
  return {
    name: `${WRITE_STATEMENT}${asArrays ? '' : '-texts'}${guard ? '-guarded' : ''}`,
    text: `WITH ${guard ? `guard AS (
        SELECT (SELECT position = $20::bigint AND hash = substring($13::bytea FROM 1 FOR 32) FROM ledger_head)
           AND abs(extract(epoch FROM clock_timestamp() - $7::timestamptz)) <= $21::float8 AS ok
      ), ` : ''}written AS (
        INSERT INTO ledger_events (position, event_id, stream, stream_version, type, schema_version, recorded_at, observed_at, actor, correlation_id, causation_id, data, prev_hash, hash)
        SELECT p, i, s, v, t, sv, $7::timestamptz, o, a::jsonb, c, ca, d::jsonb, substring($13::bytea FROM (n::int - 1) * 32 + 1 FOR 32), substring($13::bytea FROM n::int * 32 + 1 FOR 32)
          FROM ROWS FROM (unnest($1::bigint[]), unnest($2::uuid[]), unnest($3::text[]), unnest($4::int[]), unnest($5::text[]), unnest($6::int[]), unnest($8::timestamptz[]),
                          ${elements(9)}, unnest($10::text[]), unnest($11::text[]), ${elements(12)}) WITH ORDINALITY
            AS u(p, i, s, v, t, sv, o, a, c, ca, d, n)${onlyIf}
      ), versions AS (
        INSERT INTO ledger_streams (stream, version, last_position, created_at, updated_at)
        SELECT s, v, l, $7::timestamptz, $7::timestamptz FROM unnest($14::text[], $15::int[], $16::bigint[]) AS u(s, v, l)${onlyIf}
        ON CONFLICT (stream) DO UPDATE SET version = EXCLUDED.version, last_position = EXCLUDED.last_position, updated_at = EXCLUDED.updated_at
      ), head AS (
        UPDATE ledger_head SET position = $17::bigint, hash = $18::bytea, recorded_at = $7::timestamptz${onlyIf}
      )${guard ? `, notified AS (
        SELECT pg_notify('${APPENDED_CHANNEL}', $19::text) FROM guard WHERE ok
      )
      SELECT CASE WHEN ok THEN 'written' ELSE 'refused' END AS outcome, (SELECT count(*) FROM notified) AS notified FROM guard` : `
      SELECT pg_notify('${APPENDED_CHANNEL}', $19::text)`}`,
    values: [
      arrayParameter(columns.position), arrayParameter(columns.eventId), arrayParameter(columns.stream), arrayParameter(columns.version), arrayParameter(columns.type),
      arrayParameter(columns.schemaVersion), recordedAt.toISOString(), arrayParameter(columns.observedAt),
      asArrays ? `[${columns.actor.join(',')}]` : arrayParameter(columns.actor), arrayParameter(columns.correlationId), arrayParameter(columns.causationId),
      asArrays ? `[${columns.data.join(',')}]` : arrayParameter(columns.data), Buffer.concat(columns.hashes),
      streams.map(([stream]) => stream), streams.map(([, t]) => t.version), streams.map(([, t]) => t.lastPosition),
      position, headHash, String(position),
      ...(guard ? [guard.headPosition, guard.clockBoundS] : []),
    ],
  };
}

/** What a one-round-trip write checks under the lock before it writes anything (see `EventStore.#speculate`). */
interface WriteGuard {
  /** The head the batch was chained onto (its hash is the first of the write's hashes). */
  headPosition: number;
  /** How far `recorded_at` may be from the database's clock, in seconds (Infinity with a clock given for tests). */
  clockBoundS: number;
}

/** A pool's connections (open, idle) and the callers waiting for one. */
export interface PoolUse {
  total: number;
  idle: number;
  waiting: number;
}

/** The name of the group commit's write: parsed and planned once per connection, not at every commit. */
const WRITE_STATEMENT = 'fleet-ledger-append-write';

/** What pg's Query does: Parse, Bind, Describe, then `_getRows` (Execute, Sync). Not in pg's types; present in pg 8 (checked before use). */
type QueryInternals = {
  _getRows?: (connection: pg.Connection, rows?: number) => void;
  prepare?: (connection: pg.Connection) => void;
  portal: string;
};
type ConnectionInternals = pg.Connection & { submittedNamedStatements?: Record<string, string>; parsedStatements?: Record<string, string> };

/**
 * A group commit's write and its COMMIT in one round trip: the write (the named statement, bound to this commit's
 * arrays), then COMMIT, in one extended-protocol sequence that ends in one Sync. If the write fails, the server skips
 * the COMMIT (it discards every message up to the Sync) and the transaction stays open, aborted, for the ROLLBACK.
 * pg has no public way to put two statements before one Sync: its Query sends Execute and Sync from `_getRows`, which
 * is replaced on this one query object; a pg without it gets the COMMIT in a round trip of its own.
 *
 * With `prelude` (statements without parameters, each answering at most a row), those run first in the same sequence:
 * the transaction's BEGIN, its settings and the lock, so the whole transaction is one round trip. The write's Parse
 * goes first of all, so the statement name pg records as parsed on the first ParseComplete is the write's own. Where
 * pg lacks the internals this needs, null is returned before anything is sent, and the caller takes its other path.
 * Returns the write's rows.
 */
async function writeAndCommit(
  client: pg.PoolClient,
  statement: { name: string; text: string; values: unknown[] },
  prelude: readonly string[] = [],
): Promise<Array<Record<string, unknown>> | null> {
  const pgQuery = pg.Query.prototype as unknown as QueryInternals;
  const connection = (client as unknown as { connection?: ConnectionInternals }).connection;
  if (prelude.length > 0 && (typeof pgQuery._getRows !== 'function' || typeof pgQuery.prepare !== 'function' || !connection?.submittedNamedStatements || !connection.parsedStatements)) return null;
  const results = await new Promise<unknown>((resolve, reject) => {
    const query = new pg.Query({ name: statement.name, text: statement.text, values: statement.values }, (error, result) => (error ? reject(error) : resolve(result)));
    const internals = query as unknown as QueryInternals;
    if (typeof internals._getRows === 'function') {
      internals._getRows = (connection) => {
        // (pg's types still name a `more` argument that pg 8 no longer reads; the stream is corked until the Sync.)
        connection.execute({ portal: internals.portal }, true);
        connection.bind({ statement: parsedOnce(connection, 'COMMIT') }, true);
        connection.execute({}, true);
        connection.sync();
      };
    }
    if (prelude.length > 0) {
      const prepare = internals.prepare!.bind(query);
      internals.prepare = (connection) => {
        const named = connection as ConnectionInternals;
        if (named.parsedStatements![statement.name] === undefined && named.submittedNamedStatements![statement.name] === undefined) {
          connection.parse({ name: statement.name, text: statement.text, types: [] }, true);
          named.submittedNamedStatements![statement.name] = statement.text;
        }
        for (const text of prelude) {
          connection.bind({ statement: parsedOnce(connection, text) }, true);
          // Described, so a row it answers (the lock's void) comes with its columns, as pg's result parsing needs.
          connection.describe({ type: 'P', name: '' }, true);
          connection.execute({}, true);
        }
        prepare(connection);
      };
    }
    void client.query(query);
  });
  // Every statement of the sequence ran, so the ones parsed in it exist on this connection from now on.
  if (connection) confirmParsed(connection, prelude);
  const all = (Array.isArray(results) ? results : [results]) as pg.QueryResult[];
  const commands = all.map((result) => result.command);
  const write = all[prelude.length];
  if (commands.length === prelude.length + 1) {
    await client.query('COMMIT');
  } else if (commands[prelude.length + 1] !== 'COMMIT') {
    // A transaction the server had already aborted answers COMMIT with ROLLBACK: nothing was written.
    const answer = String(commands[prelude.length + 1]);
    throw new LedgerError('LEDGER_STORE_UNAVAILABLE', { operation: 'append', cause: `COMMIT answered ${answer}` }, `append transaction failed, nothing was committed: COMMIT answered ${answer}`);
  }
  return (write?.rows ?? []) as Array<Record<string, unknown>>;
}

/**
 * The transaction's own statements (BEGIN, its settings, the lock, COMMIT) are parsed once per connection under names
 * of their own, not at every append: a one-event append is mostly such statements, and parsing them was a tenth of its
 * time on the server. A name counts as parsed only once a sequence that parsed it has completed: a sequence that fails
 * earlier makes the server skip the rest, the Parse included, so the next use sends Close (not an error for a name that
 * does not exist) and Parse again.
 */
const parsedOnConnection = new WeakMap<object, Set<string>>();
const statementNames = new Map<string, string>();
const STATEMENT_NAMES_MAX = 64;

/** The name to bind for `text` on `connection`, sending its Close and Parse first unless it is known parsed there. */
function parsedOnce(connection: pg.Connection, text: string): string {
  let name = statementNames.get(text);
  if (name === undefined) {
    // The texts are a handful per store (its settings carry its timeout); past the cap, a text is parsed unnamed each time.
    if (statementNames.size >= STATEMENT_NAMES_MAX) {
      connection.parse({ name: '', text, types: [] }, true);
      return '';
    }
    name = `fleet-ledger-tx-${statementNames.size}`;
    statementNames.set(text, name);
  }
  if (!parsedOnConnection.get(connection)?.has(text)) {
    (connection as pg.Connection & { close(message: { type: 'S'; name: string }): void }).close({ type: 'S', name });
    connection.parse({ name, text, types: [] }, true);
  }
  return name;
}

function confirmParsed(connection: object, prelude: readonly string[]): void {
  let parsed = parsedOnConnection.get(connection);
  if (!parsed) parsedOnConnection.set(connection, (parsed = new Set()));
  for (const text of prelude) parsed.add(text);
  parsed.add('COMMIT');
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

function escapeLike(prefix: string): string {
  return prefix.replace(/[\\%_]/g, (c) => `\\${c}`);
}

function expectedMatches(expected: ExpectedVersion, exists: boolean, version: number): boolean {
  switch (expected) {
    case 'any':
      return true;
    case 'no_stream':
      return !exists;
    case 'stream_exists':
      return exists;
    default:
      return version === expected;
  }
}

function describeExpected(expected: ExpectedVersion): string {
  return typeof expected === 'number' ? `version ${expected}` : expected;
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
 */
export class EventStore {
  readonly catalogue: EventCatalogue;
  readonly db: Kysely<LedgerDatabase>;
  readonly pool: pg.Pool;
  /** The group commit's connection, apart from `pool` so its session settings bound appends only (see the constructor). */
  readonly #appendPool: pg.Pool;
  /** Per append connection: whether it has the settings its pool asked for (see `#hasSessionSettings`). */
  readonly #sessionSettings = new WeakMap<pg.PoolClient, boolean>();
  readonly #options: Required<Pick<EventStoreOptions, 'maxBatchEvents' | 'pollIntervalMs' | 'appendTimeoutMs' | 'commitResolutionMs' | 'maxJsonArrayChars'>> & { clock: (() => Date) | undefined };
  readonly #queue: PendingAppend[] = [];
  #flushing: Promise<void> | null = null;
  #closed = false;
  readonly #reserve: StorageReserve | null;
  #listener: pg.Client | null = null;
  #listenerStarting: Promise<void> | null = null;
  readonly #appended = new Subject<number>();
  readonly #subscriptions = new Set<() => void>();
  readonly stats: AppendStats = { batches: 0, appends: 0, events: 0, lastBatchAppends: 0, maxBatchAppends: 0, oneRoundTripBatches: 0, speculationMisses: 0 };
  /** What this process knows of the log between its batches, for one-round-trip commits (see `#speculate`). */
  readonly #speculation = {
    head: null as { position: number; hash: Buffer; recordedAt: Date } | null,
    versions: new Map<string, number>(),
    clockOffsetMs: 0,
    misses: 0,
    pausedUntilBatch: 0,
    unsupported: false,
  };
  readonly connectionString: string;
  /** Leaves of the Merkle tree (and checkpoints) this ledger has folded or signed: no append may take those positions. */
  #signedSize = 0;
  readonly #connectionBounds: EventStoreOptions['connectionBounds'];
  readonly #feedPoolSize: number;
  #feedDb: Kysely<LedgerDatabase> | null = null;
  #feedPool: pg.Pool | null = null;

  private constructor(options: EventStoreOptions) {
    this.connectionString = options.connectionString;
    this.#connectionBounds = options.connectionBounds;
    this.#feedPoolSize = options.feedPoolSize ?? 4;
    this.catalogue = options.catalogue ?? fleetCatalogue;
    this.pool = new pg.Pool({ ...boundedConnection(options.connectionString, options.connectionBounds), max: options.poolSize ?? 8 });
    // A lost connection (server restart, Ctrl-C reaching PostgreSQL) must not crash the process: the pool
    // handles idle clients, and this listener covers checked-out ones between statements, where pg would
    // otherwise emit an unhandled 'error'. The statement in flight still fails, and the caller sees it.
    this.pool.on('error', () => undefined);
    this.pool.on('connect', (client) => client.on('error', () => undefined));
    this.db = new Kysely<LedgerDatabase>({ dialect: new PostgresDialect({ pool: this.pool }) });
    const appendTimeoutMs = Math.max(1, Math.round(options.appendTimeoutMs ?? 30_000));
    // The group commit's own connection (one batch is in flight at a time). Its settings come with the connection, so
    // no transaction pays for setting them: durable before acknowledged whatever the server's, role's or database's
    // default (settings a client sends when it connects take precedence over those), and every statement bounded, so
    // a stalled lock holder fails a batch (retryable) within the deadline instead of queueing every writer behind it.
    const bounded = boundedConnection(options.connectionString, options.connectionBounds);
    this.#appendPool = new pg.Pool({ ...bounded, options: `${bounded.options} -c synchronous_commit=on -c statement_timeout=${appendTimeoutMs}`, max: 1 });
    this.#appendPool.on('error', () => undefined);
    this.#appendPool.on('connect', (client) => client.on('error', () => undefined));
    this.#options = {
      maxBatchEvents: options.maxBatchEvents ?? 5000,
      pollIntervalMs: options.pollIntervalMs ?? 1000,
      clock: options.clock,
      appendTimeoutMs: options.appendTimeoutMs ?? 30_000,
      commitResolutionMs: options.commitResolutionMs ?? 30_000,
      maxJsonArrayChars: options.maxJsonArrayChars ?? 32 * 1024 * 1024,
    };
    this.#reserve = options.storageReserve ? new StorageReserve(options.storageReserve.path, options.storageReserve.minFreeBytes) : null;
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
    // Connected ahead, so the first append does not also wait for a connection; an append connects again if this fails.
    await store.#appendPool.connect().then(
      async (client) => {
        const checked = await store.#hasSessionSettings(client).then(
          () => true,
          () => false,
        );
        client.release(!checked);
      },
      () => undefined,
    );
    return store;
  }

  /**
   * Appends events to one stream if it is at the expected version. Resolves after commit with the new
   * stream version and the events' global positions.
   */
  append(stream: string, events: readonly ProposedEvent[], options: AppendOptions = {}): Promise<AppendResult> {
    if (this.#closed) return Promise.reject(new LedgerError('LEDGER_CLOSED', { operation: 'append' }, 'the ledger is closed'));
    const full = this.#reserve?.refusal();
    if (full) return Promise.reject(full);
    let prepared: PreparedEvent[];
    try {
      prepared = prepareAppend(stream, events, this.catalogue, () => (this.#options.clock?.() ?? new Date()).getTime());
    } catch (error) {
      return Promise.reject(error);
    }
    const expected = options.expectedVersion ?? 'any';
    if (typeof expected === 'number' && (!Number.isInteger(expected) || expected < 0)) {
      return Promise.reject(new LedgerError('LEDGER_WRONG_EXPECTED_VERSION', { stream, expected, actual: -1 }, `expectedVersion must be a non-negative integer or 'any' | 'no_stream' | 'stream_exists'`));
    }
    return new Promise<AppendResult>((resolve, reject) => {
      this.#queue.push({ stream, events: prepared, expected, resolve, reject });
      // Start the batch on the next turn of the event loop, so every append issued in this turn (say, the
      // callers woken by the previous batch) joins it instead of trailing in a batch of its own.
      this.#flushing ??= new Promise<void>((resolve) => setImmediate(resolve)).then(() => this.#drain());
    });
  }

  /** Commits queued appends batch after batch until the queue is empty; one batch in flight at a time. */
  async #drain(): Promise<void> {
    try {
      while (this.#queue.length > 0) {
        const batch: PendingAppend[] = [];
        let size = 0;
        while (this.#queue.length > 0) {
          const next = this.#queue[0]!;
          if (batch.length > 0 && size + next.events.length > this.#options.maxBatchEvents) break;
          batch.push(this.#queue.shift()!);
          size += next.events.length;
        }
        await this.#commitBatch(batch);
      }
    } finally {
      this.#flushing = null;
    }
  }

  /**
   * One group-commit transaction. In one round trip when this process wrote the log's head last (see `#speculate`);
   * otherwise, or when that finds the log moved, in two (see the comments inline). There the lock is taken in its own
   * statement so the read that follows sees every earlier commit (READ COMMITTED takes its snapshot per statement);
   * positions and hashes are computed here, under the lock, in batch order.
   */
  async #commitBatch(batch: PendingAppend[]): Promise<void> {
    let settled: Settled = [];
    let client: pg.PoolClient | null = null;
    let written: string[] = [];
    // Where the rows of `written` go: a lost connection's outcome is asked by (position, event id), not by id alone,
    // since a retry's given ids may be stored already (at other positions) whether or not this batch committed.
    let writtenAt: number[] = [];
    let failedConnection = false;
    // The server process behind `client`, so a lost connection's outcome is asked only once nothing more can reach it.
    let backendPid: number | null = null;
    try {
      client = await this.#appendPool.connect();
      backendPid = (client as unknown as { processID?: number | null }).processID ?? null;
      // Read once per connection, before anything of this batch is sent (a failure here leaves nothing to ask about).
      const sessionSettings = await this.#hasSessionSettings(client);
      const speculation = this.#speculate(batch);
      let done = false;
      if (speculation) {
        const { assembled, guard } = speculation;
        // Known before the write, for an outcome that must be asked of the database (a connection lost after COMMIT).
        settled = assembled.settled;
        written = assembled.columns.eventId;
        writtenAt = assembled.columns.position;
        const statement = writeStatement(assembled.columns, assembled.touched, assembled.position, assembled.hash, speculation.recordedAt, this.#options.maxJsonArrayChars, guard);
        const rows = await writeAndCommit(client, statement, this.#prelude(sessionSettings)).catch(async (error: unknown) => {
          // A stream this process assumed at a version (or absent) has moved, or a given event id is stored (a retry):
          // nothing was written; the transaction is aborted and rolled back, and the batch goes the long way, which
          // learns the stream's version or answers the retry with the stored result.
          if (!isGuessRefused(error)) throw error;
          await client!.query('ROLLBACK');
          return 'refused' as const;
        });
        if (rows === null) {
          // This pg cannot send a whole transaction in one sequence: two round trips from now on.
          this.#speculation.unsupported = true;
          written = [];
        } else if (rows !== 'refused' && (await this.#guardedOutcome(rows, written, writtenAt)) === 'written') {
          this.#remember(assembled.position, assembled.hash, speculation.recordedAt, assembled.touched);
          this.#speculation.misses = 0;
          this.stats.oneRoundTripBatches += 1;
          done = true;
        } else {
          this.stats.speculationMisses += 1;
          if (rows !== 'refused') {
            // The guard refused: the log moved under the guess (another writer) or the clock estimate was off. What this
            // process knew is forgotten, and guessing pauses for longer each time in a row it misses, so a process that
            // shares the log with busy writers rarely pays the extra message. (A refusal by an index says only that one
            // stream or id was not as assumed: the rest still holds, and the long way corrects it.)
            this.#speculation.misses += 1;
            this.#speculation.pausedUntilBatch = this.stats.batches + 2 ** Math.min(this.#speculation.misses, 10);
            this.#forget();
          }
          written = [];
        }
      }
      if (!done) {
        const assembled = await this.#assembleUnderLock(client, batch);
        settled = assembled.settled;
        // Round trip 2: rows, stream versions, head and NOTIFY in one parameterised statement, and COMMIT.
        written = assembled.columns.eventId;
        writtenAt = assembled.columns.position;
        if (written.length > 0) {
          await writeAndCommit(client, writeStatement(assembled.columns, assembled.touched, assembled.position, assembled.hash, assembled.recordedAt, this.#options.maxJsonArrayChars));
        } else {
          await client.query('COMMIT');
        }
        this.#remember(assembled.position, assembled.hash, written.length > 0 ? assembled.recordedAt : assembled.headRecordedAt, assembled.touched);
      }
    } catch (error) {
      this.#forget();
      await client?.query('ROLLBACK').catch(() => undefined);
      // Once COMMIT may have been sent, the outcome is asked of the database, never guessed: a lost connection
      // after COMMIT can mean either, and a caller told "not committed" would retry and duplicate.
      const resolved = written.length > 0 && !isLedgerError(error) && !isStatementError(error) ? await this.#resolveCommit(written, writtenAt, error, backendPid) : 'not-committed';
      if (resolved === 'committed') {
        client?.release(true);
        client = null;
        this.#settle(batch, settled);
        return;
      }
      const failure = resolved === 'unknown'
        ? new LedgerError('LEDGER_COMMIT_UNKNOWN', { eventIds: written, cause: String(error) }, `append outcome unknown: the connection was lost after COMMIT and the database could not be asked within ${this.#options.commitResolutionMs} ms (${String(error)}); retry with the same event ids`)
        : isLedgerError(error)
        ? error
        : isDiskFullError(error)
        ? (this.#reserve?.refusal(true) ?? new LedgerError('LEDGER_STORAGE_FULL', { location: 'the database server', freeBytes: null, minFreeBytes: null }, `append refused, nothing was committed: the database server's disk is full (${String(error)})`))
        : new LedgerError('LEDGER_STORE_UNAVAILABLE', { operation: 'append', cause: String(error) }, `append transaction failed, nothing was committed: ${String(error)}`);
      failedConnection = true;
      for (const pending of batch) pending.reject(failure);
      return;
    } finally {
      // A connection that failed mid-transaction is not given back to the pool for the next batch.
      client?.release(failedConnection);
    }
    this.#settle(batch, settled);
  }

  /**
   * The one-round-trip guess, or null. When this process committed the log's head last, it knows the head (position,
   * hash, time) and the versions of the streams it wrote or read since, so it can assemble a batch (positions,
   * versions, hashes) before taking the lock, and send BEGIN, the lock, a guarded write and COMMIT at once. The guard,
   * evaluated under the lock, writes nothing unless the head is the one the batch was chained onto and `recorded_at`
   * is within `CLOCK_BOUND_S` of the database's clock (the ledger clock stays the database server's; this process
   * estimates it from the last time it read it). A stream not known is assumed absent; if it is not, or is past the
   * version assumed, the unique index on (stream, stream_version) refuses the write, and nothing is written either.
   * An event id a caller gave is assumed new; if it is stored (a retry), the unique index on event ids refuses the
   * write, and the long way answers the retry. Not guessed: appends carrying leases (their epochs are read under the
   * lock), and batches in which an append would fail its expected version against what is known.
   */
  #speculate(batch: PendingAppend[]): { assembled: Assembled; recordedAt: Date; guard: WriteGuard } | null {
    const head = this.#speculation.head;
    if (!head || this.#speculation.unsupported || this.stats.batches < this.#speculation.pausedUntilBatch) return null;
    // The long way checks the signed size under the lock.
    if (head.position < this.#signedSize) return null;
    for (const pending of batch) {
      for (const event of pending.events) if (leaseOf(event) !== undefined) return null;
    }
    const clock = this.#options.clock;
    const now = clock ? clock() : new Date(Date.now() + this.#speculation.clockOffsetMs);
    const recordedAt = now.getTime() >= head.recordedAt.getTime() ? now : head.recordedAt;
    const versions = new Map<string, number>();
    for (const pending of batch) {
      const version = this.#speculation.versions.get(pending.stream);
      if (version !== undefined) versions.set(pending.stream, version);
    }
    const assembled = this.#assemble(batch, { position: head.position, hash: head.hash, recordedAt, versions, known: new Map(), leases: new Map(), sagaLeases: new Map() });
    if (assembled.columns.eventId.length === 0 || assembled.settled.some((outcome) => !outcome.ok)) return null;
    return { assembled, recordedAt, guard: { headPosition: head.position, clockBoundS: clock ? Infinity : CLOCK_BOUND_S } };
  }

  /**
   * The statements before a one-round-trip write: the transaction, its settings unless the connection has them (see
   * `#hasSessionSettings`), the lock. (`standard_conforming_strings` matters only to SQL literals, which this path has none of.)
   */
  #prelude(sessionSettings: boolean): string[] {
    return [
      'BEGIN',
      ...(sessionSettings ? [] : [`SELECT set_config('synchronous_commit', 'on', true), set_config('statement_timeout', '${Math.max(1, Math.round(this.#options.appendTimeoutMs))}', true)`]),
      `SELECT pg_advisory_xact_lock(${APPEND_LOCK_KEY})`,
    ];
  }

  /**
   * Whether an append connection has the settings its pool asked for when it connected, read back once per connection.
   * A connection string carrying `options` of its own replaces the pool's, so they are not taken on trust: without
   * them, each transaction sets them (as before they came with the connection).
   */
  async #hasSessionSettings(client: pg.PoolClient): Promise<boolean> {
    const known = this.#sessionSettings.get(client);
    if (known !== undefined) return known;
    const { rows } = await client.query<{ synchronous_commit: string; statement_timeout: string }>(
      `SELECT current_setting('synchronous_commit') AS synchronous_commit, (SELECT setting FROM pg_settings WHERE name = 'statement_timeout') AS statement_timeout`,
    );
    const has = rows[0]?.synchronous_commit === 'on' && rows[0]?.statement_timeout === String(Math.max(1, Math.round(this.#options.appendTimeoutMs)));
    this.#sessionSettings.set(client, has);
    return has;
  }

  /** The head this batch left, and the stream versions it wrote: what the next batch may assume. */
  #remember(position: number, hash: Buffer, recordedAt: Date, touched: Map<string, { version: number }>): void {
    this.#speculation.head = { position, hash, recordedAt };
    const versions = this.#speculation.versions;
    for (const [stream, { version }] of touched) {
      versions.delete(stream);
      versions.set(stream, version);
    }
    // Bounded: the streams least recently written are forgotten first (a forgotten one is assumed absent, and a miss
    // teaches it again).
    for (const stream of versions.keys()) {
      if (versions.size <= KNOWN_STREAMS_MAX) break;
      versions.delete(stream);
    }
  }

  #forget(): void {
    this.#speculation.head = null;
    this.#speculation.versions.clear();
  }

  /**
   * Round trip 1 of the long way: begin, take the log-wide lock, then (a new statement, so a new snapshot that sees
   * every earlier commit) read the head, the streams' versions and any already-stored event ids; then the batch is
   * assembled against them. What was read becomes what the next batch may assume.
   */
  async #assembleUnderLock(client: pg.PoolClient, batch: PendingAppend[]): Promise<Assembled & { recordedAt: Date; headRecordedAt: Date }> {
    const streams = [...new Set(batch.map((p) => p.stream))];
    // Only ids a caller gave can be stored already (a retry); an id the ledger made for this append is new (UUIDv7:
    // its millisecond and 74 random bits), so it is not looked up. The unique constraint still stands behind it.
    const eventIds = batch.flatMap((p) => p.events.flatMap((e) => (e.idGiven ? [e.eventId] : [])));
    // Poll leases the batch writes under (cluster mode): read FOR SHARE after the append lock, so a take-over (which
    // updates the row) waits for this transaction, and no append of a superseded epoch commits after it.
    const fencedShards = [...new Set(batch.flatMap((p) => p.events.flatMap((e) => (e.actor.kind === 'driver' || e.actor.kind === 'system') && e.actor.lease ? [e.actor.lease.shard] : [])))];
    const leaseRead = fencedShards.length > 0 ? `SELECT shard, epoch, owner, released FROM cluster_leases WHERE shard = ANY(${arrayLiteral(fencedShards, 'text')}) ORDER BY shard FOR SHARE;` : '';
    // Saga leases, the same way: a take-over raises the saga's epoch (and waits for this transaction to do it).
    const fencedSagas = [...new Set(batch.flatMap((p) => p.events.flatMap((e) => (e.actor.kind === 'saga' && e.actor.lease ? [e.actor.lease.saga] : []))))];
    const sagaRead = fencedSagas.length > 0 ? `SELECT saga, epoch, owner FROM saga_leases WHERE saga = ANY(${arrayLiteral(fencedSagas, 'text')}) ORDER BY saga FOR SHARE;` : '';
    const sentAt = Date.now();
    const results = (await client.query(
      // Durable before acknowledged whatever the server's default; bounded, so a stalled lock holder fails this
      // batch (retryable) within the deadline instead of queueing every writer behind it.
      `BEGIN; SET LOCAL standard_conforming_strings TO on; SET LOCAL synchronous_commit TO on; SET LOCAL statement_timeout = ${Math.max(1, Math.round(this.#options.appendTimeoutMs))};
       SELECT pg_advisory_xact_lock(${APPEND_LOCK_KEY});
       ${leaseRead}
       ${sagaRead}
       SELECT
         (SELECT json_build_object('position', position, 'hash', encode(hash, 'hex'), 'recorded_at', recorded_at) FROM ledger_head) AS head,
         clock_timestamp() AS db_now,
         now() AS db_began,
         greatest((SELECT size FROM ledger_merkle_state), (SELECT max(size) FROM ledger_checkpoints), 0) AS signed_size,
         (SELECT coalesce(json_agg(json_build_array(stream, version)), '[]'::json) FROM ledger_streams WHERE stream = ANY(${arrayLiteral(streams, 'text')})) AS versions,
         (SELECT coalesce(json_agg(json_build_object('event_id', event_id, 'stream', stream, 'stream_version', stream_version, 'position', position, 'type', type,
                   'schema_version', schema_version, 'observed_at', observed_at, 'actor', actor, 'correlation_id', correlation_id, 'causation_id', causation_id, 'data', data)), '[]'::json)
            FROM ledger_events WHERE event_id = ANY(${arrayLiteral(eventIds, 'uuid')})) AS existing`,
    )) as unknown as pg.QueryResult[];
    const receivedAt = Date.now();
    const state = results[results.length - 1] as pg.QueryResult<{ head: { position: number; hash: string; recorded_at: string }; db_now: Date; db_began: Date; signed_size: number; versions: Array<[string, number]>; existing: ExistingRow[] }>;
    const { head: headRow, db_now: dbNow, db_began: dbBegan, signed_size: signedInDatabase, versions: versionRows, existing } = state.rows[0]!;
    const versions = new Map<string, number>(versionRows);
    const known = new Map<string, StoredIdentity>(existing.map((row) => [row.event_id, storedIdentity(row)]));
    const leases = new Map<string, { epoch: number; owner: string | null; released: boolean }>();
    if (leaseRead) {
      for (const row of (results[results.length - (sagaRead ? 3 : 2)] as pg.QueryResult<{ shard: string; epoch: string; owner: string | null; released: boolean }>).rows) {
        leases.set(row.shard, { epoch: Number(row.epoch), owner: row.owner, released: row.released });
      }
    }
    const sagaLeases = new Map<string, { epoch: number; owner: string }>();
    if (sagaRead) {
      for (const row of (results[results.length - 2] as pg.QueryResult<{ saga: string; epoch: string; owner: string }>).rows) sagaLeases.set(row.saga, { epoch: Number(row.epoch), owner: row.owner });
    }

    const position = Number(headRow.position);
    // Read under the lock, so no commit can move the head between this check and the write (see `refusePositionsUpTo`).
    // The tree and checkpoints stored in the database bound every writer (any process, any thread); what this process
    // was told (a checkpoint published outside the database) bounds its own appends too.
    const signedSize = Math.max(this.#signedSize, Number(signedInDatabase));
    if (position < signedSize) {
      throw new LedgerError('LEDGER_POSITION_SIGNED', { position: position + 1, signedSize }, `append refused, nothing was committed: position ${position + 1} is already in the signed Merkle tree of ${signedSize} leaves (the log's head ${position} is behind what was signed)`);
    }
    const hash: Buffer = Buffer.from(headRow.hash, 'hex');
    // What the next batch may assume: the versions known are kept only while the head is the one this process left
    // (nobody else wrote since), and the ones just read are current.
    const last = this.#speculation.head;
    if (!last || last.position !== position || !last.hash.equals(hash)) this.#speculation.versions.clear();
    for (const [stream, version] of versions) this.#speculation.versions.set(stream, version);
    // The database's clock as this process sees it, from when the transaction began (its BEGIN, the first of the
    // message) and half the round trip's time on the network: what the server spent (the lock wait above all) is
    // taken out, so a batch that queued for the lock does not skew the estimate by half its wait.
    const began = new Date(dbBegan).getTime();
    const network = Math.max(0, receivedAt - sentAt - (new Date(dbNow).getTime() - began));
    this.#speculation.clockOffsetMs = began - (sentAt + network / 2);
    const now = this.#options.clock?.() ?? new Date(dbNow);
    const headRecordedAt = new Date(headRow.recorded_at);
    // The ledger clock never runs backwards along the log, so time-travel queries by instant are sound.
    const recordedAt = now.getTime() >= headRecordedAt.getTime() ? now : headRecordedAt;
    return { ...this.#assemble(batch, { position, hash, recordedAt, versions, known, leases, sagaLeases }), recordedAt, headRecordedAt };
  }

  /**
   * Chains a batch onto `basis`: each append's replay check, lease epochs and expected version, then its rows'
   * positions, versions and hashes. An append that fails is settled with its error and writes nothing.
   */
  #assemble(batch: PendingAppend[], basis: BatchBasis): Assembled {
    const settled: Settled = [];
    const { versions, known, leases, sagaLeases } = basis;
    let position = basis.position;
    let prevHash = basis.hash;
    const columns = emptyColumns();
    columns.hashes.push(prevHash);
    const recordedAtJson = JSON.stringify(basis.recordedAt.toISOString());
    const touched = new Map<string, { version: number; lastPosition: number }>();
    for (const pending of batch) {
      try {
        const replay = this.#replayOf(pending, known);
        if (replay) {
          settled.push({ ok: true, result: replay });
          continue;
        }
        for (const event of pending.events) {
          if (event.actor.kind === 'saga' && event.actor.lease) {
            const stamp = event.actor.lease;
            const held = sagaLeases.get(stamp.saga);
            if (held?.epoch !== stamp.epoch) {
              throw new LedgerError(
                'LEDGER_STALE_EPOCH',
                { stream: pending.stream, saga: stamp.saga, epoch: stamp.epoch, currentEpoch: held?.epoch ?? null, owner: held?.owner ?? null },
                `append to ${pending.stream} refused: written under epoch ${stamp.epoch} of saga ${stamp.saga}, which is ${held ? `at epoch ${held.epoch} (taken by ${held.owner})` : 'not leased'}`,
              );
            }
          }
          const lease = (event.actor.kind === 'driver' || event.actor.kind === 'system') ? event.actor.lease : undefined;
          if (!lease) continue;
          const held = leases.get(lease.shard);
          if (!held || held.epoch !== lease.epoch || held.released) {
            throw new LedgerError(
              'LEDGER_STALE_EPOCH',
              { stream: pending.stream, shard: lease.shard, epoch: lease.epoch, currentEpoch: held?.epoch ?? null, owner: held?.owner ?? null },
              `append to ${pending.stream} refused: written under epoch ${lease.epoch} of shard ${lease.shard}, which is ${!held ? 'not leased' : held.released && held.epoch === lease.epoch ? 'released' : `at epoch ${held.epoch} (held by ${held.owner ?? 'nobody'})`}`,
            );
          }
        }
        const exists = versions.has(pending.stream);
        const current = versions.get(pending.stream) ?? 0;
        if (!expectedMatches(pending.expected, exists, current)) {
          throw new LedgerError(
            'LEDGER_WRONG_EXPECTED_VERSION',
            { stream: pending.stream, expected: pending.expected, actual: exists ? current : -1 },
            `append to ${pending.stream} expected ${describeExpected(pending.expected)} but the stream is ${exists ? `at version ${current}` : 'absent'}`,
          );
        }
        let version = current;
        const positions: number[] = [];
        const streamJson = JSON.stringify(pending.stream);
        for (const event of pending.events) {
          position += 1;
          version += 1;
          const observedAt = event.observedAt === null ? null : event.observedAt.toISOString();
          // canonicalEvent's text, assembled from the parts prepared (and canonicalized) before the lock.
          const hash = chainHashBytes(prevHash, chainText(event, position, streamJson, version, recordedAtJson, observedAt === null ? 'null' : `"${observedAt}"`));
          columns.position.push(position);
          columns.eventId.push(event.eventId);
          columns.stream.push(pending.stream);
          columns.version.push(version);
          columns.type.push(event.type);
          columns.schemaVersion.push(event.schemaVersion);
          columns.observedAt.push(observedAt);
          columns.actor.push(event.canonicalActor);
          columns.correlationId.push(event.correlationId);
          columns.causationId.push(event.causationId);
          columns.data.push(event.canonicalData);
          columns.hashes.push(hash);
          // What a later append of this batch carrying the same id is answered from. Only a given id can come again: an
          // id the ledger made is new (UUIDv7), and no caller holds it before this append is answered.
          if (event.idGiven) known.set(event.eventId, { stream: pending.stream, position, streamVersion: version, content: event });
          positions.push(position);
          prevHash = hash;
        }
        versions.set(pending.stream, version);
        touched.set(pending.stream, { version, lastPosition: position });
        settled.push({ ok: true, result: { stream: pending.stream, nextExpectedVersion: version, positions, idempotentReplay: false } });
      } catch (error) {
        settled.push({ ok: false, error });
      }
    }
    return { columns, touched, settled, position, hash: prevHash };
  }

  #settle(batch: PendingAppend[], settled: Settled): void {
    this.stats.batches += 1;
    this.stats.lastBatchAppends = batch.length;
    this.stats.maxBatchAppends = Math.max(this.stats.maxBatchAppends, batch.length);
    batch.forEach((pending, index) => {
      const outcome = settled[index]!;
      if (outcome.ok) {
        this.stats.appends += 1;
        if (!outcome.result.idempotentReplay) this.stats.events += pending.events.length;
        pending.resolve(outcome.result);
      } else {
        pending.reject(outcome.error);
      }
    });
  }

  /**
   * What a committed guarded write did, from its answer: one row whose `outcome` is the text 'written' or 'refused' (the
   * guard's boolean is turned into text in SQL, so a process that changed pg's global bool parser reads the same). An
   * answer of any other shape is not guessed from: the database is asked whether the rows are stored, since telling the
   * callers "not written" of a batch that was would have it written again and refused as a duplicate.
   */
  async #guardedOutcome(rows: Array<Record<string, unknown>>, eventIds: string[], positions: number[]): Promise<'written' | 'refused'> {
    const outcome = rows.length === 1 ? rows[0]!['outcome'] : undefined;
    if (outcome === 'written' || outcome === 'refused') return outcome;
    const resolved = await this.#resolveCommit(eventIds, positions, new Error(`unexpected answer from the guarded write: ${JSON.stringify(rows).slice(0, 200)}`), null);
    if (resolved === 'committed') return 'written';
    if (resolved === 'not-committed') return 'refused';
    throw new LedgerError('LEDGER_COMMIT_UNKNOWN', { eventIds, cause: 'unexpected answer from the guarded write' }, `append outcome unknown: the guarded write answered ${JSON.stringify(rows).slice(0, 200)} and the database could not be asked within ${this.#options.commitResolutionMs} ms; retry with the same event ids`);
  }

  /**
   * Whether a batch whose COMMIT outcome is unknown was committed: its new event ids are all stored at the positions
   * it gave them (one transaction: all or none; an id alone could be a retry's, stored before). Asked on fresh
   * connections until the database answers or the resolution deadline passes (then 'unknown'). With `backendPid`, the
   * server process that served the lost connection is first let finish what it is running and then ended, so nothing
   * still on its way to it (a message the network delivers late, carrying BEGIN, the lock, the write and COMMIT) can
   * commit after the rows were counted.
   */
  async #resolveCommit(eventIds: string[], positions: number[], cause: unknown, backendPid: number | null): Promise<'committed' | 'not-committed' | 'unknown'> {
    const deadline = Date.now() + this.#options.commitResolutionMs;
    for (let attempt = 0; ; attempt += 1) {
      const client = new pg.Client(boundedConnection(this.connectionString, { connectMs: Math.max(1000, Math.min(10_000, deadline - Date.now())) }));
      client.on('error', () => undefined);
      try {
        await client.connect();
        if (backendPid !== null) await endBackend(client, backendPid, deadline);
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
        return stored === eventIds.length ? 'committed' : stored === 0 ? 'not-committed' : 'unknown';
      } catch {
        if (Date.now() >= deadline) return 'unknown';
        await new Promise((resolve) => setTimeout(resolve, Math.min(2000, 100 * 2 ** Math.min(attempt, 5))));
      } finally {
        await client.end().catch(() => undefined);
      }
      void cause;
    }
  }

  /**
   * If this append's event ids are already stored with the same content in the same stream, the
   * original result; if only some are, or the content differs, an idempotency conflict; else null.
   */
  #replayOf(pending: PendingAppend, known: Map<string, StoredIdentity>): AppendResult | null {
    // Only an id a caller gave can be stored already or earlier in the batch (see `#assemble`); most appends give none.
    if (!pending.events.some((event) => event.idGiven)) return null;
    const matches = pending.events.map((event) => ({ event, stored: known.get(event.eventId) }));
    if (matches.every((m) => m.stored === undefined)) return null;
    for (const { event, stored } of matches) {
      const reason = !stored
        ? 'other events of this append were stored before without it'
        : stored.stream !== pending.stream
          ? `it is stored in stream ${stored.stream}`
          : (typeof stored.content === 'string' ? stored.content : stored.content.contentDigest) !== event.contentDigest
            ? 'it is stored with different content'
            : null;
      if (reason) {
        throw new LedgerError(
          'LEDGER_IDEMPOTENCY_CONFLICT',
          { stream: pending.stream, eventId: event.eventId, storedStream: stored?.stream ?? pending.stream, reason },
          `event ${event.eventId} cannot be appended to ${pending.stream}: ${reason}`,
        );
      }
    }
    const stored = matches.map((m) => m.stored!);
    return {
      stream: pending.stream,
      nextExpectedVersion: Math.max(...stored.map((s) => s.streamVersion)),
      positions: stored.map((s) => s.position),
      idempotentReplay: true,
    };
  }

  /** Events of one stream in version order (or reverse), data upcast to current versions. */
  async readStream(stream: string, options: ReadStreamOptions = {}): Promise<RecordedEvent[]> {
    const direction = options.direction ?? 'forward';
    let query = this.db.selectFrom('ledger_events').selectAll().where('stream', '=', stream);
    if (options.fromVersion !== undefined) query = query.where('stream_version', direction === 'forward' ? '>=' : '<=', options.fromVersion);
    const rows = await this.#read('readStream', () =>
      query
        .orderBy('stream_version', direction === 'forward' ? 'asc' : 'desc')
        .limit(options.limit ?? 10_000)
        .execute(),
    );
    return rows.map((row) => recordedEvent(row as unknown as EventRow, this.catalogue));
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
    const rows = await this.#read('readAll', () => this.#readAllQuery(options).execute());
    return rows.map((row) => recordedEvent(row as unknown as EventRow, this.catalogue));
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
    return this.#readBounded('readAll', this.#readAllQuery(options), 'position', options.maxBytes);
  }

  /** A page of `readStream` (forward) bounded in payload bytes as well as events, as `readAllBounded`. */
  async readStreamBounded(stream: string, options: { fromVersion?: number; limit?: number; maxBytes: number }): Promise<{ events: RecordedEvent[]; cut: boolean }> {
    const query = this.db
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
    const rows = await this.#read(operation, () =>
      this.db
        .selectFrom(
          this.db
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
    return { events: rows.map((row) => recordedEvent(row as unknown as EventRow, this.catalogue)), cut: rows.length < pageRows };
  }

  #readAllQuery(options: ReadAllOptions, db: Kysely<LedgerDatabase> = this.db) {
    let query = db.selectFrom('ledger_events').selectAll().where('position', '>=', options.fromPosition ?? 1);
    if (options.toPosition !== undefined) query = query.where('position', '<=', options.toPosition);
    if (options.types && options.types.length > 0) query = query.where('type', 'in', [...options.types]);
    if (options.streamPrefix) query = query.where(sql<boolean>`stream LIKE ${`${escapeLike(options.streamPrefix)}%`}`);
    return query.orderBy('position', 'asc').limit(options.limit ?? 1000);
  }

  /**
   * Refuses from now on every append that would take a position at or below `size` (`LEDGER_POSITION_SIGNED`): the
   * transparency log calls it with the size of the tree it folded and the checkpoints it signed or published. On an
   * intact log the head is never behind those, so this costs nothing; on a log whose tail was deleted and whose head
   * was rewound (or an older copy restored), the next append would reuse a signed position and never be signed itself.
   * Only grows.
   */
  refusePositionsUpTo(size: number): void {
    if (size > this.#signedSize) this.#signedSize = size;
  }

  /** The last committed position and its hash (position 0 and the genesis hash for an empty log). */
  async head(): Promise<LedgerHead> {
    return this.#headOn(this.db);
  }

  async #headOn(db: Kysely<LedgerDatabase>): Promise<LedgerHead> {
    const row = await this.#read('head', () => db.selectFrom('ledger_head').select(['position', 'hash', 'recorded_at']).executeTakeFirstOrThrow());
    return { position: Number(row.position), hash: row.hash.toString('hex'), recordedAt: row.recorded_at };
  }

  /** The feeds' own pool, opened at first use. */
  #feeds(): Kysely<LedgerDatabase> {
    if (!this.#feedDb) {
      const pool = new pg.Pool({ ...boundedConnection(this.connectionString, this.#connectionBounds), max: this.#feedPoolSize });
      pool.on('error', () => undefined);
      pool.on('connect', (client) => client.on('error', () => undefined));
      this.#feedPool = pool;
      this.#feedDb = new Kysely<LedgerDatabase>({ dialect: new PostgresDialect({ pool }) });
    }
    return this.#feedDb;
  }

  /** Connections of the main pool, the feeds' pool and the group commit's, and callers waiting for one (metrics, tests). */
  poolUse(): { main: PoolUse; feeds: PoolUse | null; append: PoolUse } {
    const use = (pool: pg.Pool): PoolUse => ({ total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount });
    return { main: use(this.pool), feeds: this.#feedPool ? use(this.#feedPool) : null, append: use(this.#appendPool) };
  }

  /** The current version of a stream, or null when it has no events. */
  async streamVersion(stream: string): Promise<number | null> {
    const row = await this.#read('streamVersion', () => this.db.selectFrom('ledger_streams').select('version').where('stream', '=', stream).executeTakeFirst());
    return row ? row.version : null;
  }

  async #read<T>(operation: string, run: () => Promise<T>): Promise<T> {
    if (this.#closed) throw new LedgerError('LEDGER_CLOSED', { operation }, 'the ledger is closed');
    try {
      return await run();
    } catch (error) {
      if (isLedgerError(error)) throw error;
      throw new LedgerError('LEDGER_STORE_UNAVAILABLE', { operation, cause: String(error) }, `${operation} failed: ${String(error)}`);
    }
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
      const db = options.pool === 'feeds' ? this.#feeds() : this.db;
      let outage = 0;
      while (!stopped) {
        let page: { head: LedgerHead; rows: unknown[] };
        try {
          const head = await this.#headOn(db);
          const query = { fromPosition: next, toPosition: head.position, limit: batchSize, types: options.types, streamPrefix: options.streamPrefix };
          page = { head, rows: head.position >= next ? await this.#read('follow', () => this.#readAllQuery(query, db).execute()) : [] };
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
          const events = rows.map((row) => recordedEvent(row as EventRow, this.catalogue));
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
    if (this.#listener || this.#listenerStarting || this.#closed) return this.#listenerStarting ?? undefined;
    this.#listenerStarting = (async () => {
      const client = new pg.Client(boundedConnection(this.connectionString));
      client.on('notification', (message) => this.#appended.next(Number(message.payload)));
      client.on('error', () => {
        // Polling keeps subscriptions correct meanwhile; reconnect in the background.
        this.#listener = null;
        void client.end().catch(() => undefined);
        if (!this.#closed) setTimeout(() => void this.#ensureListener(), 1000).unref();
      });
      try {
        await client.connect();
        await client.query(`LISTEN ${APPENDED_CHANNEL}`);
        if (this.#closed) await client.end();
        else this.#listener = client;
      } catch {
        await client.end().catch(() => undefined);
        if (!this.#closed) setTimeout(() => void this.#ensureListener(), 1000).unref();
      }
    })().finally(() => {
      this.#listenerStarting = null;
    });
    return this.#listenerStarting;
  }

  /**
   * Recomputes the hash chain over [from, to] (default: the whole log) and reports the first position
   * whose row was altered, deleted, inserted or moved; head and rows are read in one snapshot (`verify-log.ts`).
   */
  async verifyChain(options: { from?: number; to?: number } = {}): Promise<ChainVerification> {
    return this.#read('verify', () => verifyLog(this.db, options));
  }

  /** Waits for queued appends, stops subscriptions and closes connections. */
  async close(): Promise<void> {
    if (this.#closed) return;
    while (this.#flushing) await this.#flushing;
    this.#closed = true;
    for (const stop of this.#subscriptions) stop();
    this.#appended.complete();
    const listener = this.#listener;
    this.#listener = null;
    if (this.#listenerStarting) await this.#listenerStarting.catch(() => undefined);
    await listener?.end().catch(() => undefined);
    await this.#feedDb?.destroy();
    await this.#appendPool.end().catch(() => undefined);
    await this.db.destroy();
  }
}
