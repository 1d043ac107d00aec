import { sql, type Kysely } from 'kysely';

/**
 * The fencing epoch of every saga's lease (`saga_leases`). A saga is driven by the process holding its advisory lock
 * (`sagas/engine/saga-ownership.ts`); a lock alone cannot stop a process that lost it (its lock session was ended while
 * it lives) from committing an append already on its way. So whoever takes the lock also raises the saga's epoch here,
 * every event the saga appends carries the epoch it was written under, and the append transaction reads this row
 * `FOR SHARE` and refuses an older epoch (`LEDGER_STALE_EPOCH`). The take-over's update waits for an append in flight,
 * and the new owner reads the saga's state after it: whatever the old owner committed, it sees; nothing the old owner
 * sends later commits.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE TABLE saga_leases (
      saga      text        PRIMARY KEY,
      epoch     bigint      NOT NULL,
      owner     text        NOT NULL,
      taken_at  timestamptz NOT NULL DEFAULT now()
    )`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP TABLE saga_leases`.execute(db);
}
