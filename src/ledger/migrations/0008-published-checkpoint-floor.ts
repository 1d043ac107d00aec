import { sql, type Kysely } from 'kysely';

/**
 * `ledger_merkle_state.published_size`: the size of the newest checkpoint this log was found to have published outside
 * the database when the database's own tree and checkpoints fell short of it (an older copy of the database restored
 * beside a published folder that went on). Written by the online integrity check (replay/audit/log-integrity.ts), read
 * by every append transaction under the append lock together with the tree's size and the stored checkpoints, so no
 * writer of any thread or process takes a position that checkpoint signed. Before, only the store of the process's
 * main thread was told, and a writer on another thread (poller, projections, lease keeper) took the signed positions.
 * 0 on an intact log (what is published is stored first).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE ledger_merkle_state ADD COLUMN published_size bigint NOT NULL DEFAULT 0`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE ledger_merkle_state DROP COLUMN published_size`.execute(db);
}
