import { sql, type Kysely } from 'kysely';

/**
 * The log refuses to be rewritten from inside the database, and gains the tables of its transparency log.
 *
 * - Triggers refuse UPDATE, DELETE and TRUNCATE on `ledger_events` and `ledger_checkpoints`, and a head that moves
 *   backwards. They bind every role, the owner's included; only a superuser can step around them
 *   (`session_replication_role`, `DISABLE TRIGGER`), which is why signed checkpoints are also published outside the
 *   database (replay/audit).
 * - `ledger_merkle_tiles` holds the RFC 9162 Merkle tree over the log in tiles of 256 hashes (C2SP tlog-tiles
 *   layout: tile level L holds the tree's level 8L; the last tile of a level grows until it is full), so a proof
 *   costs a few reads. Leaf i is SHA-256(0x00 || chain hash of position i + 1).
 * - `ledger_merkle_state` is the follower's compact range (size and the roots of its perfect subtrees), so it
 *   resumes after a restart without reading the tree.
 * - `ledger_checkpoints` keeps every signed checkpoint (C2SP signed note) the ledger published.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE FUNCTION ledger_refuse_rewrite() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      RAISE EXCEPTION '% on % refused: the ledger is append-only', TG_OP, TG_TABLE_NAME USING ERRCODE = 'insufficient_privilege';
    END $$`.execute(db);
  await sql`
    CREATE FUNCTION ledger_head_forward_only() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF NEW.position < OLD.position THEN
        RAISE EXCEPTION 'ledger_head may not move backwards (from % to %)', OLD.position, NEW.position USING ERRCODE = 'insufficient_privilege';
      END IF;
      RETURN NEW;
    END $$`.execute(db);
  await sql`CREATE TRIGGER ledger_events_append_only BEFORE UPDATE OR DELETE ON ledger_events FOR EACH ROW EXECUTE FUNCTION ledger_refuse_rewrite()`.execute(db);
  await sql`CREATE TRIGGER ledger_events_no_truncate BEFORE TRUNCATE ON ledger_events FOR EACH STATEMENT EXECUTE FUNCTION ledger_refuse_rewrite()`.execute(db);
  await sql`CREATE TRIGGER ledger_head_forward BEFORE UPDATE ON ledger_head FOR EACH ROW EXECUTE FUNCTION ledger_head_forward_only()`.execute(db);
  await sql`CREATE TRIGGER ledger_head_kept BEFORE DELETE ON ledger_head FOR EACH ROW EXECUTE FUNCTION ledger_refuse_rewrite()`.execute(db);
  await sql`CREATE TRIGGER ledger_head_no_truncate BEFORE TRUNCATE ON ledger_head FOR EACH STATEMENT EXECUTE FUNCTION ledger_refuse_rewrite()`.execute(db);

  await sql`
    CREATE TABLE ledger_merkle_tiles (
      level   smallint NOT NULL,
      idx     bigint   NOT NULL,
      hashes  bytea    NOT NULL CHECK (length(hashes) % 32 = 0 AND length(hashes) BETWEEN 32 AND 8192),
      PRIMARY KEY (level, idx)
    )`.execute(db);
  await sql`
    CREATE TABLE ledger_merkle_state (
      singleton   boolean     PRIMARY KEY DEFAULT true CHECK (singleton),
      origin      text        NOT NULL,
      size        bigint      NOT NULL,
      peaks       bytea       NOT NULL,
      root        bytea       NOT NULL,
      last_hash   bytea       NOT NULL,
      updated_at  timestamptz NOT NULL
    )`.execute(db);
  // The origin names this log in its checkpoints: fixed at creation, unique per ledger.
  await sql`
    INSERT INTO ledger_merkle_state (origin, size, peaks, root, last_hash, updated_at)
    VALUES ('fleet-ledger/' || gen_random_uuid(), 0, '\\x'::bytea, sha256(''::bytea), decode(repeat('00', 32), 'hex'), now())`.execute(db);
  await sql`
    CREATE TABLE ledger_checkpoints (
      size          bigint      PRIMARY KEY,
      root          bytea       NOT NULL,
      signed_note   text        NOT NULL,
      key_id        text        NOT NULL,
      published_at  timestamptz NOT NULL
    )`.execute(db);
  await sql`CREATE TRIGGER ledger_checkpoints_append_only BEFORE UPDATE OR DELETE ON ledger_checkpoints FOR EACH ROW EXECUTE FUNCTION ledger_refuse_rewrite()`.execute(db);
  await sql`CREATE TRIGGER ledger_checkpoints_no_truncate BEFORE TRUNCATE ON ledger_checkpoints FOR EACH STATEMENT EXECUTE FUNCTION ledger_refuse_rewrite()`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP TABLE ledger_checkpoints`.execute(db);
  await sql`DROP TABLE ledger_merkle_state`.execute(db);
  await sql`DROP TABLE ledger_merkle_tiles`.execute(db);
  await sql`DROP TRIGGER ledger_head_no_truncate ON ledger_head`.execute(db);
  await sql`DROP TRIGGER ledger_head_kept ON ledger_head`.execute(db);
  await sql`DROP TRIGGER ledger_head_forward ON ledger_head`.execute(db);
  await sql`DROP TRIGGER ledger_events_no_truncate ON ledger_events`.execute(db);
  await sql`DROP TRIGGER ledger_events_append_only ON ledger_events`.execute(db);
  await sql`DROP FUNCTION ledger_head_forward_only()`.execute(db);
  await sql`DROP FUNCTION ledger_refuse_rewrite()`.execute(db);
}
