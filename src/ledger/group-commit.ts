/**
 * Group commit: concurrent `append` calls of this process coalesced into one transaction, one batch in flight at a
 * time. Each append keeps its own validation, expected-version check and lease check, and a failure rejects only its
 * own append. A batch takes one round trip when this process wrote the log's head last (see `speculation.ts`), else
 * two: the lock and a read of the head under it, then the write and COMMIT (see `write-statement.ts`, `pg-pipeline.ts`).
 */
import pg from 'pg';
import type { EventCatalogue, ProposedEvent } from '../../events/index.js';
import { APPEND_LOCK_KEY } from './append-lock.js';
import type { AppendOptions, AppendResult } from './append-types.js';
import { assemble, storedIdentity, type Assembled, type ExistingRow, type PendingAppend, type Settled, type StoredIdentity } from './batch-assembly.js';
import { guardedOutcome, isStatementError, resolveCommit, type CommitResolution, type LostBackend } from './commit-resolution.js';
import { boundedConnection, type ConnectionBounds } from './connection-bounds.js';
import { awaitDurable, durabilityFenceStatement, serverInstanceQuery, watchSyncWait } from './durability.js';
import { LedgerError, isLedgerError } from './ledger-error.js';
import { backendProcessId, writeAndCommit } from './pg-pipeline.js';
import { prepareAppend, type PreparedEvent } from './prepare-append.js';
import { isGuessRefused, Speculation } from './speculation.js';
import { arrayLiteral } from './sql-literal.js';
import { StorageReserve, isDiskFullError } from './storage-reserve.js';
import { writeStatement } from './write-statement.js';

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

/** The settings of a store's group commit (see `EventStoreOptions` for each). */
export interface GroupCommitOptions {
  connectionString: string;
  connectionBounds: Partial<ConnectionBounds> | undefined;
  catalogue: EventCatalogue;
  maxBatchEvents: number;
  appendTimeoutMs: number;
  commitResolutionMs: number;
  maxJsonArrayChars: number;
  clock: (() => Date) | undefined;
  storageReserve: { path: string; minFreeBytes: number } | undefined;
}

/**
 * What a batch has sent so far: the outcomes it assembled and the rows it writes, by event id and position. A lost
 * connection's outcome is asked by (position, event id), not by id alone, since a retry's given ids may be stored
 * already (at other positions) whether or not this batch committed.
 */
interface InFlight {
  settled: Settled;
  written: string[];
  writtenAt: number[];
}

/** The group commit of one store: its queue, its own connection, and what it knows of the log between batches. */
export class GroupCommit {
  /** The group commit's connection, apart from the store's pool so its session settings bound appends only. */
  readonly appendPool: pg.Pool;
  readonly stats: AppendStats = { batches: 0, appends: 0, events: 0, lastBatchAppends: 0, maxBatchAppends: 0, oneRoundTripBatches: 0, speculationMisses: 0 };
  /** Per append connection: whether it has the settings its pool asked for (see `#hasSessionSettings`). */
  readonly #sessionSettings = new WeakMap<pg.PoolClient, boolean>();
  /** Per append connection: the server instance it reached (`serverInstanceQuery`), read with its settings. */
  readonly #servers = new WeakMap<pg.PoolClient, string>();
  readonly #options: GroupCommitOptions;
  readonly #resolution: CommitResolution;
  readonly #queue: PendingAppend[] = [];
  #flushing: Promise<void> | null = null;
  readonly #reserve: StorageReserve | null;
  /** What this process knows of the log between its batches, for one-round-trip commits (see `speculation.ts`). */
  readonly #speculation = new Speculation();
  /** Leaves of the Merkle tree (and checkpoints) this ledger has folded or signed: no append may take those positions. */
  #signedSize = 0;

  constructor(options: GroupCommitOptions) {
    this.#options = options;
    this.#resolution = { connectionString: options.connectionString, commitResolutionMs: options.commitResolutionMs };
    const appendTimeoutMs = Math.max(1, Math.round(options.appendTimeoutMs));
    // The group commit's own connection (one batch is in flight at a time). Its settings come with the connection, so
    // no transaction pays for setting them: durable before acknowledged whatever the server's, role's or database's
    // default (settings a client sends when it connects take precedence over those), and every statement bounded, so
    // a stalled lock holder fails a batch (retryable) within the deadline instead of queueing every writer behind it.
    const bounded = boundedConnection(options.connectionString, options.connectionBounds);
    this.appendPool = new pg.Pool({ ...bounded, options: `${bounded.options} -c synchronous_commit=on -c statement_timeout=${appendTimeoutMs}`, max: 1 });
    this.appendPool.on('error', () => undefined);
    this.appendPool.on('connect', (client) => client.on('error', () => undefined));
    this.#reserve = options.storageReserve ? new StorageReserve(options.storageReserve.path, options.storageReserve.minFreeBytes) : null;
  }

  /** Connects ahead, so the first append does not also wait for a connection; an append connects again if this fails. */
  async connectAhead(): Promise<void> {
    await this.appendPool.connect().then(
      async (client) => {
        const checked = await this.#hasSessionSettings(client).then(
          () => true,
          () => false,
        );
        client.release(!checked);
      },
      () => undefined,
    );
  }

  /** Validates an append and queues it for the next batch; resolves after its batch committed. */
  append(stream: string, events: readonly ProposedEvent[], options: AppendOptions): Promise<AppendResult> {
    const full = this.#reserve?.refusal();
    if (full) return Promise.reject(full);
    let prepared: PreparedEvent[];
    try {
      prepared = prepareAppend(stream, events, this.#options.catalogue, () => (this.#options.clock?.() ?? new Date()).getTime());
    } catch (error) {
      return Promise.reject(error);
    }
    const expected = options.expectedVersion ?? 'any';
    if (typeof expected === 'number' && (!Number.isInteger(expected) || expected < 0)) {
      return Promise.reject(new LedgerError('LEDGER_WRONG_EXPECTED_VERSION', { stream, expected, actual: -1 }, `expectedVersion must be a non-negative integer or 'any' | 'no_stream' | 'stream_exists'`));
    }
    const { signal } = options;
    if (signal?.aborted) return Promise.reject(signal.reason);
    return new Promise<AppendResult>((resolve, reject) => {
      this.#queue.push({ stream, events: prepared, expected, resolve, reject, ...(signal ? { signal } : {}) });
      // Start the batch on the next turn of the event loop, so every append issued in this turn (say, the
      // callers woken by the previous batch) joins it instead of trailing in a batch of its own.
      this.#flushing ??= new Promise<void>((resolve) => setImmediate(resolve)).then(() => this.#drain());
    });
  }

  /** The batches in flight, until the queue is empty (then null). */
  get flushing(): Promise<void> | null {
    return this.#flushing;
  }

  /** See `EventStore.refusePositionsUpTo`. Only grows. */
  refusePositionsUpTo(size: number): void {
    if (size > this.#signedSize) this.#signedSize = size;
  }

  async close(): Promise<void> {
    await this.appendPool.end().catch(() => undefined);
  }

  /** Commits queued appends batch after batch until the queue is empty; one batch in flight at a time. */
  async #drain(): Promise<void> {
    try {
      while (this.#queue.length > 0) {
        const batch: PendingAppend[] = [];
        let size = 0;
        while (this.#queue.length > 0) {
          const next = this.#queue[0]!;
          // A caller that gave up before its batch began has nothing written.
          if (next.signal?.aborted) {
            this.#queue.shift();
            next.reject(next.signal.reason);
            continue;
          }
          if (batch.length > 0 && size + next.events.length > this.#options.maxBatchEvents) break;
          batch.push(this.#queue.shift()!);
          size += next.events.length;
        }
        if (batch.length > 0) await this.#commitBatch(batch);
      }
    } finally {
      this.#flushing = null;
    }
  }

  /**
   * One group-commit transaction. In one round trip when this process wrote the log's head last (see
   * `#commitInOneRoundTrip`); otherwise, or when that finds the log moved, in two (see `#commitUnderLock`).
   */
  async #commitBatch(batch: PendingAppend[]): Promise<void> {
    let client: pg.PoolClient | null = null;
    // Known before each write, for an outcome that must be asked of the database (a connection lost after COMMIT).
    const inFlight: InFlight = { settled: [], written: [], writtenAt: [] };
    let failedConnection = false;
    // The server process behind `client` and its server, so a lost connection's outcome is asked only once nothing
    // more can reach it (and a process of another server, after a failover, is left alone).
    let backend: LostBackend | null = null;
    let syncWait: ReturnType<typeof watchSyncWait> | null = null;
    try {
      client = await this.appendPool.connect();
      const pid = backendProcessId(client);
      // Read once per connection, before anything of this batch is sent (a failure here leaves nothing to ask about).
      const sessionSettings = await this.#hasSessionSettings(client);
      if (pid !== null) backend = { pid, server: this.#servers.get(client) ?? null };
      syncWait = watchSyncWait(client);
      const done = await this.#commitInOneRoundTrip(client, batch, sessionSettings, inFlight);
      if (!done) await this.#commitUnderLock(client, batch, inFlight);
      // The COMMIT came back with the warning of a cancelled wait for the synchronous standby (a cancel request reached
      // the session while no standby confirmed; the statement deadline never does, PostgreSQL stops its timer before
      // committing): committed here, maybe on no standby. Nothing is acknowledged until a fence says it is durable; if
      // that cannot be had, the outcome is asked like a lost connection's (never "not committed").
      if (syncWait.cancelled()) {
        await awaitDurable(client).catch((error: unknown) => {
          throw new Error(`the commit's wait for the synchronous standby was cancelled and its durability could not be confirmed: ${String(error)}`);
        });
      }
    } catch (error) {
      this.#speculation.forget();
      await client?.query('ROLLBACK').catch(() => undefined);
      // Once COMMIT may have been sent, the outcome is asked of the database, never guessed: a lost connection
      // after COMMIT can mean either, and a caller told "not committed" would retry and duplicate.
      const { written, writtenAt, settled } = inFlight;
      const resolved = written.length > 0 && !isLedgerError(error) && !isStatementError(error) ? await resolveCommit(this.#resolution, written, writtenAt, error, backend) : 'not-committed';
      if (resolved === 'committed') {
        client?.release(true);
        client = null;
        this.#settle(batch, settled);
        return;
      }
      const failure = this.#failure(error, resolved === 'unknown', written);
      failedConnection = true;
      for (const pending of batch) pending.reject(failure);
      return;
    } finally {
      syncWait?.stop();
      // A connection that failed mid-transaction is not given back to the pool for the next batch.
      client?.release(failedConnection);
    }
    this.#settle(batch, inFlight.settled);
  }

  /** The error every append of a batch that did not commit (or whose commit is unknown) is rejected with. */
  #failure(error: unknown, unknown: boolean, written: string[]): unknown {
    return unknown
      ? new LedgerError('LEDGER_COMMIT_UNKNOWN', { eventIds: written, cause: String(error) }, `append outcome unknown: the connection was lost after COMMIT and the database could not be asked within ${this.#options.commitResolutionMs} ms (${String(error)}); retry with the same event ids`)
      : isLedgerError(error)
      ? error
      : isDiskFullError(error)
      ? (this.#reserve?.refusal(true) ?? new LedgerError('LEDGER_STORAGE_FULL', { location: 'the database server', freeBytes: null, minFreeBytes: null }, `append refused, nothing was committed: the database server's disk is full (${String(error)})`))
      : new LedgerError('LEDGER_STORE_UNAVAILABLE', { operation: 'append', cause: String(error) }, `append transaction failed, nothing was committed: ${String(error)}`);
  }

  /**
   * The one-round-trip path (see `Speculation.guess`): BEGIN, the lock, a guarded write and COMMIT in one sequence.
   * True when the batch is committed; false when there was no guess to make or the guess was refused (nothing was
   * written, and the batch goes the long way).
   */
  async #commitInOneRoundTrip(client: pg.PoolClient, batch: PendingAppend[], sessionSettings: boolean, inFlight: InFlight): Promise<boolean> {
    const speculation = this.#speculation.guess(batch, { batches: this.stats.batches, signedSize: this.#signedSize, clock: this.#options.clock });
    if (!speculation) return false;
    const { assembled, guard } = speculation;
    inFlight.settled = assembled.settled;
    inFlight.written = assembled.columns.eventId;
    inFlight.writtenAt = assembled.columns.position;
    const statement = writeStatement(assembled.columns, assembled.touched, assembled.position, assembled.hash, speculation.recordedAt, this.#options.maxJsonArrayChars, guard);
    const rows = await writeAndCommit(client, statement, this.#prelude(sessionSettings)).catch(async (error: unknown) => {
      // A stream this process assumed at a version (or absent) has moved, or a given event id is stored (a retry):
      // nothing was written; the transaction is aborted and rolled back, and the batch goes the long way, which
      // learns the stream's version or answers the retry with the stored result.
      if (!isGuessRefused(error)) throw error;
      await client.query('ROLLBACK');
      return 'refused' as const;
    });
    if (rows === null) {
      // This pg cannot send a whole transaction in one sequence: two round trips from now on.
      this.#speculation.unsupported = true;
      inFlight.written = [];
      return false;
    }
    if (rows !== 'refused' && (await guardedOutcome(this.#resolution, rows, inFlight.written, inFlight.writtenAt)) === 'written') {
      this.#speculation.remember(assembled.position, assembled.hash, speculation.recordedAt, assembled.touched);
      this.#speculation.misses = 0;
      this.stats.oneRoundTripBatches += 1;
      return true;
    }
    this.stats.speculationMisses += 1;
    if (rows !== 'refused') {
      // The guard refused: the log moved under the guess (another writer) or the clock estimate was off. What this
      // process knew is forgotten, and guessing pauses for longer each time in a row it misses, so a process that
      // shares the log with busy writers rarely pays the extra message. (A refusal by an index says only that one
      // stream or id was not as assumed: the rest still holds, and the long way corrects it.)
      this.#speculation.misses += 1;
      this.#speculation.pausedUntilBatch = this.stats.batches + 2 ** Math.min(this.#speculation.misses, 10);
      this.#speculation.forget();
    }
    inFlight.written = [];
    return false;
  }

  /**
   * The long way, two round trips: the lock is taken in its own statement so the read that follows sees every earlier
   * commit (READ COMMITTED takes its snapshot per statement); positions and hashes are computed here, under the lock,
   * in batch order.
   */
  async #commitUnderLock(client: pg.PoolClient, batch: PendingAppend[], inFlight: InFlight): Promise<void> {
    const assembled = await this.#assembleUnderLock(client, batch);
    inFlight.settled = assembled.settled;
    // Round trip 2: rows, stream versions, head and NOTIFY in one parameterised statement, and COMMIT.
    inFlight.written = assembled.columns.eventId;
    inFlight.writtenAt = assembled.columns.position;
    if (inFlight.written.length > 0) {
      await writeAndCommit(client, writeStatement(assembled.columns, assembled.touched, assembled.position, assembled.hash, assembled.recordedAt, this.#options.maxJsonArrayChars));
    } else {
      // Only replays (and refusals): a retry is answered as acknowledged only once its stored events are durable. They
      // are visible, so normally on the synchronous standby already; not when a cancelled wait or a primary restarted in
      // place made them visible first. A fence in this transaction makes its COMMIT wait for the standby.
      if (assembled.settled.some((outcome) => outcome.ok && outcome.result.idempotentReplay)) await client.query(durabilityFenceStatement);
      await client.query('COMMIT');
    }
    this.#speculation.remember(assembled.position, assembled.hash, inFlight.written.length > 0 ? assembled.recordedAt : assembled.headRecordedAt, assembled.touched);
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
    const { rows } = await client.query<{ synchronous_commit: string; statement_timeout: string; server: string }>(
      `SELECT current_setting('synchronous_commit') AS synchronous_commit, (SELECT setting FROM pg_settings WHERE name = 'statement_timeout') AS statement_timeout, ${serverInstanceQuery} AS server`,
    );
    const has = rows[0]?.synchronous_commit === 'on' && rows[0]?.statement_timeout === String(Math.max(1, Math.round(this.#options.appendTimeoutMs)));
    this.#sessionSettings.set(client, has);
    if (rows[0]?.server) this.#servers.set(client, rows[0].server);
    return has;
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
         greatest((SELECT greatest(size, published_size) FROM ledger_merkle_state), (SELECT max(size) FROM ledger_checkpoints), 0) AS signed_size,
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
    // The tree, the checkpoints stored in the database and the published checkpoint the integrity check recorded there
    // (`published_size`) bound every writer (any process, any thread); what this store was told bounds it too.
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
    return { ...assemble(batch, { position, hash, recordedAt, versions, known, leases, sagaLeases }), recordedAt, headRecordedAt };
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
}
