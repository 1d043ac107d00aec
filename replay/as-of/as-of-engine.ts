/**
 * Time travel: every read model as of a log position or an instant.
 *
 * Design: periodic snapshots plus the tail of the log.
 * - A snapshotter (started with the ledger) copies each projection's tables together with that projection's checkpoint,
 *   in one REPEATABLE READ transaction, into `as_of_snapshot_<id>` (catalogue: `as_of_snapshots`,
 *   `as_of_snapshot_parts`), every `snapshotEveryEvents` positions of each projection's progress or every
 *   `snapshotEveryMs`, whichever first; older snapshots are thinned by a retention policy. When nothing is due, it
 *   fills a stretch where a projection went uncopied for more than twice that (copied from the copy before it, along
 *   the log).
 * - A question as of position P materializes only the projections it reads: for each, the newest snapshot at or before
 *   P is the base, never copied: the tail (snapshot, P] is applied through the projection's own `apply` (read with the
 *   store's `readAll`, only the projection's event types) to empty UNLOGGED overlay tables (`as_of_view_<engine>_<n>_w`)
 *   that hold only the rows the tail writes (its loads read the snapshot's rows through); the view schema
 *   (`as_of_view_<engine>_<n>`) holds one SQL view per table: the overlay's rows and the snapshot's rows the overlay
 *   did not claim (`materialize.ts`). All of it is one transaction. A question costs its tail and the rows it reads,
 *   not the size of the read model (copying a 120 MB snapshot per question was most of its time before). The
 *   ordinary query functions then answer from the view schema, in a READ ONLY transaction whose search path holds the
 *   view alone: nothing asked through time travel can write, or read a live table by accident.
 * - Views are cached (LRU, default 4); identical concurrent questions share one materialization; a view is dropped on
 *   eviction once its last reader is done, and at stop. Each engine holds a session advisory lock while it lives; a
 *   view schema whose engine holds none (the process died) is dropped by the next engine to start, or by a live one's
 *   periodic sweep.
 * - An instant resolves to the last position recorded at or before it (the ledger clock never runs backwards along the
 *   log) by a binary search over the primary key run inside PostgreSQL; every answer states the position and the
 *   `recorded_at` it reflects.
 *
 * Why not the alternatives:
 * - Replaying every projection from position 1 per question: `bench/asof.ts` measures it beside the snapshot answer.
 * - Temporal read models (validity ranges on every row): every projection's write path would change, and so would
 *   every query; snapshots reuse both unchanged.
 * - Materializing every projection per question: a question about dark nodes needs liveness only.
 *
 * Figures (`npx tsx bench/asof.ts --json`, 25,000 nodes, 2,000,100 events, 2 cores shared with other work):
 * see the end of this comment block once measured; `README.md` carries the full line.
 */
import { sql, Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import type { EventStore, Projection, DynamicDatabase } from '../../src/ledger/index.js';
import { AsOfError } from './as-of-error.js';
import { parsePoint, positionAtOrBefore, recordedAtOf, type AsOfPoint, type PointQuestion } from './as-of-point.js';
import { dropStale, ensureCatalogue, newEngineKey, viewSchema } from './as-of-storage.js';
import { EngineLock } from './engine-lock.js';
import { applyTail, clonePart, completeIndexes, createViewTables, materializeProjection, workSchemaOf, type MaterializeStats } from './materialize.js';
import { pruneSnapshots, type RetentionPolicy } from './retention.js';
import { rolloutAsOf, rolloutsAsOf, stepAsOf } from './rollouts-as-of.js';
import { Snapshotter } from './snapshotter.js';
import { indexDefinitions, indexSnapshotTables, listSnapshots, measureSnapshot, newestPart, recordSnapshot, takeSnapshot, widestGap, type SnapshotPart, type SnapshotSummary } from './snapshot-store.js';
import { ViewCache } from './view-cache.js';

export interface AsOfOptions {
  /** A snapshot once the projections advanced this many positions (default 50,000). */
  snapshotEveryEvents?: number;
  /** A snapshot once this long passed, if the projections advanced at all (default 10 minutes). */
  snapshotEveryMs?: number;
  /** How often the snapshotter looks (default 5 s). */
  snapshotCheckMs?: number;
  /** Which snapshots are kept (default: all of the last 24 hours of the log, one an hour before that). */
  retention?: Partial<RetentionPolicy>;
  /** Views kept materialized (default 4). */
  cachedViews?: number;
  /** Connections of the engine's own pool: materializations never take the live ledger's (default 4). */
  connections?: number;
  /** Events read and applied at a time in a tail (default 1,000). */
  pageSize?: number;
  /** false: every view replays its projections from position 1 (the baseline the benchmark compares with). */
  useSnapshots?: boolean;
  /** The ledger clock, for refusing instants in the future (default: now). */
  clock?: () => Date;
  /** How often the engine sweeps the views of engines that died (default 60 s; also done at start). */
  sweepMs?: number;
  /** Problems worth an operator's attention (a snapshot or a sweep that failed and will be retried). */
  log?: (message: string, fields?: Record<string, unknown>) => void;
  /** Each snapshot the snapshotter takes, with how many old ones the retention policy let go. */
  onSnapshot?: (snapshot: SnapshotSummary, pruned: number) => void;
}

export interface AsOfStats {
  snapshots: number;
  materialized: number;
  /** The materializations behind the last question answered. */
  lastQuestion: MaterializeStats[];
}

const defaultRetention: RetentionPolicy = { keepAllForMs: 86_400_000, olderSpacingMs: 3_600_000 };

/**
 * The as-of engine of one process: resolves points, materializes and caches views, runs the snapshotter. Construct it
 * with the store and the same projections the runner runs (their names, versions and `apply` are what it replays).
 */
export class AsOfEngine {
  /** This engine's key: the advisory lock it holds while it lives, and part of its view schemas' names. */
  readonly engineKey = newEngineKey();
  readonly stats: AsOfStats = { snapshots: 0, materialized: 0, lastQuestion: [] };
  readonly #store: EventStore;
  readonly #projections: ReadonlyMap<string, Projection>;
  readonly #options: Required<Omit<AsOfOptions, 'retention'>> & { retention: RetentionPolicy };
  readonly #pool: pg.Pool;
  readonly #db: Kysely<DynamicDatabase>;
  readonly #cache: ViewCache;
  readonly #lock: EngineLock;
  #snapshotter: Snapshotter | null = null;
  #sweeper: NodeJS.Timeout | null = null;
  #exclusive: Promise<unknown> = Promise.resolve();
  #viewSequence = 0;
  #started = false;
  #stopped = false;

  constructor(store: EventStore, projections: readonly Projection[], options: AsOfOptions = {}) {
    this.#store = store;
    this.#projections = new Map(projections.map((projection) => [projection.name, projection]));
    this.#options = {
      snapshotEveryEvents: options.snapshotEveryEvents ?? 50_000,
      snapshotEveryMs: options.snapshotEveryMs ?? 10 * 60_000,
      snapshotCheckMs: options.snapshotCheckMs ?? 5_000,
      retention: { ...defaultRetention, ...options.retention },
      cachedViews: options.cachedViews ?? 4,
      connections: options.connections ?? 4,
      pageSize: options.pageSize ?? 1_000,
      useSnapshots: options.useSnapshots ?? true,
      clock: options.clock ?? (() => new Date()),
      sweepMs: options.sweepMs ?? 60_000,
      log: options.log ?? (() => undefined),
      onSnapshot: options.onSnapshot ?? (() => undefined),
    };
    for (const name of ['snapshotEveryEvents', 'snapshotEveryMs', 'snapshotCheckMs', 'cachedViews', 'connections', 'pageSize', 'sweepMs'] as const) {
      const value = this.#options[name];
      if (!Number.isSafeInteger(value) || value < 1) throw new RangeError(`as-of option ${name} must be a whole number, 1 or more, got ${value}`);
    }
    // Timestamps (six a liveness row) are read by the ledger's parser, which the event store installs for the process.
    this.#pool = new pg.Pool({ connectionString: store.connectionString, max: this.#options.connections });
    // As the store's pool: a lost connection fails the statement in flight, never the process.
    this.#pool.on('error', () => undefined);
    this.#pool.on('connect', (client) => client.on('error', () => undefined));
    this.#db = new Kysely<DynamicDatabase>({ dialect: new PostgresDialect({ pool: this.#pool }) });
    this.#lock = new EngineLock(store.connectionString, this.engineKey, this.#options.log);
    this.#cache = new ViewCache(this.#options.cachedViews, {
      nameView: () => viewSchema(this.engineKey, (this.#viewSequence += 1)),
      createSchema: async (schema) => {
        await sql`CREATE SCHEMA ${sql.id(schema)}`.execute(this.#db);
        await sql`CREATE SCHEMA ${sql.id(workSchemaOf(schema))}`.execute(this.#db);
      },
      dropSchema: async (schema) => void (await sql`DROP SCHEMA IF EXISTS ${sql.id(schema)}, ${sql.id(workSchemaOf(schema))} CASCADE`.execute(this.#db)),
      materialize: (schema, position, name) => this.#materialize(schema, position, name),
      onDropError: (schema, error) => this.#options.log('as-of view not dropped (the first engine to sweep after this one stops will)', { schema, error: String(error) }),
    });
  }

  /** The projections this engine can answer about, by name. */
  get projectionNames(): string[] {
    return [...this.#projections.keys()];
  }

  /**
   * Creates the catalogue when absent, takes this engine's lock, drops what engines that died left (their view
   * schemas), and (unless `snapshots: false`) starts the snapshotter.
   */
  async start(options: { snapshots?: boolean } = {}): Promise<void> {
    if (this.#started) return;
    this.#started = true;
    await ensureCatalogue(this.#db);
    await this.#lock.ensure();
    await this.#sweep();
    this.#sweeper = setInterval(() => {
      void this.#lock
        .ensure()
        .then(() => this.#sweep())
        .catch((error: unknown) => this.#options.log('as-of sweep failed (retried at the next)', { error: String(error) }));
    }, this.#options.sweepMs);
    this.#sweeper.unref();
    if (options.snapshots === false) return;
    this.#snapshotter = new Snapshotter(
      this.#db,
      [...this.#projections.values()],
      { everyEvents: this.#options.snapshotEveryEvents, everyMs: this.#options.snapshotEveryMs, checkMs: this.#options.snapshotCheckMs, retention: this.#options.retention },
      {
        exclusive: (run) => this.#serially(run),
        fillGap: () => this.#fillWidestGap(),
        onSnapshot: (snapshot, pruned) => {
          this.stats.snapshots += 1;
          this.#options.onSnapshot(snapshot, pruned);
        },
        onError: (error) => this.#options.log('read-model snapshot failed (retried at the next check)', { error: String(error) }),
      },
    );
    this.#snapshotter.start();
  }

  /** Stops the snapshotter, drops this engine's views (after their readers), and closes the engine's connections. */
  async stop(): Promise<void> {
    if (this.#stopped) return;
    this.#stopped = true;
    if (this.#sweeper) clearInterval(this.#sweeper);
    await this.#snapshotter?.stop();
    await this.#exclusive.catch(() => undefined);
    await this.#cache.close();
    await this.#lock.release();
    await this.#db.destroy();
  }

  async #sweep(): Promise<void> {
    const dropped = await dropStale(this.#db);
    if (dropped.views.length + dropped.snapshots.length > 0) this.#options.log('dropped what stopped as-of engines left', dropped);
  }

  /** Runs snapshot work one at a time (the snapshotter and a backfill never interleave). */
  #serially<T>(run: () => Promise<T>): Promise<T> {
    const next = this.#exclusive.catch(() => undefined).then(run);
    this.#exclusive = next;
    return next;
  }

  /** An asOf value (`1234` or an RFC 3339 instant) as the point it stands for. */
  async resolve(asOf: string): Promise<AsOfPoint> {
    return this.resolvePoint(parsePoint(asOf));
  }

  /**
   * A position or an instant as the point it stands for. Refused (typed): a position past the head, an instant later
   * than the ledger clock, an instant before the first event, any point of an empty log.
   */
  async resolvePoint(question: PointQuestion): Promise<AsOfPoint> {
    const head = await this.#store.head();
    const value = 'position' in question ? String(question.position) : question.instant.toISOString();
    if ('position' in question) {
      if (!Number.isSafeInteger(question.position) || question.position < 1) {
        throw new AsOfError('ASOF_INVALID_POINT', { value, reason: 'a position is a whole number, 1 or more' }, `asOf position must be a whole number, 1 or more, got ${value}`);
      }
      if (question.position > head.position) {
        throw new AsOfError('ASOF_BEYOND_HEAD', { value, position: question.position, headPosition: head.position }, `position ${question.position} is beyond the head of the log (${head.position})`);
      }
      const recordedAt = (await recordedAtOf(this.#store.db.withTables<DynamicDatabase>(), question.position))!;
      return { position: question.position, recordedAt, instant: recordedAt };
    }
    const now = this.#options.clock();
    if (question.instant.getTime() > now.getTime()) {
      throw new AsOfError('ASOF_IN_FUTURE', { value, now: now.toISOString(), headPosition: head.position }, `${value} is in the future (the ledger clock reads ${now.toISOString()})`);
    }
    const db = this.#store.db.withTables<DynamicDatabase>();
    const position = await positionAtOrBefore(db, question.instant, head);
    if (position === 0) {
      const first = head.position === 0 ? null : await recordedAtOf(db, 1);
      throw new AsOfError(
        'ASOF_BEFORE_LOG',
        { value, firstRecordedAt: first?.toISOString() ?? null },
        first ? `${value} is before the first event of the log (recorded ${first.toISOString()})` : `the log is empty: nothing to show as of ${value}`,
      );
    }
    return { position, recordedAt: (await recordedAtOf(db, position))!, instant: question.instant };
  }

  /**
   * Runs `query` against the read models of `projections` as of `point`, in a READ ONLY transaction bound to the view
   * schema (the query functions of `projections/` take it as their `db`). The view is materialized if needed, shared
   * with concurrent questions about the same position, and cannot be dropped while `query` runs.
   */
  async read<T>(point: AsOfPoint, projections: readonly string[], query: (db: Kysely<DynamicDatabase>) => Promise<T>): Promise<T> {
    if (this.#stopped) throw new AsOfError('ASOF_STOPPED', {}, 'the as-of engine is stopped');
    for (const name of projections) {
      if (!this.#projections.has(name)) throw new AsOfError('ASOF_UNKNOWN_PROJECTION', { projection: name, known: this.projectionNames }, `no projection '${name}' (known: ${this.projectionNames.join(', ')})`);
    }
    const ask = (): Promise<T> =>
      this.#cache.use(point.position, projections, async (schema, stats) => {
        this.stats.lastQuestion = stats;
        return this.#db
          .transaction()
          .setAccessMode('read only')
          .execute(async (trx) => {
            // Only the view is on the search path: raw SQL in a query function that names a table without a schema
            // reads the view's table, and one naming a table the view lacks fails instead of reading live data.
            await sql`SET LOCAL search_path TO ${sql.id(schema)}`.execute(trx);
            return query(trx.withSchema(schema));
          });
      });
    try {
      return await ask();
    } catch (error) {
      // The view's schema went away under it (another engine swept it while this one had lost its lock): build it again.
      const code = (error as { code?: unknown }).code;
      if (code !== '3F000' && code !== '42P01') throw error;
      this.#cache.invalidate(point.position);
      return ask();
    }
  }

  async #materialize(schema: string, position: number, name: string): Promise<MaterializeStats> {
    const projection = this.#projections.get(name)!;
    const stats = await materializeProjection(this.#db, this.#store, projection, schema, position, { pageSize: this.#options.pageSize, useSnapshots: this.#options.useSnapshots });
    this.stats.materialized += 1;
    return stats;
  }

  /** Rollouts planned by `point`, each folded up to it. */
  rollouts(point: AsOfPoint) {
    return rolloutsAsOf(this.#store, point.position);
  }

  /** One rollout as of `point` (null: not planned by then). */
  rollout(point: AsOfPoint, rolloutId: string) {
    return rolloutAsOf(this.#store, rolloutId, point.position);
  }

  /** One node's firmware step of a rollout as of `point`. */
  rolloutStep(point: AsOfPoint, rolloutId: string, nodeId: string) {
    return stepAsOf(this.#store, rolloutId, nodeId, point.position);
  }

  /** Takes a snapshot now (if none is being taken by another process), then applies the retention policy. */
  snapshot(): Promise<SnapshotSummary | null> {
    return this.#serially(async () => {
      const snapshot = await takeSnapshot(this.#db, [...this.#projections.values()]);
      if (snapshot) {
        this.stats.snapshots += 1;
        await pruneSnapshots(this.#db, await listSnapshots(this.#db), this.#options.retention, this.#options.clock());
      }
      return snapshot;
    });
  }

  /** Every snapshot kept, oldest first. */
  snapshots(): Promise<SnapshotSummary[]> {
    return listSnapshots(this.#db);
  }

  /**
   * Snapshots every `every` positions past the newest one, built from the log (a ledger upgraded to time travel, a
   * restored backup, a log that grew while the snapshotter was off): one working view advances along the log through
   * the projections' `apply`, and is copied out at each step, so the whole costs about one replay of the log plus the
   * copies. Returns the snapshots made.
   */
  backfillSnapshots(every: number, onProgress?: (snapshot: SnapshotSummary) => void): Promise<SnapshotSummary[]> {
    if (!Number.isSafeInteger(every) || every < 1) throw new RangeError(`every must be a whole number of positions, 1 or more, got ${every}`);
    return this.#serially(async () => {
      const projections = [...this.#projections.values()];
      const head = await this.#store.head();
      const starts = new Map<string, SnapshotPart | null>();
      for (const projection of projections) starts.set(projection.name, await newestPart(this.#db, projection, head.position));
      const start = Math.max(...[...starts.values()].map((part) => part?.position ?? 0));
      const targets: number[] = [];
      for (let target = start + every; target <= head.position; target += every) targets.push(target);
      return this.#copyAlong(projections, starts, targets, onProgress);
    });
  }

  /**
   * The gaps the snapshotter would fill (`widestGap`), counted: stretches where a projection has no copy for more than
   * twice `snapshotEveryEvents`, recorded within the retention's keep-all window.
   */
  async gapsToFill(): Promise<number> {
    let gaps = 0;
    for (const projection of this.#projections.values()) if (await widestGap(this.#db, [projection], this.#options.snapshotEveryEvents, this.#keepAllSince())) gaps += 1;
    return gaps;
  }

  #keepAllSince(): Date {
    return new Date(this.#options.clock().getTime() - this.#options.retention.keepAllForMs);
  }

  /** Fills the widest gap of one projection's copies (run by the snapshotter when nothing is due); the snapshots made. */
  async #fillWidestGap(): Promise<SnapshotSummary[]> {
    const gap = await widestGap(this.#db, [...this.#projections.values()], this.#options.snapshotEveryEvents, this.#keepAllSince());
    if (!gap) return [];
    this.#options.log('filling a stretch without snapshots', { projection: gap.projection.name, from: gap.from.position, to: gap.to, copies: gap.targets.length });
    return this.#copyAlong([gap.projection], new Map([[gap.projection.name, gap.from]]), gap.targets);
  }

  /**
   * Advances a working view of `projections` along the log, each from its part in `starts` (or from position 0), and
   * copies it out as a snapshot (origin `backfill`) at each of `targets`, ascending: one replay of the stretch plus
   * the copies. Callers hold the snapshot work's turn (`#serially`).
   */
  async #copyAlong(projections: readonly Projection[], starts: ReadonlyMap<string, SnapshotPart | null>, targets: readonly number[], onProgress?: (snapshot: SnapshotSummary) => void): Promise<SnapshotSummary[]> {
    if (targets.length === 0) return [];
    const head = await this.#store.head();
    const working = viewSchema(this.engineKey, (this.#viewSequence += 1));
    const made: SnapshotSummary[] = [];
    await sql`CREATE SCHEMA ${sql.id(working)}`.execute(this.#db);
    try {
      const reached = new Map<string, number>();
      for (const projection of projections) {
        const part = starts.get(projection.name) ?? null;
        await this.#db.transaction().execute(async (trx) => {
          if (part) {
            await clonePart(trx, part, working);
            await completeIndexes(trx, part, working);
          } else {
            await createViewTables(trx, projection, working);
          }
        });
        reached.set(projection.name, part?.position ?? 0);
      }
      for (const target of targets) {
        const started = performance.now();
        for (const projection of projections) {
          const from = reached.get(projection.name)!;
          await this.#db.transaction().execute((trx) => applyTail(trx, this.#store, projection, working, from + 1, target, this.#options.pageSize));
          reached.set(projection.name, target);
        }
        const summary = await this.#db.transaction().execute(async (trx): Promise<SnapshotSummary> => {
          const parts = [];
          for (const projection of projections) parts.push({ projection, position: target, indexes: await indexDefinitions(trx, working, projection.tables) });
          const { id, schema, takenAt, recordedAt } = await recordSnapshot(trx, parts, head.position);
          await sql`CREATE SCHEMA ${sql.id(schema)}`.execute(trx);
          for (const part of parts) {
            for (const table of part.projection.tables) await sql`CREATE TABLE ${sql.id(schema, table)} AS TABLE ${sql.id(working, table)}`.execute(trx);
            await indexSnapshotTables(trx, schema, part.indexes);
          }
          const seconds = (performance.now() - started) / 1000;
          const bytes = await measureSnapshot(trx, id, schema, seconds);
          return { id, schema, takenAt, recordedAt, headPosition: head.position, seconds, bytes, origin: 'backfill', parts: projections.map((p) => ({ projection: p.name, version: p.version, position: target })) };
        });
        made.push(summary);
        this.stats.snapshots += 1;
        onProgress?.(summary);
      }
    } finally {
      await sql`DROP SCHEMA IF EXISTS ${sql.id(working)} CASCADE`.execute(this.#db);
    }
    return made;
  }

  /** The cached views' positions, least recently used first (for tests and health). */
  cachedPositions(): number[] {
    return this.#cache.positions();
  }
}
