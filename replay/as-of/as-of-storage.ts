/**
 * What time travel keeps in the database, all of it named `as_of_*` so an operator can tell it from the log and the
 * live read models:
 *
 * - `as_of_snapshots`: one row per snapshot (its schema, when it was taken, the head then, its size and cost);
 * - `as_of_snapshot_parts`: per snapshot, each projection copied, with the version and the checkpoint position its
 *   tables were copied at, and the definitions of the tables' indexes;
 * - `as_of_snapshot_<id>` schemas: the copied tables, with the live tables' indexes (built after the rows are in):
 *   questions read through to them by key and never write them;
 * - `as_of_view_<engine>_<n>` schemas (SQL views) and their `_w` work schemas (UNLOGGED overlay tables): views
 *   materialized for questions, owned by one engine, which holds a session advisory lock (`asOfLockSpace`, its engine
 *   key) for as long as it lives.
 *
 * Garbage is bounded: a snapshot's schema and rows commit in one transaction (a crash leaves neither); a view's tables
 * are built in one transaction (a crash leaves at most its empty schema); and a view schema whose engine holds no lock
 * (the process died: PostgreSQL released its lock with its connection) is dropped by the next engine to start, or by a
 * live engine's periodic sweep.
 */
import { sql, type Kysely } from 'kysely';
import type { DynamicDatabase } from '../../src/ledger/index.js';

export const snapshotSchemaPrefix = 'as_of_snapshot_';
export const viewSchemaPrefix = 'as_of_view_';

/** The advisory lock space of time travel (first key): catalogue creation, snapshots, and engines' lives. */
export const asOfLockSpace = 0x0a50f;
export const catalogueLock = 1;
export const snapshotLock = 2;
/** Engine keys (second key) are drawn above this, so they never collide with the locks above. */
const engineKeyFloor = 1_000;

/** A new engine key: the second key of the lock the engine holds while it lives, and part of its views' names. */
export function newEngineKey(random: () => number = Math.random): number {
  return engineKeyFloor + Math.floor(random() * (2 ** 31 - 1 - engineKeyFloor));
}

/** A snapshot's schema. */
export function snapshotSchema(id: number): string {
  return `${snapshotSchemaPrefix}${id}`;
}

/** The schema of the `sequence`-th view of an engine. */
export function viewSchema(engineKey: number, sequence: number): string {
  return `${viewSchemaPrefix}${engineKey}_${sequence}`;
}

/** The engine key a view schema belongs to, or null for a name that is not a view's. */
export function engineOfViewSchema(schema: string): number | null {
  const match = /^as_of_view_([0-9]+)_[0-9]+(_w)?$/.exec(schema);
  return match ? Number(match[1]) : null;
}

/**
 * Creates the catalogue tables when absent. Idempotent and safe when two processes start at once (a transaction-scoped
 * advisory lock serializes the `CREATE ... IF NOT EXISTS`, which alone can race on the catalog).
 */
export async function ensureCatalogue(db: Kysely<DynamicDatabase>): Promise<void> {
  await db.transaction().execute(async (trx) => {
    await sql`SELECT pg_advisory_xact_lock(${asOfLockSpace}, ${catalogueLock})`.execute(trx);
    await sql`CREATE TABLE IF NOT EXISTS as_of_snapshots (
      id            bigserial        PRIMARY KEY,
      schema_name   text             NOT NULL UNIQUE,
      taken_at      timestamptz      NOT NULL DEFAULT now(),
      head_position bigint           NOT NULL,
      recorded_at   timestamptz      NOT NULL,
      seconds       double precision NOT NULL DEFAULT 0,
      bytes         bigint           NOT NULL DEFAULT 0,
      origin        text             NOT NULL CHECK (origin IN ('live', 'backfill'))
    )`.execute(trx);
    await sql`CREATE TABLE IF NOT EXISTS as_of_snapshot_parts (
      snapshot_id bigint  NOT NULL REFERENCES as_of_snapshots (id) ON DELETE CASCADE,
      projection  text    NOT NULL,
      version     integer NOT NULL,
      position    bigint  NOT NULL,
      tables      text[]  NOT NULL,
      indexes     jsonb   NOT NULL,
      PRIMARY KEY (snapshot_id, projection)
    )`.execute(trx);
    await sql`CREATE INDEX IF NOT EXISTS as_of_snapshot_parts_projection_position ON as_of_snapshot_parts (projection, version, position)`.execute(trx);
  });
}

/** The keys of the engines alive now: those holding their lock. */
export async function liveEngines(db: Kysely<DynamicDatabase>): Promise<Set<number>> {
  const rows = await sql<{ key: string | number }>`
    SELECT objid::bigint AS key FROM pg_locks WHERE locktype = 'advisory' AND classid = ${asOfLockSpace} AND objsubid = 2 AND granted`.execute(db);
  return new Set(rows.rows.map((row) => Number(row.key)));
}

/**
 * Drops what no live engine owns: view schemas of engines that hold no lock (a crashed process), and snapshot schemas
 * without a catalogue row (none are expected: a snapshot commits its schema and its row together). Never touches the
 * views of a live engine.
 */
export async function dropStale(db: Kysely<DynamicDatabase>): Promise<{ views: string[]; snapshots: string[] }> {
  const live = await liveEngines(db);
  const schemas = (await sql<{ nspname: string }>`SELECT nspname FROM pg_namespace WHERE nspname LIKE 'as\\_of\\_%' ORDER BY nspname`.execute(db)).rows.map((row) => row.nspname);
  const catalogued = new Set((await sql<{ schema_name: string }>`SELECT schema_name FROM as_of_snapshots`.execute(db)).rows.map((row) => row.schema_name));
  const dropped = { views: [] as string[], snapshots: [] as string[] };
  for (const schema of schemas) {
    if (schema.startsWith(viewSchemaPrefix)) {
      const engine = engineOfViewSchema(schema);
      if (engine !== null && live.has(engine)) continue;
      await sql`DROP SCHEMA IF EXISTS ${sql.id(schema)} CASCADE`.execute(db);
      dropped.views.push(schema);
    } else if (schema.startsWith(snapshotSchemaPrefix) && !catalogued.has(schema)) {
      await sql`DROP SCHEMA IF EXISTS ${sql.id(schema)} CASCADE`.execute(db);
      dropped.snapshots.push(schema);
    }
  }
  return dropped;
}
