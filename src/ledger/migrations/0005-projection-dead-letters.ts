import { sql, type Kysely } from 'kysely';

/**
 * Events a projection could not apply, set aside with the reason so the projection goes on (one bad event never
 * stops a read model fleet-wide). A rebuild (a fixed projection) replays them and clears the rows it could apply.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE TABLE projection_dead_letters (
      projection          text        NOT NULL,
      position            bigint      NOT NULL,
      event_id            uuid        NOT NULL,
      type                text        NOT NULL,
      stream              text        NOT NULL,
      reason              text        NOT NULL,
      projection_version  integer     NOT NULL,
      set_aside_at        timestamptz NOT NULL,
      PRIMARY KEY (projection, position)
    )`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP TABLE projection_dead_letters`.execute(db);
}
