/**
 * Time travel: every read model as of a log position or an instant.
 *
 * Periodic snapshots plus the tail of the log. A snapshot (`replay_snap_<n>` schema) is a copy of every projection's
 * tables taken in one REPEATABLE READ transaction together with each projection's checkpoint, so each copy is exactly
 * the projection at its position. A question as of position P clones the newest snapshot at or before P into a
 * scratch schema (`replay_asof_<n>`), applies the tail (snapshot position, P] through each projection's own `apply`,
 * and the ordinary query functions answer from that schema. Materialized schemas are kept in a small LRU (identical
 * concurrent questions share one), dropped on eviction, at stop, and, after a crash, at the next start.
 *
 * Why not temporal read models (validity ranges on every row): that doubles every projection's write path to serve
 * a read auditors ask rarely; snapshots reuse the projections unchanged and bound the tail by the snapshot spacing
 * (`bench/asof.ts` measures it).
 *
 * The ledger clock never runs backwards along the log, so an instant maps to a position by binary search over the
 * primary key: the last event recorded at or before it.
 */
import { sql, type Kysely } from 'kysely';
import type { EventStore, Projection } from '../../src/ledger/index.js';

export class AsOfError extends Error {
  constructor(
    readonly code: 'ASOF_INVALID' | 'ASOF_BEYOND_HEAD' | 'ASOF_BEFORE_LOG',
    message: string,
  ) {
    super(message);
    this.name = 'AsOfError';
  }
}

export interface AsOfPoint {
  position: number;
  recordedAt: Date;
}

export interface AsOfView extends AsOfPoint {
  schema: string;
  db: Kysely<any>;
}

export interface AsOfOptions {
  /** A snapshot every this many events of log growth (default 50,000). */
  snapshotEveryEvents?: number;
  /** Materialized views kept (default 4). */
  cached?: number;
  /** How often the snapshotter looks at the head (default 5 s). */
  checkIntervalMs?: number;
  /** false: every view replays the log from position 1 (the baseline the benchmark compares with). */
  useSnapshots?: boolean;
  log?: (message: string, fields?: Record<string, unknown>) => void;
}

interface Snapshot {
  id: number;
  schema: string;
  positions: Record<string, { version: number; position: number }>;
}

const positiveInteger = /^[1-9][0-9]{0,15}$/;

export class AsOfEngine {
  readonly #db: Kysely<any>;
  #timer: NodeJS.Timeout | null = null;
  #snapshotting: Promise<unknown> | null = null;
  readonly #views = new Map<number, Promise<AsOfView>>();
  #stopped = false;
  readonly stats = { snapshots: 0, materialized: 0, lastMaterializeMs: 0, lastTailEvents: 0 };

  constructor(
    private readonly store: EventStore,
    private readonly projections: readonly Projection[],
    private readonly options: AsOfOptions = {},
  ) {
    this.#db = store.db as unknown as Kysely<any>;
  }

  /** Creates the catalogue, drops scratch schemas a crashed process left, and starts the snapshotter. */
  async start(options: { snapshots?: boolean } = {}): Promise<void> {
    await sql`CREATE TABLE IF NOT EXISTS replay_snapshots (
      id         bigserial   PRIMARY KEY,
      schema     text        NOT NULL UNIQUE,
      positions  jsonb       NOT NULL,
      max_position bigint    NOT NULL,
      taken_at   timestamptz NOT NULL DEFAULT now()
    )`.execute(this.#db);
    await this.#dropStale();
    if (options.snapshots === false) return;
    const tick = (): void => {
      void this.#maybeSnapshot()
        .catch((error: unknown) => this.options.log?.('snapshot failed', { error: String(error) }))
        .finally(() => {
          if (!this.#stopped) this.#timer = setTimeout(tick, this.options.checkIntervalMs ?? 5_000);
        });
    };
    this.#timer = setTimeout(tick, this.options.checkIntervalMs ?? 5_000);
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    if (this.#timer) clearTimeout(this.#timer);
    await this.#snapshotting?.catch(() => undefined);
    for (const view of this.#views.values()) await this.#drop(view);
    this.#views.clear();
  }

  async #dropStale(): Promise<void> {
    const known = new Set((await sql<{ schema: string }>`SELECT schema FROM replay_snapshots`.execute(this.#db)).rows.map((row) => row.schema));
    const schemas = await sql<{ nspname: string }>`SELECT nspname FROM pg_namespace WHERE nspname LIKE 'replay\\_asof\\_%' OR nspname LIKE 'replay\\_snap\\_%'`.execute(this.#db);
    for (const { nspname } of schemas.rows) {
      if (nspname.startsWith('replay_snap_') && known.has(nspname)) continue;
      await sql`DROP SCHEMA IF EXISTS ${sql.id(nspname)} CASCADE`.execute(this.#db);
    }
  }

  async #maybeSnapshot(): Promise<void> {
    const head = await this.store.head();
    const last = await sql<{ max: string | null }>`SELECT max(max_position) AS max FROM replay_snapshots`.execute(this.#db);
    const lastPosition = Number(last.rows[0]?.max ?? 0);
    if (head.position - lastPosition >= (this.options.snapshotEveryEvents ?? 50_000)) await this.snapshot();
  }

  /** Copies every running projection's tables with its checkpoint, consistently. */
  snapshot(): Promise<Snapshot | null> {
    const run = this.#snapshot();
    this.#snapshotting = run.catch(() => undefined);
    return run;
  }

  async #snapshot(): Promise<Snapshot | null> {
    const id = Date.now() * 1000 + Math.floor(Math.random() * 1000);
    const schema = `replay_snap_${id}`;
    const positions: Snapshot['positions'] = {};
    await this.#db
      .transaction()
      .setIsolationLevel('repeatable read')
      .execute(async (trx) => {
        const checkpoints = await sql<{ name: string; version: number; position: string; status: string }>`SELECT name, version, position, status FROM projection_checkpoints`.execute(trx);
        const byName = new Map(checkpoints.rows.map((row) => [row.name, row]));
        await sql`CREATE SCHEMA ${sql.id(schema)}`.execute(trx);
        for (const projection of this.projections) {
          const checkpoint = byName.get(projection.name);
          if (!checkpoint || checkpoint.status !== 'running' || checkpoint.version !== projection.version) continue;
          for (const table of projection.tables) {
            await sql`CREATE TABLE ${sql.id(schema, table)} (LIKE ${sql.id('public', table)} INCLUDING ALL)`.execute(trx);
            await sql`INSERT INTO ${sql.id(schema, table)} SELECT * FROM ${sql.id('public', table)}`.execute(trx);
          }
          positions[projection.name] = { version: projection.version, position: Number(checkpoint.position) };
        }
        const max = Math.max(0, ...Object.values(positions).map((p) => p.position));
        await sql`INSERT INTO replay_snapshots (schema, positions, max_position) VALUES (${schema}, ${JSON.stringify(positions)}::jsonb, ${max})`.execute(trx);
      });
    this.stats.snapshots += 1;
    return { id, schema, positions };
  }

  /**
   * Snapshots every `every` events over a log that grew without them (a ledger upgraded to time travel, a restored
   * backup): each is the previous one plus its tail, so the whole costs about one replay of the log.
   */
  async backfillSnapshots(every: number): Promise<number> {
    const head = await this.store.head();
    const last = Number((await sql<{ max: string | null }>`SELECT max(max_position) AS max FROM replay_snapshots`.execute(this.#db)).rows[0]?.max ?? 0);
    let created = 0;
    for (let position = last + every; position <= head.position; position += every) {
      const view = await this.#materialize({ position, recordedAt: await this.#recordedAt(position) });
      const schema = `replay_snap_${Date.now() * 1000 + Math.floor(Math.random() * 1000)}`;
      const positions = Object.fromEntries(this.projections.map((projection) => [projection.name, { version: projection.version, position }]));
      await this.#db.transaction().execute(async (trx) => {
        await sql`ALTER SCHEMA ${sql.id(view.schema)} RENAME TO ${sql.id(schema)}`.execute(trx);
        await sql`INSERT INTO replay_snapshots (schema, positions, max_position) VALUES (${schema}, ${JSON.stringify(positions)}::jsonb, ${position})`.execute(trx);
      });
      created += 1;
      this.stats.snapshots += 1;
    }
    return created;
  }

  /** An instant (RFC 3339) or a position, as the position and time it stands for. */
  async resolve(asOf: string): Promise<AsOfPoint> {
    const head = await this.store.head();
    if (positiveInteger.test(asOf)) {
      const position = Number(asOf);
      if (position > head.position) throw new AsOfError('ASOF_BEYOND_HEAD', `position ${position} is beyond the head of the log (${head.position})`);
      return { position, recordedAt: await this.#recordedAt(position) };
    }
    if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/.test(asOf) || Number.isNaN(Date.parse(asOf))) {
      throw new AsOfError('ASOF_INVALID', `asOf must be an RFC 3339 instant (2026-12-01T03:00:00Z) or a log position, got '${asOf.slice(0, 60)}'`);
    }
    const instant = new Date(asOf);
    if (instant.getTime() > Date.now() + 1_000) throw new AsOfError('ASOF_BEYOND_HEAD', `${asOf} is in the future`);
    const position = await this.positionAt(instant, head.position);
    if (position === 0) throw new AsOfError('ASOF_BEFORE_LOG', `the log begins after ${asOf}`);
    return { position, recordedAt: instant };
  }

  async #recordedAt(position: number): Promise<Date> {
    const row = await this.#db.selectFrom('ledger_events').select('recorded_at').where('position', '=', position).executeTakeFirst();
    return row ? new Date(row.recorded_at) : new Date(0);
  }

  /** The last position recorded at or before `instant` (0: none), by binary search over positions. */
  async positionAt(instant: Date, headPosition: number): Promise<number> {
    let low = 0;
    let high = headPosition;
    while (low < high) {
      const mid = Math.ceil((low + high) / 2);
      if ((await this.#recordedAt(mid)).getTime() <= instant.getTime()) low = mid;
      else high = mid - 1;
    }
    return low;
  }

  /** The read models as of `position`, materialized (or shared with a caller who asked the same). */
  view(point: AsOfPoint): Promise<AsOfView> {
    const cached = this.#views.get(point.position);
    if (cached) {
      // Most recently used last.
      this.#views.delete(point.position);
      this.#views.set(point.position, cached);
      return cached;
    }
    const building = this.#materialize(point);
    this.#views.set(point.position, building);
    building.catch(() => this.#views.delete(point.position));
    void this.#evict();
    return building;
  }

  async #evict(): Promise<void> {
    const limit = this.options.cached ?? 4;
    while (this.#views.size > limit) {
      const [oldest, view] = this.#views.entries().next().value as [number, Promise<AsOfView>];
      this.#views.delete(oldest);
      // Give readers of the evicted view a moment to finish before its schema goes.
      setTimeout(() => void view.then((v) => this.#drop(v)).catch(() => undefined), 30_000).unref();
    }
  }

  async #drop(view: Promise<AsOfView> | AsOfView): Promise<void> {
    const resolved = await Promise.resolve(view).catch(() => null);
    if (resolved) await sql`DROP SCHEMA IF EXISTS ${sql.id(resolved.schema)} CASCADE`.execute(this.#db).catch(() => undefined);
  }

  async #materialize(point: AsOfPoint): Promise<AsOfView> {
    const started = performance.now();
    const schema = `replay_asof_${point.position}_${Math.floor(Math.random() * 1e9)}`;
    const snapshot =
      this.options.useSnapshots === false
        ? undefined
        : (
            await sql<{ schema: string; positions: Snapshot['positions'] }>`
              SELECT schema, positions FROM replay_snapshots WHERE max_position <= ${point.position} ORDER BY max_position DESC LIMIT 1`.execute(this.#db)
          ).rows[0];
    await sql`CREATE SCHEMA ${sql.id(schema)}`.execute(this.#db);
    try {
      let tail = 0;
      for (const projection of this.projections) {
        const from = snapshot?.positions[projection.name];
        const usable = from && from.version === projection.version;
        if (usable) {
          for (const table of projection.tables) {
            await sql`CREATE TABLE ${sql.id(schema, table)} (LIKE ${sql.id(snapshot.schema, table)} INCLUDING ALL)`.execute(this.#db);
            await sql`INSERT INTO ${sql.id(schema, table)} SELECT * FROM ${sql.id(snapshot.schema, table)}`.execute(this.#db);
          }
        } else {
          await projection.createTables(this.#db.withSchema(schema));
        }
        tail += await this.#applyTail(projection, schema, usable ? from.position + 1 : 1, point.position);
      }
      this.stats.materialized += 1;
      this.stats.lastTailEvents = tail;
      this.stats.lastMaterializeMs = performance.now() - started;
      return { ...point, schema, db: this.#db.withSchema(schema) };
    } catch (error) {
      await sql`DROP SCHEMA IF EXISTS ${sql.id(schema)} CASCADE`.execute(this.#db).catch(() => undefined);
      throw error;
    }
  }

  async #applyTail(projection: Projection, schema: string, from: number, to: number): Promise<number> {
    let applied = 0;
    for (let next = from; next <= to; ) {
      const events = await this.store.readAll({ fromPosition: next, toPosition: to, types: projection.eventTypes, limit: 5_000 });
      if (events.length === 0) break;
      await this.#db.transaction().execute((trx) => projection.apply(trx.withSchema(schema), events));
      applied += events.length;
      next = events[events.length - 1]!.position + 1;
    }
    return applied;
  }
}
