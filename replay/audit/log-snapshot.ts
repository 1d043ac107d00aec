/**
 * One snapshot of the log for every judgement the transparency log makes: the head, the rows, the Merkle tree's state
 * and tiles, and the checkpoints, read in one REPEATABLE READ transaction.
 *
 * Why: the appends commit while these are read. Read in separate statements, a commit between two of them makes an
 * intact log look broken (a row beyond the head, a tree that disagrees with the head) or a broken one look intact.
 * PostgreSQL takes a REPEATABLE READ transaction's snapshot at its first statement; every later statement sees the
 * same committed state, whatever commits meanwhile.
 */
import pg from 'pg';

/** Runs `work` on one connection inside one REPEATABLE READ transaction (READ ONLY unless `write`). */
export async function inSnapshot<T>(pool: pg.Pool, work: (client: pg.PoolClient) => Promise<T>, options: { write?: boolean } = {}): Promise<T> {
  const client = await pool.connect();
  let failed = false;
  try {
    await client.query(`BEGIN ISOLATION LEVEL REPEATABLE READ ${options.write ? 'READ WRITE' : 'READ ONLY'}`);
    const result = await work(client);
    await client.query('COMMIT');
    return result;
  } catch (error) {
    failed = true;
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  } finally {
    // A connection whose transaction failed is not given back: its state is unknown.
    client.release(failed);
  }
}

/** What the log, its tree and its stored checkpoints say of themselves in one snapshot. */
export interface LogFacts {
  headPosition: number;
  treeSize: number;
  /** The hash of the row the tree's last leaf was made from, as the tree recorded it. */
  treeLastHash: Buffer;
  /** The hash of the row now stored at position `treeSize` (null: no such row). */
  rowHashAtTreeSize: Buffer | null;
  /** The largest checkpoint in `ledger_checkpoints` (0: none). */
  newestCheckpointSize: number;
  newestCheckpointAt: Date | null;
  /** A checkpoint found published outside the database beyond what it stores, recorded there (0: none; migration 0008). */
  publishedSize: number;
}

/** Reads `LogFacts` in one statement (so in one snapshot even outside a transaction). */
export async function readLogFacts(db: pg.ClientBase | pg.Pool): Promise<LogFacts> {
  const row = (
    await db.query<{ head: string; size: string; last_hash: Buffer; row_hash: Buffer | null; checkpoint_size: string | null; checkpoint_at: Date | null; published_size: string }>(
      `SELECT h.position AS head, s.size, s.last_hash, s.published_size,
              (SELECT hash FROM ledger_events WHERE position = s.size) AS row_hash,
              c.size AS checkpoint_size, c.published_at AS checkpoint_at
         FROM ledger_head h CROSS JOIN ledger_merkle_state s
         LEFT JOIN LATERAL (SELECT size, published_at FROM ledger_checkpoints ORDER BY size DESC LIMIT 1) c ON true`,
    )
  ).rows[0];
  if (!row) throw new Error('ledger_head or ledger_merkle_state is empty: the ledger schema is older than the transparency log');
  return {
    headPosition: Number(row.head),
    treeSize: Number(row.size),
    treeLastHash: row.last_hash,
    rowHashAtTreeSize: row.row_hash,
    newestCheckpointSize: row.checkpoint_size === null ? 0 : Number(row.checkpoint_size),
    newestCheckpointAt: row.checkpoint_at,
    publishedSize: Number(row.published_size),
  };
}
