/**
 * The reads history needs from the log, each by an index: events of some types in a range (type, position), whole
 * streams (stream, version), events naming a node (`data->>'nodeId'`), and one node's rows of the poll-outcome
 * batches (GIN on `data->'nodeIds'`, cut down to that node's columns inside PostgreSQL so a batch of thousands of
 * nodes is not shipped for one). Every read pages by position; events come out as consumers see them (upcast).
 */
import { sql, type Kysely } from 'kysely';
import type { EventOf, PollOutcomesBatch, RecordedEvent } from '../../events/index.js';
import { storedEvent, type EventStore, type LedgerDatabase } from '../../src/ledger/index.js';

const pageSize = 5_000;

/** A position range: (after, through]. */
export interface PositionRange {
  after: number;
  through: number;
}

function dbOf(store: EventStore): Kysely<LedgerDatabase> {
  return store.db;
}

/** A stored row as consumers see it: its data lifted to the current version of its type. */
export function eventOfRow(store: EventStore, row: any): RecordedEvent {
  const stored = storedEvent({ ...row, recorded_at: new Date(row.recorded_at), observed_at: row.observed_at === null ? null : new Date(row.observed_at) });
  const lifted = store.catalogue.upcast(stored.type, stored.schemaVersion, stored.data);
  return { ...stored, schemaVersion: lifted.schemaVersion, data: lifted.data };
}

/**
 * Every event of the given types in the range, in log order: one read per type along the (type, position) index,
 * merged (one read of several types would walk the log in position order instead).
 */
export async function readTypes(store: EventStore, types: readonly string[], range: PositionRange): Promise<RecordedEvent[]> {
  if (types.length === 0 || range.through <= range.after) return [];
  const perType = await Promise.all(
    [...new Set(types)].map(async (type) => {
      const events: RecordedEvent[] = [];
      for (let after = range.after; ; ) {
        const page = await store.readAll({ fromPosition: after + 1, toPosition: range.through, types: [type], limit: pageSize });
        events.push(...page);
        if (page.length < pageSize) return events;
        after = page[page.length - 1]!.position;
      }
    }),
  );
  return perType.length === 1 ? perType[0]! : perType.flat().sort((a, b) => a.position - b.position);
}

/** Every event of the given streams in the range, in log order (by the stream index). */
export async function readStreams(store: EventStore, streams: readonly string[], range: PositionRange, types?: readonly string[]): Promise<RecordedEvent[]> {
  const events: RecordedEvent[] = [];
  const unique = [...new Set(streams)];
  for (let i = 0; i < unique.length; i += 1_000) {
    const chunk = unique.slice(i, i + 1_000);
    for (let after = range.after; after < range.through; ) {
      let query = dbOf(store).selectFrom('ledger_events').selectAll().where('stream', 'in', chunk).where('position', '>', after).where('position', '<=', range.through);
      if (types && types.length > 0) query = query.where('type', 'in', [...types]);
      const rows = await query.orderBy('position').limit(pageSize).execute();
      for (const row of rows) events.push(eventOfRow(store, row));
      if (rows.length < pageSize) break;
      after = Number(rows[rows.length - 1]!.position);
    }
  }
  return unique.length > 1_000 ? events.sort((a, b) => a.position - b.position) : events;
}

/** Every event whose payload names the node (`data.nodeId`), of any stream, in the range (by the node index). */
export async function readNamingNode(store: EventStore, nodeId: string, range: PositionRange, types?: readonly string[]): Promise<RecordedEvent[]> {
  const events: RecordedEvent[] = [];
  for (let after = range.after; after < range.through; ) {
    let query = dbOf(store)
      .selectFrom('ledger_events')
      .selectAll()
      .where(sql<boolean>`(data->>'nodeId') = ${nodeId}`)
      .where('position', '>', after)
      .where('position', '<=', range.through);
    if (types && types.length > 0) query = query.where('type', 'in', [...types]);
    const rows = await query.orderBy('position').limit(pageSize).execute();
    for (const row of rows) events.push(eventOfRow(store, row));
    if (rows.length < pageSize) break;
    after = Number(rows[rows.length - 1]!.position);
  }
  return events;
}

/**
 * Some nodes' rows of the poll-outcome batches in the range, each batch cut down to those nodes' columns inside
 * PostgreSQL (a batch may hold a node more than once): the batch event as it was, with only their outcomes in
 * `data`. Newest first when `newestFirst`, at most `limit` batches examined. For one node the batches are found
 * through the node index; for several, every batch of the range is examined (`scannedTo` says how far when the
 * limit cut the page, for the next one). For many nodes the batches come whole and are cut here: matching each
 * batch's thousands of ids against thousands of wanted ones costs PostgreSQL more than shipping the batch.
 */
export async function readPollsOf(
  store: EventStore,
  nodeIds: readonly string[],
  range: PositionRange,
  options: { newestFirst?: boolean; limit?: number } = {},
): Promise<{ events: RecordedEvent<EventOf<'PollOutcomesRecorded'>>[]; scannedTo: number | null }> {
  if (range.through <= range.after || nodeIds.length === 0) return { events: [], scannedTo: null };
  const direction = options.newestFirst ? sql`DESC` : sql`ASC`;
  const limit = options.limit ?? 1_000_000;
  if (nodeIds.length > manyNodes) return readWholePolls(store, new Set(nodeIds), range, options.newestFirst ?? false, limit);
  const single = nodeIds.length === 1 ? nodeIds[0]! : null;
  const ids = [...nodeIds];
  const columnar = await sql<any>`
    SELECT e.position, e.event_id, e.stream, e.stream_version, e.type, e.schema_version, e.recorded_at, e.observed_at, e.actor,
           e.correlation_id, e.causation_id, e.hash, e.prev_hash, b.site, b."windowStart" AS window_start, r.rows
      FROM ledger_events e
     CROSS JOIN LATERAL jsonb_to_record(e.data) AS b(site text, "windowStart" text, "nodeIds" jsonb, work jsonb, outcomes jsonb, "latencyMs" jsonb, "offsetMs" jsonb)
     CROSS JOIN LATERAL (
       SELECT jsonb_agg(jsonb_build_array(n.id, b.work -> (n.i::int - 1), b.outcomes -> (n.i::int - 1), b."latencyMs" -> (n.i::int - 1), b."offsetMs" -> (n.i::int - 1)) ORDER BY n.i) AS rows
         FROM jsonb_array_elements_text(b."nodeIds") WITH ORDINALITY AS n(id, i)
        WHERE ${single !== null ? sql`n.id = ${single}` : sql`n.id = ANY(${ids}::text[])`}) r
     WHERE e.type = 'PollOutcomesRecorded' AND e.schema_version = 2
       ${single !== null ? sql`AND e.data -> 'nodeIds' @> ${JSON.stringify([single])}::jsonb` : sql``}
       AND e.position > ${range.after} AND e.position <= ${range.through}
     ORDER BY e.position ${direction}
     LIMIT ${limit}`.execute(dbOf(store));
  const scanned = columnar.rows;
  const scannedTo = scanned.length === limit ? Number(scanned[scanned.length - 1].position) : null;
  const events = scanned
    .filter((row) => Array.isArray(row.rows) && row.rows.length > 0)
    .map((row) => {
      const rows = row.rows as Array<[string, PollOutcomesBatch['work'][number], PollOutcomesBatch['outcomes'][number], number, number]>;
      const data: PollOutcomesBatch = {
        site: row.site,
        windowStart: row.window_start,
        nodeIds: rows.map((r) => r[0]),
        work: rows.map((r) => r[1]),
        outcomes: rows.map((r) => r[2]),
        latencyMs: rows.map((r) => r[3]),
        offsetMs: rows.map((r) => r[4]),
      };
      return eventOfRow(store, { ...row, data }) as RecordedEvent<EventOf<'PollOutcomesRecorded'>>;
    });
  // Batches stored before the columnar form (version 1), in the part of the range examined: read whole, lifted,
  // then cut down the same way.
  const examined = scannedTo === null ? range : options.newestFirst ? { after: scannedTo - 1, through: range.through } : { after: range.after, through: scannedTo };
  let older = dbOf(store)
    .selectFrom('ledger_events')
    .selectAll()
    .where('type', '=', 'PollOutcomesRecorded')
    .where('schema_version', '=', 1)
    .where('position', '>', examined.after)
    .where('position', '<=', examined.through);
  if (single !== null) older = older.where(sql<boolean>`data -> 'outcomes' @> ${JSON.stringify([{ nodeId: single }])}::jsonb`);
  const olderRows = await older.execute();
  if (olderRows.length === 0) return { events, scannedTo };
  const wanted = new Set(nodeIds);
  const lifted = olderRows
    .map((row: any) => onlyNodes(eventOfRow(store, row) as RecordedEvent<EventOf<'PollOutcomesRecorded'>>, wanted))
    .filter((event) => event.data.nodeIds.length > 0);
  return { events: [...events, ...lifted].sort((a, b) => (options.newestFirst ? b.position - a.position : a.position - b.position)), scannedTo };
}

const manyNodes = 64;

async function readWholePolls(store: EventStore, nodeIds: ReadonlySet<string>, range: PositionRange, newestFirst: boolean, limit: number): Promise<{ events: RecordedEvent<EventOf<'PollOutcomesRecorded'>>[]; scannedTo: number | null }> {
  const rows = await dbOf(store)
    .selectFrom('ledger_events')
    .selectAll()
    .where('type', '=', 'PollOutcomesRecorded')
    .where('position', '>', range.after)
    .where('position', '<=', range.through)
    .orderBy('position', newestFirst ? 'desc' : 'asc')
    .limit(limit)
    .execute();
  const events = rows
    .map((row: any) => onlyNodes(eventOfRow(store, row) as RecordedEvent<EventOf<'PollOutcomesRecorded'>>, nodeIds))
    .filter((event) => event.data.nodeIds.length > 0);
  return { events, scannedTo: rows.length === limit ? Number(rows[rows.length - 1]!.position) : null };
}

/** A batch cut down to some nodes' columns. */
export function onlyNodes(event: RecordedEvent<EventOf<'PollOutcomesRecorded'>>, nodeIds: ReadonlySet<string>): RecordedEvent<EventOf<'PollOutcomesRecorded'>> {
  const batch = event.data;
  const keep = batch.nodeIds.flatMap((id, i) => (nodeIds.has(id) ? [i] : []));
  return {
    ...event,
    data: {
      site: batch.site,
      windowStart: batch.windowStart,
      nodeIds: keep.map((i) => batch.nodeIds[i]!),
      work: keep.map((i) => batch.work[i]!),
      outcomes: keep.map((i) => batch.outcomes[i]!),
      latencyMs: keep.map((i) => batch.latencyMs[i]!),
      offsetMs: keep.map((i) => batch.offsetMs[i]!),
    },
  };
}

/** How many poll-outcome batches the log holds at or below `through` (from the (type, position) index alone). */
export async function countPollBatches(store: EventStore, through: number): Promise<number> {
  const row = await dbOf(store)
    .selectFrom('ledger_events')
    .select(sql<number>`count(*)::int`.as('batches'))
    .where('type', '=', 'PollOutcomesRecorded')
    .where('position', '<=', through)
    .executeTakeFirst();
  return Number(row?.batches ?? 0);
}

/** Every event recorded by an operator (an intent) in the range, in log order. */
export async function readOperatorEvents(store: EventStore, range: PositionRange): Promise<RecordedEvent[]> {
  const events: RecordedEvent[] = [];
  for (let after = range.after; after < range.through; ) {
    const rows = await dbOf(store)
      .selectFrom('ledger_events')
      .selectAll()
      .where(sql<boolean>`actor->>'kind' = 'operator'`)
      .where('position', '>', after)
      .where('position', '<=', range.through)
      .orderBy('position')
      .limit(pageSize)
      .execute();
    for (const row of rows) events.push(eventOfRow(store, row));
    if (rows.length < pageSize) break;
    after = Number(rows[rows.length - 1]!.position);
  }
  return events;
}

/** The first event of each stream (its version 1), by stream. */
export async function firstEvents(store: EventStore, streams: readonly string[]): Promise<Map<string, RecordedEvent>> {
  const first = new Map<string, RecordedEvent>();
  const unique = [...new Set(streams)];
  for (let i = 0; i < unique.length; i += 1_000) {
    const rows = await dbOf(store).selectFrom('ledger_events').selectAll().where('stream', 'in', unique.slice(i, i + 1_000)).where('stream_version', '=', 1).execute();
    for (const row of rows) first.set(row.stream as string, eventOfRow(store, row));
  }
  return first;
}

/** How far a projection has applied the log (null: it has never run here). */
export async function projectionCheckpoint(store: EventStore, name: string): Promise<{ position: number; status: string } | null> {
  const row = await dbOf(store).selectFrom('projection_checkpoints').select(['position', 'status']).where('name', '=', name).executeTakeFirst();
  return row ? { position: Number(row.position), status: String(row.status) } : null;
}

/** Whether a table exists in the current schema path (a read model not created yet answers false). */
export async function tableExists(store: EventStore, table: string): Promise<boolean> {
  const row = await sql<{ present: boolean }>`SELECT to_regclass(${table}) IS NOT NULL AS present`.execute(dbOf(store));
  return Boolean(row.rows[0]?.present);
}
