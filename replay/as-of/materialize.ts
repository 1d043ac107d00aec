/**
 * One projection as of a position, in a view schema: its newest snapshot at or before the position cloned into
 * UNLOGGED tables (a view is disposable) with the unique indexes `apply` upserts on, then the tail of the log from the
 * snapshot's position to the one asked applied through the projection's own `apply`, then the other indexes (cheaper
 * built once than maintained through the tail). The result is what the live projection held at that position. All of
 * it is one transaction: a crash or a failure leaves no half-built tables.
 */
import { sql, type Kysely, type Transaction } from 'kysely';
import type { RecordedEvent } from '../../events/index.js';
import type { EventStore, Projection } from '../../src/ledger/index.js';
import { AsOfError } from './as-of-error.js';
import { newestPart, type IndexDefinition, type SnapshotPart } from './snapshot-store.js';

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

/** Only plain column indexes are rebuilt from the catalogue (what `createTable` makes); anything else is refused. */
const plainIndex = /^[a-z]+ \(("?[A-Za-z0-9_]+"?)(, "?[A-Za-z0-9_]+"?)*\)$/;

async function createIndex(trx: Kysely<any>, schema: string, index: IndexDefinition): Promise<void> {
  if (!plainIndex.test(index.using)) throw new Error(`index ${index.name} of ${index.table} is not a plain column index (${index.using}); it cannot be rebuilt in a view`);
  await sql`CREATE ${sql.raw(index.unique ? 'UNIQUE ' : '')}INDEX ${sql.id(index.name)} ON ${sql.id(schema, index.table)} USING ${sql.raw(index.using)}`.execute(trx);
}

/**
 * Copies a snapshot part's tables into `schema` as UNLOGGED tables with their unique indexes (what upserts need). Pages
 * are left 30% free so that the tail's updates stay on their page (HOT: no index entry per update).
 */
export async function clonePart(trx: Kysely<any>, part: SnapshotPart, schema: string): Promise<void> {
  for (const table of part.tables) await sql`CREATE UNLOGGED TABLE ${sql.id(schema, table)} WITH (fillfactor = 70) AS TABLE ${sql.id(part.schema, table)}`.execute(trx);
  for (const index of part.indexes) if (index.unique) await createIndex(trx, schema, index);
}

/** Builds the indexes of a cloned part that `clonePart` left for after the tail. */
export async function completeIndexes(trx: Kysely<any>, part: SnapshotPart, schema: string): Promise<void> {
  for (const index of part.indexes) if (!index.unique) await createIndex(trx, schema, index);
}

/** Creates the projection's tables in `schema`, UNLOGGED. */
export async function createViewTables(trx: Kysely<any>, projection: Projection, schema: string): Promise<void> {
  await projection.createTables(trx.withSchema(schema));
  for (const table of projection.tables) await sql`ALTER TABLE ${sql.id(schema, table)} SET UNLOGGED`.execute(trx);
}

/**
 * Applies the events of `projection`'s types at positions [from, to] to its tables in `schema`, a page at a time; the
 * next page is read while the current one is applied. An event the projection cannot apply is an
 * `ASOF_PROJECTION_FAILED` naming it (the live projection would have stopped on the same event).
 */
export async function applyTail(trx: Transaction<any>, store: EventStore, projection: Projection, schema: string, from: number, to: number, pageSize: number): Promise<number> {
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

/** Builds `projection` as of `position` in `schema` (which exists), in one transaction of `db`. */
export async function materializeProjection(db: Kysely<any>, store: EventStore, projection: Projection, schema: string, position: number, options: MaterializeOptions): Promise<MaterializeStats> {
  return db.transaction().execute(async (trx) => {
    const started = performance.now();
    let part: SnapshotPart | null = null;
    if (options.useSnapshots) {
      // The snapshot row is locked against pruning until this transaction ends; if it went meanwhile, take the next.
      for (let attempt = 0; attempt < 3; attempt += 1) {
        part = await newestPart(trx, projection, position);
        if (!part) break;
        const held = await sql`SELECT 1 FROM as_of_snapshots WHERE id = ${part.snapshotId} FOR SHARE`.execute(trx);
        if (held.rows.length === 1) break;
        part = null;
      }
    }
    if (part) await clonePart(trx, part, schema);
    else await createViewTables(trx, projection, schema);
    // `apply` is bound to the view by `withSchema`; with the view alone on the search path, SQL that names a table
    // without a schema cannot reach a live table either.
    await sql`SET LOCAL search_path TO ${sql.id(schema)}`.execute(trx);
    const cloned = performance.now();
    const tailEvents = await applyTail(trx, store, projection, schema, (part?.position ?? 0) + 1, position, options.pageSize);
    if (part) await completeIndexes(trx, part, schema);
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
