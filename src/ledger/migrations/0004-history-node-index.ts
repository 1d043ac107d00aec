/**
 * The indexes that find one node's events in a log of millions, for node timelines and fleet diffs.
 * They index the log itself, so the ledger owns them (migration 0004); `replay/history` reads through them.
 *
 * Where a node's events are: its own streams (`node-<id>`, `provision-<id>`, found by the stream index), events of
 * other streams that name it in `data.nodeId` (rollout and capacity bookkeeping, its firmware steps' `StepStarted`,
 * which names the step stream `fwstep-<rolloutId>-<nodeId>`), and poll-outcome batches (`polls-<site>`, one event per
 * site per scheduler flush) that list it in `data.nodeIds` among hundreds of others. Without these indexes the last
 * two are found only by reading every event (and decompressing every batch).
 *
 * - `ledger_events_node_id`: btree on `data->>'nodeId'`, partial (only events that carry one), with the position so
 *   a window is a range scan.
 * - `ledger_events_poll_node_ids`: GIN (`jsonb_path_ops`) on `data->'nodeIds'` of poll-outcome batches, answering
 *   `data->'nodeIds' @> '["<node>"]'`. One entry per outcome: at 25,000 nodes polled every minute that is the bulk of
 *   the index, kept small by GIN's posting lists.
 * - `ledger_events_poll_rows_v1`: the same for batches stored in version 1 (one object per outcome, before the
 *   columnar form); empty unless the log holds such batches.
 *
 * Plain `CREATE INDEX` (the migrator runs in a transaction): appends wait while it builds, once, at upgrade (14 s on
 * a log of 2 million events, 25,000 nodes). `ANALYZE` follows: without statistics on the new expressions the planner
 * reads every poll batch of the log instead of the few that name the node. It must run as the owner of
 * `ledger_events` (the migrating role), never as the app role.
 */
import { sql, type Kysely, type Migration } from 'kysely';
import type { DynamicDatabase } from '../database.js';

export const nodeIndexNames = ['ledger_events_node_id', 'ledger_events_poll_node_ids', 'ledger_events_poll_rows_v1'] as const;

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`CREATE INDEX IF NOT EXISTS ledger_events_node_id ON ledger_events ((data->>'nodeId'), position) WHERE (data->>'nodeId') IS NOT NULL`.execute(db);
  await sql`CREATE INDEX IF NOT EXISTS ledger_events_poll_node_ids ON ledger_events USING gin ((data->'nodeIds') jsonb_path_ops) WHERE type = 'PollOutcomesRecorded'`.execute(db);
  await sql`CREATE INDEX IF NOT EXISTS ledger_events_poll_rows_v1 ON ledger_events USING gin ((data->'outcomes') jsonb_path_ops) WHERE type = 'PollOutcomesRecorded' AND schema_version = 1`.execute(db);
  await sql`ANALYZE ledger_events`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const name of nodeIndexNames) await sql`DROP INDEX IF EXISTS ${sql.id(name)}`.execute(db);
}

/** The migration under the name it is registered with, for `migrateToLatest(db, historyMigrations)`. */
export const historyMigrations: Record<string, Migration> = { '0004-history-node-index': { up, down } };

/** Whether the node indexes exist: without them a timeline or a diff is correct but reads the whole log. */
export async function nodeIndexesPresent(db: Kysely<DynamicDatabase>): Promise<boolean> {
  const rows = await sql<{ indexname: string }>`SELECT indexname FROM pg_indexes WHERE tablename = 'ledger_events' AND indexname = ANY(${[...nodeIndexNames]})`.execute(db);
  return rows.rows.length === nodeIndexNames.length;
}
