import { sql, type Kysely } from 'kysely';

/**
 * Several processes on one database: who is alive (`cluster_members`, a heartbeat with an expiry) and who polls
 * which shard of the fleet (`cluster_leases`, a lease with an expiry and a fencing epoch). The epoch grows at every
 * acquisition, and an append whose actor carries an older epoch of its shard is refused inside the append transaction
 * (the lease row is read `FOR SHARE` there, so a take-over waits for an append in flight and no stale append commits
 * after it). Times are the database's clock, so hosts whose clocks disagree still agree on who holds what.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE TABLE cluster_members (
      process_id    text        PRIMARY KEY,
      host          text        NOT NULL,
      pid           integer     NOT NULL,
      api_url       text,
      pinned_shards text[],
      started_at    timestamptz NOT NULL DEFAULT now(),
      heartbeat_at  timestamptz NOT NULL DEFAULT now(),
      expires_at    timestamptz NOT NULL
    )`.execute(db);
  await sql`
    CREATE TABLE cluster_leases (
      shard           text        PRIMARY KEY,
      site            text        NOT NULL,
      owner           text,
      epoch           bigint      NOT NULL DEFAULT 0,
      acquired_at     timestamptz,
      renewed_at      timestamptz,
      expires_at      timestamptz,
      poll_after      timestamptz,
      released        boolean     NOT NULL DEFAULT false,
      previous_owner  text,
      handovers       bigint      NOT NULL DEFAULT 0
    )`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP TABLE cluster_leases`.execute(db);
  await sql`DROP TABLE cluster_members`.execute(db);
}
