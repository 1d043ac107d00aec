import { sql, type Kysely } from 'kysely';

/**
 * The event log. Stream names use the "C" collation so the (stream, stream_version) index also serves
 * stream-prefix reads (`stream LIKE 'node-%'`) without an index of its own. `position` is assigned inside the append advisory lock, so position order is commit
 * order; `hash` chains each row to the one before it. A Merkle tree over `hash` (CT style) can be added
 * as its own table keyed by position without touching these columns.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE TABLE ledger_events (
      position        bigint      PRIMARY KEY,
      event_id        uuid        NOT NULL UNIQUE,
      stream          text        COLLATE "C" NOT NULL,
      stream_version  integer     NOT NULL,
      type            text        NOT NULL,
      schema_version  integer     NOT NULL,
      recorded_at     timestamptz NOT NULL,
      observed_at     timestamptz,
      actor           jsonb       NOT NULL,
      correlation_id  text,
      causation_id    text,
      data            jsonb       NOT NULL,
      prev_hash       bytea       NOT NULL,
      hash            bytea       NOT NULL,
      CONSTRAINT ledger_events_stream_version UNIQUE (stream, stream_version)
    )`.execute(db);
  await sql`CREATE INDEX ledger_events_type_position ON ledger_events (type, position)`.execute(db);
  await sql`CREATE INDEX ledger_events_recorded_at ON ledger_events USING brin (recorded_at)`.execute(db);
  await sql`
    CREATE TABLE ledger_streams (
      stream         text        COLLATE "C" PRIMARY KEY,
      version        integer     NOT NULL,
      last_position  bigint      NOT NULL,
      created_at     timestamptz NOT NULL,
      updated_at     timestamptz NOT NULL
    )`.execute(db);
  await sql`
    CREATE TABLE ledger_head (
      singleton    boolean     PRIMARY KEY DEFAULT true CHECK (singleton),
      position     bigint      NOT NULL,
      hash         bytea       NOT NULL,
      recorded_at  timestamptz NOT NULL
    )`.execute(db);
  await sql`INSERT INTO ledger_head (position, hash, recorded_at) VALUES (0, decode(repeat('00', 32), 'hex'), 'epoch')`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP TABLE ledger_head`.execute(db);
  await sql`DROP TABLE ledger_streams`.execute(db);
  await sql`DROP TABLE ledger_events`.execute(db);
}
