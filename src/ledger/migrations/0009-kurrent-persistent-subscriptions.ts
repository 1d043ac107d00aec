import { sql, type Kysely } from 'kysely';

/**
 * The KurrentDB face's persistent subscriptions (consumer groups): each group's settings and its checkpoint, and the
 * events its consumers parked. This is consumers' state beside the log, not the log: the events themselves stay where
 * they are (`ledger_events`), a parked message is the position of one of them.
 *
 * - `kurrent_persistent_subscriptions`: one row per group of a source (a stream by its ledger name, or `$all`); the
 *   settings as the client gave them; `start_at` where it starts (a stream's version, or a position; "end" resolved
 *   when the group was created or its start changed); `checkpoint` the last revision (stream) or position (`$all`)
 *   below which every event was acknowledged, null before the first.
 * - `kurrent_parked_messages`: the events a group parked (nacked with park, or past their retries), by position;
 *   `replay` marks those asked to be delivered again.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE TABLE kurrent_persistent_subscriptions (
      source      text        COLLATE "C" NOT NULL,
      group_name  text        NOT NULL,
      settings    jsonb       NOT NULL,
      filter      jsonb,
      checkpoint  bigint,
      start_at    bigint      NOT NULL,
      created_at  timestamptz NOT NULL DEFAULT now(),
      updated_at  timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (source, group_name)
    )`.execute(db);
  await sql`
    CREATE TABLE kurrent_parked_messages (
      source      text        COLLATE "C" NOT NULL,
      group_name  text        NOT NULL,
      position    bigint      NOT NULL,
      reason      text        NOT NULL,
      replay      boolean     NOT NULL DEFAULT false,
      parked_at   timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (source, group_name, position),
      FOREIGN KEY (source, group_name) REFERENCES kurrent_persistent_subscriptions (source, group_name) ON DELETE CASCADE
    )`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP TABLE kurrent_parked_messages`.execute(db);
  await sql`DROP TABLE kurrent_persistent_subscriptions`.execute(db);
}
