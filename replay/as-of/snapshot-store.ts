/**
 * Read-model snapshots: each projection's tables copied together with the checkpoint position they hold, so that a
 * copy is exactly the projection at that position.
 *
 * Consistency: one REPEATABLE READ transaction locks the tables it copies (ACCESS SHARE, before the transaction's
 * snapshot is taken, so a rebuild cannot swap them mid-copy), then reads the checkpoints and copies the tables from
 * the same database snapshot. The runner commits a batch's rows and its checkpoint in one transaction, so every copy
 * sees both or neither. The catalogue rows and the schema commit together: a crash leaves nothing half made.
 */
import { sql, type Kysely } from 'kysely';
import type { Projection, DynamicDatabase } from '../../src/ledger/index.js';
import { asOfLockSpace, snapshotLock, snapshotSchema } from './as-of-storage.js';

/** An index of a read-model table, as a clone rebuilds it: `CREATE [UNIQUE] INDEX <name> ON <table> USING <using>`. */
export interface IndexDefinition {
  table: string;
  name: string;
  unique: boolean;
  /** The method and the key, as PostgreSQL prints them: `btree (rack, start_at)`. */
  using: string;
}

/** One projection's copy in a snapshot. */
export interface SnapshotPart {
  snapshotId: number;
  schema: string;
  projection: string;
  version: number;
  /** The projection's checkpoint: every event up to here is in the copy, none after. */
  position: number;
  tables: string[];
  indexes: IndexDefinition[];
}

export interface SnapshotSummary {
  id: number;
  schema: string;
  takenAt: Date;
  headPosition: number;
  /** When the lowest position of its parts was recorded: the moment of the log it stands for. */
  recordedAt: Date;
  seconds: number;
  bytes: number;
  origin: 'live' | 'backfill';
  parts: Array<{ projection: string; version: number; position: number }>;
}

async function nextSnapshotId(trx: Kysely<DynamicDatabase>): Promise<number> {
  const rows = await sql<{ id: string | number }>`SELECT nextval(pg_get_serial_sequence('as_of_snapshots', 'id')) AS id`.execute(trx);
  return Number(rows.rows[0]!.id);
}

/** Tables of `projections` that exist in `schema`. */
async function existingTables(db: Kysely<DynamicDatabase>, schema: string, tables: readonly string[]): Promise<Set<string>> {
  const rows = await sql<{ tablename: string }>`SELECT tablename FROM pg_tables WHERE schemaname = ${schema} AND tablename = ANY(${[...tables]})`.execute(db);
  return new Set(rows.rows.map((row) => row.tablename));
}

/** The indexes of `tables` in `schema`, as definitions a clone can rebuild in another schema. */
export async function indexDefinitions(db: Kysely<DynamicDatabase>, schema: string, tables: readonly string[]): Promise<IndexDefinition[]> {
  const rows = await sql<{ table: string; definition: string }>`
    SELECT c.relname AS table, pg_get_indexdef(i.indexrelid) AS definition
      FROM pg_index i JOIN pg_class c ON c.oid = i.indrelid JOIN pg_namespace n ON n.oid = c.relnamespace
     WHERE n.nspname = ${schema} AND c.relname = ANY(${[...tables]}) ORDER BY c.relname, i.indexrelid`.execute(db);
  return rows.rows.map(({ table, definition }) => {
    // pg_get_indexdef always qualifies the table: CREATE [UNIQUE] INDEX name ON schema.table USING method (key).
    const match = /^CREATE (UNIQUE )?INDEX (\S+) ON (\S+) USING (.+)$/.exec(definition);
    if (!match) throw new Error(`unexpected index definition on ${schema}.${table}: ${definition}`);
    return { table, name: match[2]!.replace(/^"|"$/g, ''), unique: match[1] !== undefined, using: match[4]! };
  });
}

/** Only plain column indexes are rebuilt from the catalogue (what `createTable` makes); anything else is refused. */
const plainIndex = /^[a-z]+ \(("?[A-Za-z0-9_]+"?)(, "?[A-Za-z0-9_]+"?)*\)$/;

export async function createIndex(trx: Kysely<DynamicDatabase>, schema: string, index: IndexDefinition): Promise<void> {
  if (!plainIndex.test(index.using)) throw new Error(`index ${index.name} of ${index.table} is not a plain column index (${index.using}); it cannot be rebuilt in a view`);
  await sql`CREATE ${sql.raw(index.unique ? 'UNIQUE ' : '')}INDEX ${sql.id(index.name)} ON ${sql.id(schema, index.table)} USING ${sql.raw(index.using)}`.execute(trx);
}

/** Builds in `schema` every index of `indexes` it lacks (a snapshot's tables, after their rows are in). */
export async function indexSnapshotTables(trx: Kysely<DynamicDatabase>, schema: string, indexes: readonly IndexDefinition[]): Promise<void> {
  const present = await sql<{ name: string }>`
    SELECT c.relname AS name FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = ${schema} AND c.relkind = 'i'`.execute(trx);
  const have = new Set(present.rows.map((row) => row.name));
  for (const index of indexes) if (!have.has(index.name)) await createIndex(trx, schema, index);
}

async function schemaBytes(db: Kysely<DynamicDatabase>, schema: string): Promise<number> {
  const rows = await sql<{ bytes: string | number | null }>`
    SELECT sum(pg_total_relation_size(c.oid)) AS bytes FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
     WHERE n.nspname = ${schema} AND c.relkind = 'r'`.execute(db);
  return Number(rows.rows[0]?.bytes ?? 0);
}

/**
 * Copies every running projection (at the version this process runs) from the live tables (`public`) into a new
 * snapshot. Returns null when another process is taking one right now, or when no projection could be copied.
 */
export async function takeSnapshot(db: Kysely<DynamicDatabase>, projections: readonly Projection[]): Promise<SnapshotSummary | null> {
  const started = performance.now();
  const all = projections.flatMap((projection) => [...projection.tables]);
  const present = await existingTables(db, 'public', all);
  const copied = projections.filter((projection) => projection.tables.every((table) => present.has(table)));
  if (copied.length === 0) return null;
  const summary = await db
    .transaction()
    .setIsolationLevel('repeatable read')
    .execute(async (trx) => {
      // Before any statement that takes the transaction's snapshot: the tables cannot be swapped until commit.
      await sql`LOCK TABLE ${sql.join(copied.flatMap((projection) => projection.tables.map((table) => sql.id('public', table))))} IN ACCESS SHARE MODE`.execute(trx);
      const locked = await sql<{ locked: boolean }>`SELECT pg_try_advisory_xact_lock(${asOfLockSpace}, ${snapshotLock}) AS locked`.execute(trx);
      if (!locked.rows[0]?.locked) return null;
      const checkpoints = await sql<{ name: string; version: number; position: string | number; status: string }>`SELECT name, version, position, status FROM projection_checkpoints`.execute(trx);
      const byName = new Map(checkpoints.rows.map((row) => [row.name, row]));
      const head = await sql<{ position: string | number }>`SELECT position FROM ledger_head`.execute(trx);
      const runnable = copied.filter((projection) => {
        const checkpoint = byName.get(projection.name);
        return checkpoint !== undefined && checkpoint.status === 'running' && checkpoint.version === projection.version && Number(checkpoint.position) > 0;
      });
      if (runnable.length === 0) return null;
      const id = await nextSnapshotId(trx);
      const schema = snapshotSchema(id);
      const lowest = Math.min(...runnable.map((projection) => Number(byName.get(projection.name)!.position)));
      const inserted = await sql<{ taken_at: Date; recorded_at: Date }>`
        INSERT INTO as_of_snapshots (id, schema_name, head_position, recorded_at, origin)
        VALUES (${id}, ${schema}, ${Number(head.rows[0]?.position ?? 0)}, (SELECT recorded_at FROM ledger_events WHERE position = ${lowest}), 'live')
        RETURNING taken_at, recorded_at`.execute(trx);
      await sql`CREATE SCHEMA ${sql.id(schema)}`.execute(trx);
      const parts: SnapshotSummary['parts'] = [];
      for (const projection of runnable) {
        for (const table of projection.tables) await sql`CREATE TABLE ${sql.id(schema, table)} AS TABLE ${sql.id('public', table)}`.execute(trx);
        const position = Number(byName.get(projection.name)!.position);
        const indexes = await indexDefinitions(trx, 'public', projection.tables);
        // Indexed once here, after the rows are in: the views of time travel read through to these tables by key.
        await indexSnapshotTables(trx, schema, indexes);
        await insertPart(trx, id, projection, position, indexes);
        parts.push({ projection: projection.name, version: projection.version, position });
      }
      const seconds = (performance.now() - started) / 1000;
      const bytes = await measureSnapshot(trx, id, schema, seconds);
      return { id, schema, takenAt: inserted.rows[0]!.taken_at, recordedAt: inserted.rows[0]!.recorded_at, headPosition: Number(head.rows[0]?.position ?? 0), seconds, bytes, origin: 'live' as const, parts };
    });
  return summary;
}

async function insertPart(trx: Kysely<DynamicDatabase>, id: number, projection: Projection, position: number, indexes: readonly IndexDefinition[]): Promise<void> {
  await sql`
    INSERT INTO as_of_snapshot_parts (snapshot_id, projection, version, position, tables, indexes)
    VALUES (${id}, ${projection.name}, ${projection.version}, ${position}, ${[...projection.tables]}, ${JSON.stringify(indexes)}::jsonb)`.execute(trx);
}

/**
 * Records a snapshot made by a backfill (tables copied from a view advanced along the log): its rows, in the caller's
 * transaction; the caller creates the schema and its tables in the same transaction.
 */
export async function recordSnapshot(
  trx: Kysely<DynamicDatabase>,
  parts: ReadonlyArray<{ projection: Projection; position: number; indexes: readonly IndexDefinition[] }>,
  headPosition: number,
): Promise<{ id: number; schema: string; takenAt: Date; recordedAt: Date }> {
  const id = await nextSnapshotId(trx);
  const schema = snapshotSchema(id);
  const lowest = Math.min(...parts.map((part) => part.position));
  const inserted = await sql<{ taken_at: Date; recorded_at: Date }>`
    INSERT INTO as_of_snapshots (id, schema_name, head_position, recorded_at, origin)
    VALUES (${id}, ${schema}, ${headPosition}, (SELECT recorded_at FROM ledger_events WHERE position = ${lowest}), 'backfill')
    RETURNING taken_at, recorded_at`.execute(trx);
  for (const { projection, position, indexes } of parts) await insertPart(trx, id, projection, position, indexes);
  return { id, schema, takenAt: inserted.rows[0]!.taken_at, recordedAt: inserted.rows[0]!.recorded_at };
}

/** Records the size and cost of a snapshot once its tables are in place; returns the size. */
export async function measureSnapshot(trx: Kysely<DynamicDatabase>, id: number, schema: string, seconds: number): Promise<number> {
  const bytes = await schemaBytes(trx, schema);
  await sql`UPDATE as_of_snapshots SET bytes = ${bytes}, seconds = ${seconds} WHERE id = ${id}`.execute(trx);
  return bytes;
}

/** The newest copy of `projection` (at its current version) at or before `position`, or null. */
export async function newestPart(db: Kysely<DynamicDatabase>, projection: Projection, position: number): Promise<SnapshotPart | null> {
  const rows = await sql<{ snapshot_id: string | number; schema_name: string; position: string | number; tables: string[]; indexes: IndexDefinition[] }>`
    SELECT p.snapshot_id, s.schema_name, p.position, p.tables, p.indexes
      FROM as_of_snapshot_parts p JOIN as_of_snapshots s ON s.id = p.snapshot_id
     WHERE p.projection = ${projection.name} AND p.version = ${projection.version} AND p.position <= ${position}
     ORDER BY p.position DESC, p.snapshot_id DESC LIMIT 1`.execute(db);
  const row = rows.rows[0];
  if (!row) return null;
  return { snapshotId: Number(row.snapshot_id), schema: row.schema_name, projection: projection.name, version: projection.version, position: Number(row.position), tables: row.tables, indexes: row.indexes };
}

/** Every snapshot, oldest first. */
export async function listSnapshots(db: Kysely<DynamicDatabase>): Promise<SnapshotSummary[]> {
  const rows = await sql<{ id: string | number; schema_name: string; taken_at: Date; recorded_at: Date; head_position: string | number; seconds: number; bytes: string | number; origin: 'live' | 'backfill'; parts: Array<{ projection: string; version: number; position: number }> | null }>`
    SELECT s.id, s.schema_name, s.taken_at, s.recorded_at, s.head_position, s.seconds, s.bytes, s.origin,
           (SELECT json_agg(json_build_object('projection', p.projection, 'version', p.version, 'position', p.position) ORDER BY p.projection) FROM as_of_snapshot_parts p WHERE p.snapshot_id = s.id) AS parts
      FROM as_of_snapshots s ORDER BY s.id`.execute(db);
  return rows.rows.map((row) => ({
    id: Number(row.id),
    schema: row.schema_name,
    takenAt: row.taken_at,
    recordedAt: row.recorded_at,
    headPosition: Number(row.head_position),
    seconds: row.seconds,
    bytes: Number(row.bytes),
    origin: row.origin,
    parts: (row.parts ?? []).map((part) => ({ ...part, position: Number(part.position) })),
  }));
}

/** Drops one snapshot: its schema and its rows, together. */
export async function dropSnapshot(db: Kysely<DynamicDatabase>, snapshot: { id: number; schema: string }): Promise<void> {
  await db.transaction().execute(async (trx) => {
    await sql`DELETE FROM as_of_snapshots WHERE id = ${snapshot.id}`.execute(trx);
    await sql`DROP SCHEMA IF EXISTS ${sql.id(snapshot.schema)} CASCADE`.execute(trx);
  });
}

/** A stretch of the log where one projection has no copy for much longer than the policy asks, and where to add them. */
export interface SnapshotGap {
  projection: Projection;
  /** The copy before the stretch: the start of the replay. */
  from: SnapshotPart;
  /** The next copy's position. */
  to: number;
  /** Positions to copy at, ascending, evenly spaced so that no stretch left is longer than `every`. */
  targets: number[];
}

/**
 * The widest gap between consecutive copies of a projection that is longer than twice `every` (a snapshot that took
 * long while the projection caught up fast leaves one: the live snapshotter can only copy what the projection holds
 * when it copies). Only gaps whose start was recorded after `recordedSince` are named: retention would thin older
 * copies again. Null: none.
 */
export async function widestGap(db: Kysely<DynamicDatabase>, projections: readonly Projection[], every: number, recordedSince: Date): Promise<SnapshotGap | null> {
  const rows = await sql<{ snapshot_id: string | number; schema_name: string; projection: string; version: number; position: string | number; tables: string[]; indexes: IndexDefinition[]; recorded_at: Date }>`
    SELECT p.snapshot_id, s.schema_name, p.projection, p.version, p.position, p.tables, p.indexes, s.recorded_at
      FROM as_of_snapshot_parts p JOIN as_of_snapshots s ON s.id = p.snapshot_id
     WHERE p.projection = ANY(${projections.map((projection) => projection.name)})
     ORDER BY p.projection, p.position`.execute(db);
  let widest: SnapshotGap | null = null;
  for (const projection of projections) {
    const copies = rows.rows.filter((row) => row.projection === projection.name && row.version === projection.version);
    for (let i = 0; i + 1 < copies.length; i += 1) {
      const from = Number(copies[i]!.position);
      const to = Number(copies[i + 1]!.position);
      if (to - from <= 2 * every || new Date(copies[i]!.recorded_at).getTime() < recordedSince.getTime()) continue;
      if (widest && to - from <= widest.to - widest.from.position) continue;
      const stretches = Math.ceil((to - from) / every);
      const targets = Array.from({ length: stretches - 1 }, (_, k) => from + Math.round(((k + 1) * (to - from)) / stretches));
      const row = copies[i]!;
      widest = {
        projection,
        from: { snapshotId: Number(row.snapshot_id), schema: row.schema_name, projection: projection.name, version: projection.version, position: from, tables: row.tables, indexes: row.indexes },
        to,
        targets,
      };
    }
  }
  return widest;
}
