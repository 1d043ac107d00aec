import { sql } from 'kysely';
import type { RecordedEvent } from '../../events/index.js';
import { inHeld } from './held-apply.js';
import type { HeldTableSet, Projection } from './projection.js';
import { markProjectionFailed } from './projection-checkpoint.js';
import type { ProjectionRunnerContext } from './projection-runner-context.js';
import { BatchApplyError, deadLetterRow, locateFailure, setAside } from './projection-set-aside.js';
import type { ProjectionFailure, RebuildProgress, RebuildResult } from './projection-status.js';
import { dependentViews, restoreViews, type ViewsRestored } from './rebuild-views.js';
import { isTransientDatabaseError } from './transient-database-error.js';

/**
 * Rebuilding a projection from zero (or up to a position): fresh tables in a scratch schema, the log applied to them
 * page by page, then the swap that puts them in place of the live tables in one transaction. The caller holds the
 * projection's lock and has paused its live loop (see `ProjectionRunner.rebuild`).
 */

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

/** A rebuild under way: its projection, scratch schema, indexes to build before the swap, events set aside, and memory. */
interface Rebuild {
  projection: Projection;
  schema: string;
  deferred: string[];
  setAside: ProjectionFailure[];
  memory: HeldTableSet | null;
}

export interface RebuildOptions {
  toPosition?: number;
  onProgress?: (progress: RebuildProgress) => void;
}

/** Rebuilds one projection (whose lock the caller holds) from zero, or up to `toPosition`, and swaps it in. */
export async function rebuildLocked(context: ProjectionRunnerContext, projection: Projection, options: RebuildOptions = {}): Promise<RebuildResult> {
  const started = performance.now();
  const target = Math.min(options.toPosition ?? Number.POSITIVE_INFINITY, (await context.store.head()).position);
  const rebuild = await prepareRebuild(context, projection);
  let position = 0;
  let applied = 0;
  while (position < target) {
    const { events, cut } = await context.store.readAllBounded({ fromPosition: position + 1, toPosition: target, limit: rebuildPageEvents, types: projection.eventTypes, maxBytes: rebuildPageBytes });
    const reached = events.length === rebuildPageEvents || cut ? events[events.length - 1]!.position : target;
    await applyRebuildPage(context, rebuild, events);
    applied += events.length;
    position = reached;
    options.onProgress?.({ name: projection.name, position, target });
  }
  await completeScratch(context, rebuild);
  const views = await finishRebuild(context, rebuild, position);
  return { position, events: applied, seconds: (performance.now() - started) / 1000, viewsRestored: views.restored, viewsLost: views.lost };
}

/**
 * Rebuilds several projections (whose locks the caller holds) from zero at once over one read of the log: each page
 * read once, while the one before is applied; each projection applies the events of its types in its own
 * transaction, side by side, into its own scratch schema; each swapped in when the log is read to the end.
 */
export async function rebuildTogether(
  context: ProjectionRunnerContext,
  chosen: readonly Projection[],
  options: RebuildOptions & { maxPageBytes?: number; maxPageEvents?: number },
): Promise<Map<string, RebuildResult>> {
  const started = performance.now();
  const target = Math.min(options.toPosition ?? Number.POSITIVE_INFINITY, (await context.store.head()).position);
  const rebuilds = [];
  for (const projection of chosen) rebuilds.push({ ...(await prepareRebuild(context, projection)), types: new Set<string>(projection.eventTypes), events: 0 });
  const types = [...new Set(chosen.flatMap((projection) => [...projection.eventTypes]))];
  const maxBytes = options.maxPageBytes ?? rebuildPageBytes;
  const limit = options.maxPageEvents ?? rebuildPageEvents;
  const read = (from: number) => (from > target ? Promise.resolve({ events: [] as RecordedEvent[], cut: false }) : context.store.readAllBounded({ fromPosition: from, toPosition: target, limit, types, maxBytes }));
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
        await applyRebuildPage(context, rebuild, own);
      }),
    );
    options.onProgress?.({ name: chosen.length === 1 ? chosen[0]!.name : `${chosen.length} read models`, position: last, target });
    page = await next;
  }
  options.onProgress?.({ name: chosen.length === 1 ? chosen[0]!.name : `${chosen.length} read models`, position: target, target });
  // The scratch tables are written and indexed side by side; the swaps one after the other (views may span them).
  await Promise.all(rebuilds.map((rebuild) => completeScratch(context, rebuild)));
  const results = new Map<string, RebuildResult>();
  for (const rebuild of rebuilds) {
    const views = await finishRebuild(context, rebuild, target);
    results.set(rebuild.projection.name, { position: target, events: rebuild.events, seconds: (performance.now() - started) / 1000, viewsRestored: views.restored, viewsLost: views.lost });
  }
  return results;
}

/**
 * Fresh tables for a rebuild in its scratch schema, without their secondary indexes (built once before the swap:
 * cheaper than maintaining them row by row through the whole log; the unique ones stay, upserts need them).
 */
async function prepareRebuild(context: ProjectionRunnerContext, projection: Projection): Promise<Rebuild> {
  const { db } = context;
  const schema = rebuildSchema(projection.name);
  await sql`DROP SCHEMA IF EXISTS ${sql.id(schema)} CASCADE`.execute(db);
  await sql`CREATE SCHEMA ${sql.id(schema)}`.execute(db);
  await projection.createTables(db.withSchema(schema));
  const secondary = await sql<{ name: string; definition: string }>`
    SELECT c.relname AS name, pg_get_indexdef(i.indexrelid) AS definition
      FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_namespace n ON n.oid = c.relnamespace
     WHERE n.nspname = ${schema} AND NOT i.indisunique`.execute(db);
  for (const index of secondary.rows) await sql`DROP INDEX ${sql.id(schema, index.name)}`.execute(db);
  await db.updateTable('projection_checkpoints').set({ status: 'rebuilding', updated_at: new Date() }).where('name', '=', projection.name).execute();
  return { projection, schema, deferred: secondary.rows.map((index) => index.definition), setAside: [], memory: projection.holdTables?.() ?? null };
}

/**
 * Applies one page of a rebuild. An event the projection cannot apply is set aside here too: a fixed projection
 * replays what was set aside before, and what still fails is set aside again (the dead letters are replaced at the
 * swap).
 */
async function applyRebuildPage(context: ProjectionRunnerContext, rebuild: Rebuild, events: readonly RecordedEvent[]): Promise<void> {
  const { projection, schema, memory } = rebuild;
  let pending: readonly RecordedEvent[] = events;
  while (pending.length > 0) {
    try {
      const batch = pending;
      await inHeld(memory, () => context.db.transaction().execute((trx) => projection.apply(trx.withSchema(schema), batch)));
      pending = [];
    } catch (error) {
      if (isTransientDatabaseError(error)) throw error;
      const failure = await locateFailure(context, projection, pending, error, schema, memory);
      if (context.options.onFailure === 'stop' || failure.located === false) {
        await markProjectionFailed(context, projection.name, failure);
        throw new BatchApplyError(failure);
      }
      const index = pending.findIndex((event) => event.position === failure.position);
      const prefix = pending.slice(0, index);
      await inHeld(memory, () =>
        setAside(context, projection, failure, async (trx) => {
          if (prefix.length > 0) await projection.apply(trx.withSchema(schema), prefix);
        }, { record: false }),
      );
      rebuild.setAside.push(failure);
      context.options.log('rebuild set an event aside and goes on', { projection: projection.name, ...failure });
      pending = pending.slice(index + 1);
    }
  }
  if (memory && memory.rows > context.options.maxHeldRows) await memory.flush(context.db.withSchema(schema), { evict: true });
  // Row versions closed during the rebuild are written as they pile up, without letting the rows go: loads keep reading memory.
  else if (memory && memory.pending > context.options.maxHeldRows) await memory.flushPending(context.db.withSchema(schema));
}

/** Writes what the rebuild holds in memory into its scratch schema, then builds the indexes deferred until now. */
async function completeScratch(context: ProjectionRunnerContext, rebuild: Rebuild): Promise<void> {
  await rebuild.memory?.flush(context.db.withSchema(rebuild.schema), { evict: true, complete: true });
  for (const definition of rebuild.deferred) await sql.raw(definition).execute(context.db);
}

/**
 * The swap (after `completeScratch`): old tables out, rebuilt tables in, checkpoint to the rebuilt position,
 * all at once. Views that analysts built on the old tables are dropped with them and made again on the new ones,
 * with their grants.
 */
async function finishRebuild(context: ProjectionRunnerContext, rebuild: Rebuild, position: number): Promise<ViewsRestored> {
  const { projection, schema, setAside: setAsideEvents } = rebuild;
  let views: ViewsRestored = { restored: [], lost: [] };
  await context.db.transaction().execute(async (trx) => {
    const dependents = await dependentViews(trx, projection.tables);
    for (const table of projection.tables) {
      await sql`DROP TABLE IF EXISTS ${sql.id('public', table)} CASCADE`.execute(trx);
      await sql`ALTER TABLE ${sql.id(schema, table)} SET SCHEMA public`.execute(trx);
    }
    await sql`DROP SCHEMA ${sql.id(schema)} CASCADE`.execute(trx);
    views = await restoreViews(trx, dependents);
    await trx.deleteFrom('projection_dead_letters').where('projection', '=', projection.name).execute();
    if (setAsideEvents.length > 0) await trx.insertInto('projection_dead_letters').values(setAsideEvents.map((failure) => deadLetterRow(projection, failure))).execute();
    await trx
      .updateTable('projection_checkpoints')
      .set({ position, version: projection.version, status: 'running', error: null, updated_at: new Date() })
      .where('name', '=', projection.name)
      .execute();
  });
  await projection.createTables(context.db);
  for (const lost of views.lost) context.options.log('rebuild could not make a dependent view again', { projection: projection.name, ...lost });
  return views;
}
