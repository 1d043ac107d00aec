import { createHash } from 'node:crypto';
import { sql, type Kysely, type Transaction } from 'kysely';
import pg from 'pg';
import type { RecordedEvent } from '../../events/index.js';
import type { HeldTableSet, Projection } from './projection.js';
import type { EventStore } from './event-store.js';
import { nameUuid } from './name-uuid.js';
import { boundedConnection } from './connection-bounds.js';
import type { DynamicDatabase } from './database.js';
import { isStoreUnavailable } from './store-outage.js';

export interface ProjectionStatus {
  name: string;
  version: number;
  state: 'starting' | 'standby' | 'running' | 'failed' | 'rebuilding' | 'stopped';
  position: number;
  headPosition: number;
  lagPositions: number;
  /** Seconds between the head's recorded time and the recorded time of the last applied event (0 when caught up). */
  lagSeconds: number;
  error: ProjectionFailure | null;
  /** Events this projection set aside (could not apply) since its last rebuild; see `projection_dead_letters`. */
  setAside: number;
}

/** What health and metrics read of running projections: a `ProjectionRunner`, or one on a thread of its own. */
export interface ProjectionStatusSource {
  status(): Promise<ProjectionStatus[]>;
}

export interface ProjectionFailure {
  position: number;
  eventId: string;
  type: string;
  stream: string;
  reason: string;
  /** False when no single event could be named (the batch failed but every prefix applied): never set aside. */
  located?: boolean;
}

export interface RebuildProgress {
  name: string;
  position: number;
  target: number;
}

export interface ProjectionRunnerOptions {
  batchSize?: number;
  /** How often a standby instance retries to become the live one. */
  standbyRetryMs?: number;
  log?: (message: string, fields?: Record<string, unknown>) => void;
  /**
   * What an event the projection cannot apply does: `set-aside` (the default) records it in
   * `projection_dead_letters`, appends `ProjectionEventSetAside` (an alarm) and goes on; `stop` stops the projection
   * with the event named, for tests and for a projection under development.
   */
  onFailure?: 'set-aside' | 'stop';
  /**
   * Called after each live batch is applied and checkpointed, with when its oldest event was recorded: the
   * difference is how long that event waited to be reflected in the read model (the projection's lag as its readers
   * feel it).
   */
  onApplied?: (projection: string, oldestRecordedAt: Date, events: number, appliedAt: Date) => void;
  /**
   * A rebuild of a projection that offers `holdTables` holds its tables in memory; past this many rows (per
   * projection, default 500,000) it writes them into the scratch schema and empties memory.
   */
  maxHeldRows?: number;
}

/**
 * The 64-bit advisory lock key of a projection, so exactly one live instance applies it: the process holding it in
 * `pg_locks` (a session of its own, named by the process's `application_name`) is the one applying the projection.
 */
export function projectionLockKey(name: string): bigint {
  return createHash('sha256').update(`fleet-ledger projection ${name}`).digest().readBigInt64BE(0);
}

/**
 * A rebuild's pages: up to 20,000 events or 64 MB of payloads. Large pages matter when the tables are held in memory:
 * a page of poll outcomes touches most nodes, and each page loads and writes back the state of every node it touches
 * (at 25,000 nodes and 2 million events, pages of 5,000 events / 16 MB took 54 s, pages of 20,000 / 64 MB 37 s).
 */
const rebuildPageEvents = 20_000;
const rebuildPageBytes = 64 * 1024 * 1024;

/** The scratch schema a rebuild writes into before the swap. */
function rebuildSchema(name: string): string {
  return `projection_rebuild_${name.replace(/[^a-z0-9_]/gi, '_').toLowerCase()}`;
}

interface Live {
  projection: Projection;
  status: ProjectionStatus;
  abort: AbortController;
  done: Promise<void>;
  lastAppliedAt: Date | null;
  lockClient: pg.Client | null;
}

/**
 * Runs projections against the log. Guarantees:
 * - exactly once: a batch's read-model writes and the checkpoint commit in one transaction, and the
 *   checkpoint only moves from the position this instance read (a second writer would fail, not repeat);
 * - one live instance per projection, by a session advisory lock; others wait as standby;
 * - an event that cannot be applied stops that projection (status `failed`, with the event and the
 *   reason), never skipped; the other projections go on;
 * - a rebuild writes into fresh tables in a scratch schema and swaps them in one transaction.
 */
export class ProjectionRunner {
  readonly #live = new Map<string, Live>();
  readonly #options: Required<ProjectionRunnerOptions>;

  constructor(
    private readonly store: EventStore,
    private readonly projections: readonly Projection[],
    options: ProjectionRunnerOptions = {},
  ) {
    this.#options = {
      batchSize: options.batchSize ?? 2000,
      standbyRetryMs: options.standbyRetryMs ?? 2000,
      log: options.log ?? (() => undefined),
      onFailure: options.onFailure ?? 'set-aside',
      onApplied: options.onApplied ?? (() => undefined),
      maxHeldRows: options.maxHeldRows ?? 500_000,
    };
  }

  get db(): Kysely<DynamicDatabase> {
    return this.store.db as unknown as Kysely<DynamicDatabase>;
  }

  /** Creates every projection's tables and starts each one (live, or standby if another instance runs it). */
  async start(): Promise<void> {
    for (const projection of this.projections) await this.#ensureTables(projection);
    for (const projection of this.projections) this.#startOne(projection);
  }

  /**
   * The projection's tables and checkpoint row, if absent. One process at a time, under an advisory lock of its own:
   * `CREATE TABLE IF NOT EXISTS` is not safe concurrently (two sessions both find the table absent and one fails on
   * the catalogue's unique index), and processes sharing a database start at the same moment. Each statement commits
   * on its own (not one transaction): a `CREATE INDEX IF NOT EXISTS` locks its table until commit, and holding several
   * at once would deadlock with the live instance applying batches to the same tables.
   */
  async #ensureTables(projection: Projection): Promise<void> {
    const key = projectionLockKey(`${projection.name} tables`).toString();
    await this.db.connection().execute(async (connection) => {
      await sql`SELECT pg_advisory_lock(${key}::bigint)`.execute(connection);
      try {
        await projection.createTables(connection);
        await connection
          .insertInto('projection_checkpoints')
          .values({ name: projection.name, version: projection.version, position: 0, status: 'running', error: null, updated_at: new Date() })
          .onConflict((oc) => oc.column('name').doNothing())
          .execute();
      } finally {
        await sql`SELECT pg_advisory_unlock(${key}::bigint)`.execute(connection).catch(() => undefined);
      }
    });
  }

  #startOne(projection: Projection): void {
    const abort = new AbortController();
    const live: Live = {
      projection,
      abort,
      lastAppliedAt: null,
      lockClient: null,
      status: { name: projection.name, version: projection.version, state: 'starting', position: 0, headPosition: 0, lagPositions: 0, lagSeconds: 0, error: null, setAside: 0 },
      done: Promise.resolve(),
    };
    this.#live.set(projection.name, live);
    live.done = this.#supervise(live);
  }

  /**
   * Runs the projection; when the database goes away (restart, failover, shutdown) it waits and resumes
   * from the checkpoint instead of failing: only an event the projection cannot apply stops it for good.
   */
  async #supervise(live: Live): Promise<void> {
    const { projection, abort } = live;
    for (let attempt = 0; !abort.signal.aborted; attempt += 1) {
      try {
        await this.#run(live);
        return;
      } catch (error) {
        if (error instanceof LockLostError || error instanceof CheckpointMovedError) {
          // Another instance may be live now: this one stands by again (never `failed`: nothing is wrong with the
          // projection, and a failed loop would never take it over again when that instance dies).
          live.status.state = 'standby';
          this.#options.log('projection no longer held by this instance: standing by', { projection: projection.name, reason: error.message });
          attempt = -1;
          continue;
        }
        if (!isTransientDatabaseError(error)) {
          live.status.state = 'failed';
          live.status.error ??= { position: -1, eventId: '', type: '', stream: '', reason: String(error) };
          this.#options.log('projection stopped by an error', { projection: projection.name, error: String(error) });
          return;
        }
        live.status.state = 'starting';
        this.#options.log('database unavailable: projection resumes from its checkpoint', { projection: projection.name, error: String(error) });
        await new Promise<void>((resolve) => {
          const done = (): void => {
            clearTimeout(timer);
            abort.signal.removeEventListener('abort', done);
            resolve();
          };
          const timer = setTimeout(done, Math.min(10_000, 500 * 2 ** Math.min(attempt, 5)));
          abort.signal.addEventListener('abort', done, { once: true });
        });
      }
    }
  }

  async #run(live: Live): Promise<void> {
    // Applying stops when the run is stopped or the lock is lost, whichever comes first.
    const held = new AbortController();
    const stop = (): void => held.abort();
    live.abort.signal.addEventListener('abort', stop, { once: true });
    try {
      await this.#runHeld(live, held);
    } finally {
      // One listener per run, gone with it: a projection that lives through many outages does not pile them up.
      live.abort.signal.removeEventListener('abort', stop);
    }
  }

  async #runHeld(live: Live, held: AbortController): Promise<void> {
    const { projection, abort } = live;
    // One live instance: a session-level advisory lock held on a connection of its own.
    while (!abort.signal.aborted) {
      const client = new pg.Client(boundedConnection(this.store.connectionString));
      client.on('error', (error) => this.#options.log('projection lock connection lost', { projection: projection.name, error: String(error) }));
      await client.connect();
      const locked = await client.query<{ locked: boolean }>('SELECT pg_try_advisory_lock($1) AS locked', [projectionLockKey(projection.name).toString()]);
      if (locked.rows[0]?.locked) {
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
      await new Promise((resolve) => setTimeout(resolve, this.#options.standbyRetryMs));
    }
    try {
      if (abort.signal.aborted) return;
      const checkpoint = await this.db.selectFrom('projection_checkpoints').selectAll().where('name', '=', projection.name).executeTakeFirstOrThrow();
      if (checkpoint.status === 'failed') {
        live.status.state = 'failed';
        live.status.error = checkpoint.error as ProjectionFailure;
        live.status.position = Number(checkpoint.position);
        return;
      }
      if (checkpoint.version !== projection.version) {
        this.#options.log('projection version changed: rebuilding from zero', { projection: projection.name, from: checkpoint.version, to: projection.version });
        await this.#rebuildLocked(projection);
      }
      let position = Number((await this.db.selectFrom('projection_checkpoints').select('position').where('name', '=', projection.name).executeTakeFirstOrThrow()).position);
      live.status.position = position;
      live.status.setAside = await this.#countSetAside(projection.name);
      live.status.state = 'running';
      await this.store.follow(
        { fromPosition: position + 1, types: projection.eventTypes, batchSize: this.#options.batchSize, reportEmptyBatches: true },
        async (batch) => {
          live.status.setAside += await this.#applyBatch(projection, position, batch.events, batch.checkpoint);
          position = batch.checkpoint;
          live.status.position = position;
          const last = batch.events[batch.events.length - 1];
          if (last) live.lastAppliedAt = last.recordedAt;
          if (batch.events.length > 0) this.#options.onApplied(projection.name, batch.events[0]!.recordedAt, batch.events.length, new Date());
        },
        held.signal,
      );
      if (!abort.signal.aborted && held.signal.reason instanceof LockLostError) throw held.signal.reason;
    } catch (error) {
      if (error instanceof BatchApplyError) {
        live.status.state = 'failed';
        live.status.error = error.failure;
        await this.db
          .updateTable('projection_checkpoints')
          .set({ status: 'failed', error: JSON.stringify(error.failure), updated_at: new Date() })
          .where('name', '=', projection.name)
          .execute();
        this.#options.log('projection stopped: an event could not be applied', { projection: projection.name, ...error.failure });
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
   * cannot apply is set aside (see `#setAside`) and the rest of the batch applied; returns how many were set aside.
   */
  async #applyBatch(projection: Projection, from: number, events: readonly RecordedEvent[], to: number): Promise<number> {
    try {
      await this.db.transaction().execute(async (trx) => {
        if (events.length > 0) await projection.apply(trx, events);
        await moveCheckpoint(trx, projection.name, from, to);
      });
      return 0;
    } catch (error) {
      if (error instanceof CheckpointMovedError) throw error;
      if (isTransientDatabaseError(error)) throw error;
      // With no event in the batch (only the checkpoint moves) there is no event to blame: the error is the run's.
      if (events.length === 0) throw error;
      const failure = await this.#locateFailure(projection, events, error);
      if (this.#options.onFailure === 'stop' || failure.located === false) throw new BatchApplyError(failure);
      const index = events.findIndex((event) => event.position === failure.position);
      await this.#setAside(projection, failure, async (trx) => {
        if (index > 0) await projection.apply(trx, events.slice(0, index));
        await moveCheckpoint(trx, projection.name, from, failure.position);
      });
      this.#options.log('projection set an event aside and goes on', { projection: projection.name, ...failure });
      return 1 + (await this.#applyBatch(projection, failure.position, events.slice(index + 1), to));
    }
  }

  /**
   * Sets one event aside: first the `ProjectionEventSetAside` event (its id derived from projection, version and
   * position, so a crash and retry appends it once), then, in one transaction with `work` (the batch's prefix and the
   * checkpoint), the dead-letter row. A set-aside event that itself cannot be applied raises no further event.
   */
  async #setAside(projection: Projection, failure: ProjectionFailure, work: (trx: Transaction<DynamicDatabase>) => Promise<void>, options: { record?: boolean } = {}): Promise<void> {
    if (failure.type !== 'ProjectionEventSetAside') {
      await this.store.append(`projection-${projection.name}`, [
        {
          eventId: nameUuid(`projection-set-aside\u0000${projection.name}\u0000${projection.version}\u0000${failure.position}`),
          type: 'ProjectionEventSetAside',
          data: { projection: projection.name, projectionVersion: projection.version, position: failure.position, eventId: failure.eventId, type: failure.type, stream: failure.stream, reason: failure.reason.slice(0, 2000) },
          actor: { kind: 'system', id: 'projection-runner' },
        },
      ]);
    }
    await this.db.transaction().execute(async (trx) => {
      await work(trx);
      // A rebuild keeps its dead letters until the swap, which replaces the projection's rows at once.
      if (options.record === false) return;
      await trx.insertInto('projection_dead_letters').values(deadLetterRow(projection, failure)).onConflict((oc) => oc.columns(['projection', 'position']).doNothing()).execute();
    });
  }

  async #countSetAside(name: string): Promise<number> {
    const row = await this.db.selectFrom('projection_dead_letters').select((eb) => eb.fn.countAll<string>().as('n')).where('projection', '=', name).executeTakeFirst();
    return Number(row?.n ?? 0);
  }

  /**
   * A batch failed: find the first event that fails on its own (applying the batch's prefix in rolled-back
   * transactions) so the error names the event, not just the batch.
   */
  async #locateFailure(projection: Projection, events: readonly RecordedEvent[], cause: unknown, schema?: string, memory?: HeldTableSet | null): Promise<ProjectionFailure> {
    const describe = (event: RecordedEvent, reason: unknown): ProjectionFailure => ({
      position: event.position,
      eventId: event.eventId,
      type: event.type,
      stream: event.stream,
      reason: reason instanceof Error ? reason.message : String(reason),
    });
    const named = cause as { event?: RecordedEvent };
    if (named?.event && typeof named.event.position === 'number') return describe(named.event, cause);
    for (let end = 1; end <= events.length; end += 1) {
      try {
        await inHeld(memory, () =>
          this.db.transaction().execute(async (trx) => {
            await projection.apply(schema ? trx.withSchema(schema) : trx, events.slice(0, end));
            throw new RollbackProbe();
          }),
        );
      } catch (error) {
        if (!(error instanceof RollbackProbe)) return describe(events[end - 1]!, error);
      }
    }
    return { ...describe(events[events.length - 1]!, cause), located: false };
  }

  /**
   * Rebuilds one projection from zero (or up to `toPosition`) into fresh tables, then swaps them in.
   * The projection's live loop in this process is paused meanwhile; the others keep running.
   */
  async rebuild(name: string, options: { toPosition?: number; onProgress?: (progress: RebuildProgress) => void } = {}): Promise<RebuildResult> {
    const projection = this.projections.find((p) => p.name === name);
    if (!projection) throw new Error(`unknown projection '${name}' (known: ${this.projections.map((p) => p.name).join(', ')})`);
    const live = this.#live.get(name);
    if (live) {
      live.abort.abort();
      await live.done;
    }
    await this.#ensureTables(projection);
    const client = new pg.Client(boundedConnection(this.store.connectionString));
    client.on('error', () => undefined);
    await client.connect();
    try {
      const locked = await client.query<{ locked: boolean }>('SELECT pg_try_advisory_lock($1) AS locked', [projectionLockKey(name).toString()]);
      if (!locked.rows[0]?.locked) throw new Error(`projection ${name} is live in another process; stop it there or rebuild there`);
      return await this.#rebuildLocked(projection, options);
    } finally {
      await client.end();
      if (live) this.#startOne(projection);
    }
  }

  async #rebuildLocked(projection: Projection, options: { toPosition?: number; onProgress?: (progress: RebuildProgress) => void } = {}): Promise<RebuildResult> {
    const started = performance.now();
    const target = Math.min(options.toPosition ?? Number.POSITIVE_INFINITY, (await this.store.head()).position);
    const rebuild = await this.#prepareRebuild(projection);
    let position = 0;
    let applied = 0;
    while (position < target) {
      const { events, cut } = await this.store.readAllBounded({ fromPosition: position + 1, toPosition: target, limit: rebuildPageEvents, types: projection.eventTypes, maxBytes: rebuildPageBytes });
      const reached = events.length === rebuildPageEvents || cut ? events[events.length - 1]!.position : target;
      await this.#applyRebuildPage(rebuild, events);
      applied += events.length;
      position = reached;
      options.onProgress?.({ name: projection.name, position, target });
    }
    await this.#completeScratch(rebuild);
    const views = await this.#finishRebuild(rebuild, position);
    return { position, events: applied, seconds: (performance.now() - started) / 1000, viewsRestored: views.restored, viewsLost: views.lost };
  }

  /**
   * Rebuilds several projections from zero at once over one read of the log (each page read once, while the one
   * before is applied; each projection applies the events of its types in its own transaction, side by side), each
   * into its own scratch schema, each swapped in when the log is read to the end. Their live loops in this process
   * pause meanwhile. Refused (nothing changed) if any of them is live in another process.
   */
  async rebuildAll(
    names: readonly string[] = this.projections.map((p) => p.name),
    options: { toPosition?: number; maxPageBytes?: number; maxPageEvents?: number; onProgress?: (progress: RebuildProgress) => void } = {},
  ): Promise<Map<string, RebuildResult>> {
    const chosen = names.map((name) => {
      const projection = this.projections.find((p) => p.name === name);
      if (!projection) throw new Error(`unknown projection '${name}' (known: ${this.projections.map((p) => p.name).join(', ')})`);
      return projection;
    });
    const paused = chosen.filter((projection) => this.#live.has(projection.name));
    for (const projection of paused) this.#live.get(projection.name)!.abort.abort();
    await Promise.all(paused.map((projection) => this.#live.get(projection.name)?.done));
    const client = new pg.Client(boundedConnection(this.store.connectionString));
    client.on('error', () => undefined);
    await client.connect();
    try {
      for (const projection of chosen) {
        await this.#ensureTables(projection);
        const locked = await client.query<{ locked: boolean }>('SELECT pg_try_advisory_lock($1) AS locked', [projectionLockKey(projection.name).toString()]);
        if (!locked.rows[0]?.locked) throw new Error(`projection ${projection.name} is live in another process; stop it there or rebuild there`);
      }
      const started = performance.now();
      const target = Math.min(options.toPosition ?? Number.POSITIVE_INFINITY, (await this.store.head()).position);
      const rebuilds = [];
      for (const projection of chosen) rebuilds.push({ ...(await this.#prepareRebuild(projection)), types: new Set<string>(projection.eventTypes), events: 0 });
      const types = [...new Set(chosen.flatMap((projection) => [...projection.eventTypes]))];
      const maxBytes = options.maxPageBytes ?? rebuildPageBytes;
      const limit = options.maxPageEvents ?? rebuildPageEvents;
      const read = (from: number) => (from > target ? Promise.resolve({ events: [] as RecordedEvent[], cut: false }) : this.store.readAllBounded({ fromPosition: from, toPosition: target, limit, types, maxBytes }));
      let page = await read(1);
      while (page.events.length > 0) {
        const last = page.events[page.events.length - 1]!.position;
        const next = read(page.events.length === limit || page.cut ? last + 1 : target + 1);
        // A read that fails while this page is applied is reported by the await below, not as an unhandled rejection.
        next.catch(() => undefined);
        const events = page.events;
        await Promise.all(
          rebuilds.map(async (rebuild) => {
            const own = events.filter((event) => rebuild.types.has(event.type));
            rebuild.events += own.length;
            await this.#applyRebuildPage(rebuild, own);
          }),
        );
        options.onProgress?.({ name: chosen.length === 1 ? chosen[0]!.name : `${chosen.length} read models`, position: last, target });
        page = await next;
      }
      options.onProgress?.({ name: chosen.length === 1 ? chosen[0]!.name : `${chosen.length} read models`, position: target, target });
      // The scratch tables are written and indexed side by side; the swaps one after the other (views may span them).
      await Promise.all(rebuilds.map((rebuild) => this.#completeScratch(rebuild)));
      const results = new Map<string, RebuildResult>();
      for (const rebuild of rebuilds) {
        const views = await this.#finishRebuild(rebuild, target);
        results.set(rebuild.projection.name, { position: target, events: rebuild.events, seconds: (performance.now() - started) / 1000, viewsRestored: views.restored, viewsLost: views.lost });
      }
      return results;
    } finally {
      await client.end();
      for (const projection of paused) this.#startOne(projection);
    }
  }

  /**
   * Fresh tables for a rebuild in its scratch schema, without their secondary indexes (built once before the swap:
   * cheaper than maintaining them row by row through the whole log; the unique ones stay, upserts need them).
   */
  async #prepareRebuild(projection: Projection): Promise<Rebuild> {
    const schema = rebuildSchema(projection.name);
    await sql`DROP SCHEMA IF EXISTS ${sql.id(schema)} CASCADE`.execute(this.db);
    await sql`CREATE SCHEMA ${sql.id(schema)}`.execute(this.db);
    await projection.createTables(this.db.withSchema(schema));
    const secondary = await sql<{ name: string; definition: string }>`
      SELECT c.relname AS name, pg_get_indexdef(i.indexrelid) AS definition
        FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_namespace n ON n.oid = c.relnamespace
       WHERE n.nspname = ${schema} AND NOT i.indisunique`.execute(this.db);
    for (const index of secondary.rows) await sql`DROP INDEX ${sql.id(schema, index.name)}`.execute(this.db);
    await this.db.updateTable('projection_checkpoints').set({ status: 'rebuilding', updated_at: new Date() }).where('name', '=', projection.name).execute();
    return { projection, schema, deferred: secondary.rows.map((index) => index.definition), setAside: [], memory: projection.holdTables?.() ?? null };
  }

  /**
   * Applies one page of a rebuild. An event the projection cannot apply is set aside here too: a fixed projection
   * replays what was set aside before, and what still fails is set aside again (the dead letters are replaced at the
   * swap).
   */
  async #applyRebuildPage(rebuild: Rebuild, events: readonly RecordedEvent[]): Promise<void> {
    const { projection, schema, memory } = rebuild;
    let pending: readonly RecordedEvent[] = events;
    while (pending.length > 0) {
      try {
        const batch = pending;
        await inHeld(memory, () => this.db.transaction().execute((trx) => projection.apply(trx.withSchema(schema), batch)));
        pending = [];
      } catch (error) {
        if (isTransientDatabaseError(error)) throw error;
        const failure = await this.#locateFailure(projection, pending, error, schema, memory);
        if (this.#options.onFailure === 'stop' || failure.located === false) {
          await this.db.updateTable('projection_checkpoints').set({ status: 'failed', error: JSON.stringify(failure), updated_at: new Date() }).where('name', '=', projection.name).execute();
          throw new BatchApplyError(failure);
        }
        const index = pending.findIndex((event) => event.position === failure.position);
        const prefix = pending.slice(0, index);
        await inHeld(memory, () =>
          this.#setAside(projection, failure, async (trx) => {
            if (prefix.length > 0) await projection.apply(trx.withSchema(schema), prefix);
          }, { record: false }),
        );
        rebuild.setAside.push(failure);
        this.#options.log('rebuild set an event aside and goes on', { projection: projection.name, ...failure });
        pending = pending.slice(index + 1);
      }
    }
    if (memory && memory.rows > this.#options.maxHeldRows) await memory.flush(this.db.withSchema(schema), { evict: true });
  }

  /** Writes what the rebuild holds in memory into its scratch schema, then builds the indexes deferred until now. */
  async #completeScratch(rebuild: Rebuild): Promise<void> {
    await rebuild.memory?.flush(this.db.withSchema(rebuild.schema), { evict: true });
    for (const definition of rebuild.deferred) await sql.raw(definition).execute(this.db);
  }

  /**
   * The swap (after `#completeScratch`): old tables out, rebuilt tables in, checkpoint to the rebuilt position,
   * all at once. Views that analysts built on the old tables are dropped with them and made again on the new ones,
   * with their grants.
   */
  async #finishRebuild(rebuild: Rebuild, position: number): Promise<ViewsRestored> {
    const { projection, schema, setAside } = rebuild;
    let views: ViewsRestored = { restored: [], lost: [] };
    await this.db.transaction().execute(async (trx) => {
      const dependents = await dependentViews(trx, projection.tables);
      for (const table of projection.tables) {
        await sql`DROP TABLE IF EXISTS ${sql.id('public', table)} CASCADE`.execute(trx);
        await sql`ALTER TABLE ${sql.id(schema, table)} SET SCHEMA public`.execute(trx);
      }
      await sql`DROP SCHEMA ${sql.id(schema)} CASCADE`.execute(trx);
      views = await restoreViews(trx, dependents);
      await trx.deleteFrom('projection_dead_letters').where('projection', '=', projection.name).execute();
      if (setAside.length > 0) await trx.insertInto('projection_dead_letters').values(setAside.map((failure) => deadLetterRow(projection, failure))).execute();
      await trx
        .updateTable('projection_checkpoints')
        .set({ position, version: projection.version, status: 'running', error: null, updated_at: new Date() })
        .where('name', '=', projection.name)
        .execute();
    });
    await projection.createTables(this.db);
    for (const lost of views.lost) this.#options.log('rebuild could not make a dependent view again', { projection: projection.name, ...lost });
    return views;
  }

  /** Position, lag and state of every projection (for health and metrics). */
  async status(): Promise<ProjectionStatus[]> {
    const head = await this.store.head();
    // A standby's own position is where it last applied (nothing, often): the read model is as current as the live
    // instance in another process keeps it, which is the checkpoint row. Read it, so a standby process is not
    // reported lagging (and not ready) while the read model is current.
    const standby = [...this.#live.values()].filter((live) => live.status.state === 'standby').map((live) => live.status.name);
    const checkpoints = new Map<string, { position: number; updatedAt: Date }>();
    if (standby.length > 0) {
      const rows = await this.db.selectFrom('projection_checkpoints').select(['name', 'position', 'updated_at']).where('name', 'in', standby).execute();
      for (const row of rows) checkpoints.set(String(row.name), { position: Number(row.position), updatedAt: new Date(row.updated_at as unknown as string) });
    }
    return [...this.#live.values()].map((live) => {
      const shared = live.status.state === 'standby' ? checkpoints.get(live.status.name) : undefined;
      const position = shared ? Math.max(live.status.position, shared.position) : live.status.position;
      const appliedAt = shared ? shared.updatedAt : live.lastAppliedAt;
      const lagPositions = Math.max(0, head.position - position);
      const lagSeconds = lagPositions === 0 ? 0 : Math.max(0, (head.recordedAt.getTime() - (appliedAt?.getTime() ?? head.recordedAt.getTime())) / 1000);
      return { ...live.status, position, headPosition: head.position, lagPositions, lagSeconds };
    });
  }

  /** Clears a failed projection so it resumes from its checkpoint (after the cause was fixed). */
  async clearFailure(name: string): Promise<void> {
    await this.db.updateTable('projection_checkpoints').set({ status: 'running', error: null, updated_at: new Date() }).where('name', '=', name).execute();
    const live = this.#live.get(name);
    const projection = this.projections.find((p) => p.name === name);
    if (live && projection && live.status.state === 'failed') this.#startOne(projection);
  }

  async stop(): Promise<void> {
    for (const live of this.#live.values()) live.abort.abort();
    await Promise.all([...this.#live.values()].map((live) => live.done));
  }
}

function deadLetterRow(projection: Projection, failure: ProjectionFailure): Record<string, unknown> {
  return {
    projection: projection.name,
    position: failure.position,
    event_id: failure.eventId,
    type: failure.type,
    stream: failure.stream,
    reason: failure.reason.slice(0, 2000),
    projection_version: projection.version,
    set_aside_at: new Date(),
  };
}

/** A rebuild under way: its projection, scratch schema, indexes to build before the swap, events set aside, and memory. */
interface Rebuild {
  projection: Projection;
  schema: string;
  deferred: string[];
  setAside: ProjectionFailure[];
  memory: HeldTableSet | null;
}

/**
 * Runs `work` (one apply in its transaction) with the rebuild's tables held in memory, if it holds them: what the apply
 * wrote to memory is undone when `work` throws, as its transaction is rolled back.
 */
async function inHeld<T>(memory: HeldTableSet | null | undefined, work: () => Promise<T>): Promise<T> {
  if (!memory) return work();
  memory.begin();
  try {
    const result = await memory.run(work);
    memory.commit();
    return result;
  } catch (error) {
    memory.rollback();
    throw error;
  }
}

class CheckpointMovedError extends Error {}

/** This instance's lock on a projection went with its connection: another instance may apply it now. */
class LockLostError extends Error {}

/** Moves a projection's checkpoint from `from` to `to`, refusing when another writer moved it meanwhile. */
async function moveCheckpoint(trx: Transaction<DynamicDatabase>, name: string, from: number, to: number): Promise<void> {
  const moved = await trx.updateTable('projection_checkpoints').set({ position: to, updated_at: new Date() }).where('name', '=', name).where('position', '=', from).executeTakeFirst();
  if (Number(moved.numUpdatedRows) !== 1) throw new CheckpointMovedError(`checkpoint of ${name} moved under this instance (expected ${from})`);
}

class BatchApplyError extends Error {
  constructor(readonly failure: ProjectionFailure) {
    super(`event ${failure.position} (${failure.type}) could not be applied: ${failure.reason}`);
  }
}

class RollbackProbe extends Error {}

/**
 * A failure of the database rather than of the projection: connection lost or refused, server shutting
 * down or starting (SQLSTATE classes 08, 57P, 53), or the store reporting itself unavailable or its disk full.
 */
export function isTransientDatabaseError(error: unknown): boolean {
  const candidate = error as { code?: unknown; message?: unknown; details?: { cause?: unknown } };
  if (candidate?.code === 'LEDGER_STORE_UNAVAILABLE' || candidate?.code === 'LEDGER_STORAGE_FULL') return true;
  if (typeof candidate?.code === 'string' && /^(08|57P|53)/.test(candidate.code)) return true;
  if (typeof candidate?.code === 'string' && ['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT'].includes(candidate.code)) return true;
  // A connection lost or a server restarting (store-outage.ts names the signs) means "wait", never the projection's fault.
  return isStoreUnavailable(error);
}

export interface RebuildResult {
  position: number;
  events: number;
  seconds: number;
  /** Views on the projection's tables (analysts' own), made again on the rebuilt tables with their owner and grants. */
  viewsRestored: string[];
  /** Views that no longer fit the rebuilt tables (a column gone, say): named with the database's reason. */
  viewsLost: Array<{ view: string; reason: string }>;
}

interface DependentView {
  name: string;
  kind: 'v' | 'm';
  definition: string;
  owner: string;
  grants: Array<{ grantee: string; privilege: string }>;
}
type ViewsRestored = { restored: string[]; lost: Array<{ view: string; reason: string }> };

/** Every view and materialized view that depends on `tables` in public, directly or through other views, oldest first. */
async function dependentViews(trx: Kysely<DynamicDatabase>, tables: readonly string[]): Promise<DependentView[]> {
  const { rows } = await sql<{ name: string; kind: 'v' | 'm'; definition: string; owner: string; grants: Array<{ grantee: string; privilege: string }> | null }>`
    WITH RECURSIVE deps(oid) AS (
      SELECT DISTINCT r.ev_class FROM pg_depend d JOIN pg_rewrite r ON r.oid = d.objid
       WHERE d.classid = 'pg_rewrite'::regclass AND d.refclassid = 'pg_class'::regclass
         AND d.refobjid IN (SELECT c.oid FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = 'public' AND c.relname = ANY(${sql.val([...tables])}::text[]))
      UNION
      SELECT r.ev_class FROM deps JOIN pg_depend d ON d.refobjid = deps.oid AND d.classid = 'pg_rewrite'::regclass AND d.refclassid = 'pg_class'::regclass
        JOIN pg_rewrite r ON r.oid = d.objid
    )
    SELECT format('%I.%I', n.nspname, c.relname) AS name, c.relkind AS kind, pg_get_viewdef(c.oid) AS definition,
           pg_get_userbyid(c.relowner) AS owner,
           (SELECT json_agg(json_build_object('grantee', CASE WHEN a.grantee = 0 THEN 'PUBLIC' ELSE quote_ident(pg_get_userbyid(a.grantee)) END, 'privilege', a.privilege_type))
              FROM aclexplode(c.relacl) a WHERE a.grantee <> c.relowner) AS grants
      FROM deps JOIN pg_class c ON c.oid = deps.oid JOIN pg_namespace n ON n.oid = c.relnamespace
     WHERE c.relkind IN ('v', 'm') AND NOT (n.nspname = 'public' AND c.relname = ANY(${sql.val([...tables])}::text[]))
     ORDER BY c.oid`.execute(trx);
  return rows.map((row) => ({ ...row, grants: row.grants ?? [] }));
}

/** Makes each view again (each in a savepoint: one that no longer fits is reported, the swap goes on). */
async function restoreViews(trx: Kysely<DynamicDatabase>, views: readonly DependentView[]): Promise<ViewsRestored> {
  const result: ViewsRestored = { restored: [], lost: [] };
  for (const [index, view] of views.entries()) {
    const savepoint = sql.raw(`restore_view_${index}`);
    await sql`SAVEPOINT ${savepoint}`.execute(trx);
    try {
      const body = sql.raw(view.definition.trim().replace(/;$/, ''));
      const name = sql.raw(view.name);
      if (view.kind === 'm') await sql`CREATE MATERIALIZED VIEW ${name} AS ${body}`.execute(trx);
      else await sql`CREATE VIEW ${name} AS ${body}`.execute(trx);
      await sql`ALTER ${sql.raw(view.kind === 'm' ? 'MATERIALIZED VIEW' : 'VIEW')} ${name} OWNER TO ${sql.raw(quoteIdent(view.owner))}`.execute(trx);
      for (const grant of view.grants) await sql`GRANT ${sql.raw(grant.privilege)} ON ${name} TO ${sql.raw(grant.grantee)}`.execute(trx);
      await sql`RELEASE SAVEPOINT ${savepoint}`.execute(trx);
      result.restored.push(view.name);
    } catch (error) {
      await sql`ROLLBACK TO SAVEPOINT ${savepoint}`.execute(trx);
      result.lost.push({ view: view.name, reason: error instanceof Error ? error.message : String(error) });
    }
  }
  return result;
}

function quoteIdent(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}
