import { sql, type Kysely } from 'kysely';

/** One row per projection: how far it has applied the log, with which version, and why it stopped. */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE TABLE projection_checkpoints (
      name        text        PRIMARY KEY,
      version     integer     NOT NULL,
      position    bigint      NOT NULL,
      status      text        NOT NULL CHECK (status IN ('running', 'failed', 'rebuilding')),
      error       jsonb,
      updated_at  timestamptz NOT NULL
    )`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP TABLE projection_checkpoints`.execute(db);
}
