/**
 * One projection as of a position, in a view schema, without copying its snapshot: the tail of the log from the newest
 * snapshot at or before the position to the one asked is applied through the projection's own `apply` to empty
 * UNLOGGED overlay tables (a view is disposable) that hold only the rows the tail writes (its loads read the snapshot's
 * rows through), and each table of the view is a SQL view of the overlay beside the snapshot's untouched rows (`materializeProjection`);
 * a projection's working state (`workingTables`) is held in memory instead, and has no view. The
 * result is what the live projection held at that position. All of it is one transaction: a crash or a failure leaves
 * no half-built tables.
 *
 * The backfill of snapshots still clones (`clonePart`): it walks the whole log, touching every row.
 */
import { sql, type Kysely, type Transaction } from 'kysely';
import type { RecordedEvent } from '../../events/index.js';
import type { EventStore, Projection, DynamicDatabase } from '../../src/ledger/index.js';
import { AsOfError } from './as-of-error.js';
import { claimedTable, withTableOverlay, withTablesInMemory } from '../../projections/index.js';
import { asOfLockSpace } from './as-of-storage.js';
import { createIndex, indexSnapshotTables, newestPart, type SnapshotPart } from './snapshot-store.js';

export interface MaterializeOptions {
  /** Events read and applied at a time (bounded memory: a poll-outcome batch holds a thousand outcomes). */
  pageSize: number;
  /** false: start from an empty read model at position 0 (the replay-from-zero baseline). */
  useSnapshots: boolean;
}

/** What a materialization cost, for stats and the benchmark. */
export interface MaterializeStats {
  projection: string;
  position: number;
  /** Where the tail began: the snapshot's position, or 0. */
  fromPosition: number;
  snapshotId: number | null;
  tailEvents: number;
  cloneMs: number;
  tailMs: number;
}

/**
 * Copies a snapshot part's tables into `schema` as UNLOGGED tables with their unique indexes (what upserts need). Pages
 * are left 30% free so that the tail's updates stay on their page (HOT: no index entry per update).
 */
export async function clonePart(trx: Kysely<DynamicDatabase>, part: SnapshotPart, schema: string): Promise<void> {
  for (const table of part.tables) await sql`CREATE UNLOGGED TABLE ${sql.id(schema, table)} WITH (fillfactor = 70) AS TABLE ${sql.id(part.schema, table)}`.execute(trx);
  for (const index of part.indexes) if (index.unique) await createIndex(trx, schema, index);
}

/** Builds the indexes of a cloned part that `clonePart` left for after the tail. */
export async function completeIndexes(trx: Kysely<DynamicDatabase>, part: SnapshotPart, schema: string): Promise<void> {
  for (const index of part.indexes) if (!index.unique) await createIndex(trx, schema, index);
}

/** Creates the projection's tables in `schema`, UNLOGGED. */
export async function createViewTables(trx: Kysely<DynamicDatabase>, projection: Projection, schema: string): Promise<void> {
  await projection.createTables(trx.withSchema(schema));
  for (const table of projection.tables) await sql`ALTER TABLE ${sql.id(schema, table)} SET UNLOGGED`.execute(trx);
}

/**
 * Applies the events of `projection`'s types at positions [from, to] to its tables in `schema`, a page at a time; the
 * next page is read while the current one is applied. An event the projection cannot apply is an
 * `ASOF_PROJECTION_FAILED` naming it (the live projection would have stopped on the same event).
 */
export async function applyTail(trx: Transaction<DynamicDatabase>, store: EventStore, projection: Projection, schema: string, from: number, to: number, pageSize: number): Promise<number> {
  const read = (fromPosition: number): Promise<RecordedEvent[]> =>
    fromPosition > to ? Promise.resolve([]) : store.readAll({ fromPosition, toPosition: to, types: projection.eventTypes, limit: pageSize });
  let applied = 0;
  // What the live projection set aside (could not apply) is skipped here too, so both give the same answer.
  const setAside = new Set(
    (
      await sql<{ position: string | number }>`SELECT position FROM public.projection_dead_letters WHERE projection = ${projection.name} AND position BETWEEN ${from} AND ${to}`.execute(trx)
    ).rows.map((row) => Number(row.position)),
  );
  let page = await read(from);
  while (page.length > 0) {
    const next = read(page.length === pageSize ? page[page.length - 1]!.position + 1 : to + 1);
    // A read that fails while this page is applied is reported by the await below, not as an unhandled rejection.
    next.catch(() => undefined);
    const events = setAside.size === 0 ? page : page.filter((event) => !setAside.has(event.position));
    try {
      if (events.length > 0) await projection.apply(trx.withSchema(schema), events);
    } catch (error) {
      const event = (error as { event?: RecordedEvent }).event;
      const reason = error instanceof Error ? error.message : String(error);
      throw new AsOfError(
        'ASOF_PROJECTION_FAILED',
        { projection: projection.name, position: to, eventPosition: event?.position ?? null, reason },
        `projection ${projection.name} could not apply ${event ? `event ${event.position} (${event.type})` : `the events up to position ${page[page.length - 1]!.position}`}: ${reason}`,
      );
    }
    applied += page.length;
    page = await next;
  }
  return applied;
}

/**
 * Makes sure a snapshot part's tables carry their indexes (snapshots taken before views read through to them were
 * stored without): built once, kept with the snapshot. Serialized per snapshot across processes.
 */
export async function ensureBaseIndexes(db: Kysely<DynamicDatabase>, part: SnapshotPart): Promise<void> {
  const present = await sql<{ name: string }>`
    SELECT c.relname AS name FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = ${part.schema} AND c.relkind = 'i'`.execute(db);
  const have = new Set(present.rows.map((row) => row.name));
  if (part.indexes.every((index) => have.has(index.name))) return;
  await db.transaction().execute(async (trx) => {
    await sql`SELECT pg_advisory_xact_lock(${asOfLockSpace + 1}, ${part.snapshotId})`.execute(trx);
    await indexSnapshotTables(trx, part.schema, part.indexes);
  });
}

/** The work schema of a view: the overlay tables an apply writes, and the keys of the base rows they superseded. */
export function workSchemaOf(schema: string): string {
  return `${schema}_w`;
}

/**
 * Builds `projection` as of `position` in `schema` (which exists, with its work schema), in one transaction of `db`,
 * without copying the snapshot: the view reads through to it.
 * - The newest snapshot part at or before `position` is the base (kept: a snapshot is only ever read).
 * - The tail (part, position] is applied through the projection's own `apply` to empty overlay tables in the work
 *   schema (`withTableOverlay`): a load reads the overlay's rows and the snapshot's unclaimed ones, so `apply` sees
 *   exactly the rows the live table held, and the key of each row it writes or deletes is claimed.
 * - Each table of the view is then a SQL view: the overlay's rows, and the base's rows that no overlay row supersedes
 *   and that were not claimed.
 * What a question costs is the tail it applies and the rows it reads, not the size of the read model.
 */
export async function materializeProjection(db: Kysely<DynamicDatabase>, store: EventStore, projection: Projection, schema: string, position: number, options: MaterializeOptions): Promise<MaterializeStats> {
  const work = workSchemaOf(schema);
  let part: SnapshotPart | null = null;
  if (options.useSnapshots) {
    part = await newestPart(db, projection, position);
    if (part) await ensureBaseIndexes(db, part);
  }
  return db.transaction().execute(async (trx) => {
    const started = performance.now();
    if (part) {
      // The snapshot is locked against pruning while this view is built; if it went meanwhile, take the next.
      const held = await sql`SELECT 1 FROM as_of_snapshots WHERE id = ${part.snapshotId} FOR SHARE`.execute(trx);
      if (held.rows.length === 0) part = null;
    }
    await createViewTables(trx, projection, work);
    if (part) for (const table of projection.tables) await createClaimedTable(trx, work, part.schema, table);
    // `apply` is bound to the work schema by `withSchema`; with it alone on the search path, SQL that names a table
    // without a schema cannot reach a live table either.
    await sql`SET LOCAL search_path TO ${sql.id(work)}`.execute(trx);
    const cloned = performance.now();
    const from = (part?.position ?? 0) + 1;
    // The projection's working state (read by its `apply` alone) stays in memory: no view of it is offered.
    const working = new Set(projection.workingTables ?? []);
    const tail = (): Promise<number> => withTablesInMemory(working, () => applyTail(trx, store, projection, work, from, position, options.pageSize));
    const tailEvents = part ? await withTableOverlay({ schema: work, base: part.schema, tables: new Set(projection.tables) }, tail) : await tail();
    for (const table of projection.tables) if (!working.has(table)) await createReadView(trx, schema, work, part?.schema ?? null, table);
    return {
      projection: projection.name,
      position,
      fromPosition: part?.position ?? 0,
      snapshotId: part?.snapshotId ?? null,
      tailEvents,
      cloneMs: cloned - started,
      tailMs: performance.now() - cloned,
    };
  });
}

async function primaryKeyOf(trx: Kysely<DynamicDatabase>, schema: string, table: string): Promise<string[]> {
  const rows = await sql<{ name: string }>`
    SELECT a.attname AS name FROM pg_index i
      JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = ANY (i.indkey)
     WHERE i.indrelid = (quote_ident(${schema}) || '.' || quote_ident(${table}))::regclass AND i.indisprimary
     ORDER BY array_position(i.indkey::int2[], a.attnum)`.execute(trx);
  if (rows.rows.length === 0) throw new Error(`${schema}.${table} has no primary key; a view cannot read through to a snapshot without one`);
  return rows.rows.map((row) => row.name);
}

/** The table of `work` that records the primary keys of the rows of `base.table` superseded (its key is theirs). */
export async function createClaimedTable(trx: Kysely<DynamicDatabase>, work: string, base: string, table: string): Promise<void> {
  const keys = sql.join((await primaryKeyOf(trx, work, table)).map((key) => sql.id(key)));
  await sql`CREATE UNLOGGED TABLE ${sql.id(work, claimedTable(table))} AS SELECT ${keys} FROM ${sql.id(base, table)} WITH NO DATA`.execute(trx);
  await sql`ALTER TABLE ${sql.id(work, claimedTable(table))} ADD PRIMARY KEY (${keys})`.execute(trx);
}

/** `schema.table` as the overlay's rows beside the base's rows whose key the overlay did not claim. */
export async function createReadView(trx: Kysely<DynamicDatabase>, schema: string, work: string, base: string | null, table: string): Promise<void> {
  const columns = (
    await sql<{ name: string }>`
      SELECT attname AS name FROM pg_attribute WHERE attrelid = (quote_ident(${work}) || '.' || quote_ident(${table}))::regclass AND attnum > 0 AND NOT attisdropped ORDER BY attnum`.execute(trx)
  ).rows.map((row) => row.name);
  const list = sql.join(columns.map((column) => sql.id(column)));
  if (!base) {
    await sql`CREATE VIEW ${sql.id(schema, table)} AS SELECT ${list} FROM ${sql.id(work, table)}`.execute(trx);
    return;
  }
  const keys = await primaryKeyOf(trx, work, table);
  await sql`
    CREATE VIEW ${sql.id(schema, table)} AS
      SELECT ${list} FROM ${sql.id(work, table)}
      UNION ALL
      SELECT ${sql.join(columns.map((column) => sql`b.${sql.id(column)}`))} FROM ${sql.id(base, table)} b
       WHERE NOT EXISTS (SELECT 1 FROM ${sql.id(work, claimedTable(table))} c WHERE ${sql.join(keys.map((key) => sql`c.${sql.id(key)} = b.${sql.id(key)}`), sql` AND `)})`.execute(trx);
}
