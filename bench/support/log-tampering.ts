/**
 * What an attacker holding the database's superuser does to a stopped ledger's log, done as `psql` would do it: around
 * the log's append-only triggers (`session_replication_role = replica`), in one connection. The chain alone cannot
 * stop the second one (the chain is recomputed); the ledger's online integrity check (replay/audit/log-integrity.ts)
 * must notice each at its next start.
 */
import pg from 'pg';
import { canonicalEvent, chainHash, storedEvent } from '../../src/ledger/index.js';
import type { EventRow } from '../../src/ledger/event-row.js';

async function asSuperuser<T>(url: string, work: (admin: pg.Client) => Promise<T>): Promise<T> {
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  try {
    await admin.query('SET session_replication_role = replica');
    return await work(admin);
  } finally {
    await admin.end();
  }
}

/** The log's head and the Merkle tree's size, as stored. */
export async function logSizes(url: string): Promise<{ headPosition: number; treeSize: number }> {
  return asSuperuser(url, async (admin) => {
    const head = await admin.query<{ position: string }>('SELECT position FROM ledger_head');
    const tree = await admin.query<{ size: string }>('SELECT size FROM ledger_merkle_state');
    return { headPosition: Number(head.rows[0]?.position ?? 0), treeSize: Number(tree.rows[0]?.size ?? 0) };
  });
}

/** Deletes every row after `keep` and points the head at row `keep`: the tail of the log is gone without a trace in the chain. */
export async function deleteTailAndRewindHead(url: string, keep: number): Promise<{ deleted: number }> {
  return asSuperuser(url, async (admin) => {
    await admin.query('BEGIN');
    const deleted = await admin.query('DELETE FROM ledger_events WHERE position > $1', [keep]);
    await admin.query('UPDATE ledger_head SET position = $1, hash = (SELECT hash FROM ledger_events WHERE position = $1)', [keep]);
    await admin.query('COMMIT');
    return { deleted: deleted.rowCount ?? 0 };
  });
}

/**
 * Rewrites the actor of row `position` (who asked for it) and recomputes the hash of that row and of every row after
 * it, and the head's hash, as `src/ledger` computes them: the chain verifies again end to end.
 */
export async function rewriteRowAndRecomputeChain(url: string, position: number, actor: { kind: string; id: string }): Promise<{ rewritten: number; rehashed: number }> {
  return asSuperuser(url, async (admin) => {
    await admin.query('BEGIN');
    await admin.query('UPDATE ledger_events SET actor = $1 WHERE position = $2', [JSON.stringify(actor), position]);
    const before = await admin.query<{ hash: Buffer }>('SELECT hash FROM ledger_events WHERE position = $1', [position - 1]);
    let prev = before.rows[0]!.hash.toString('hex');
    let rehashed = 0;
    // In pages: a log of a running fleet has tens of thousands of rows after a row in the middle.
    for (let from = position; ; ) {
      const rows = (await admin.query<EventRow>('SELECT * FROM ledger_events WHERE position >= $1 ORDER BY position LIMIT 2000', [from])).rows;
      if (rows.length === 0) break;
      for (const row of rows) {
        const hash = chainHash(prev, canonicalEvent(storedEvent(row)));
        await admin.query('UPDATE ledger_events SET prev_hash = $1, hash = $2 WHERE position = $3', [Buffer.from(prev, 'hex'), Buffer.from(hash, 'hex'), row.position]);
        prev = hash;
        rehashed += 1;
      }
      from = Number(rows.at(-1)!.position) + 1;
    }
    await admin.query('UPDATE ledger_head SET hash = $1', [Buffer.from(prev, 'hex')]);
    await admin.query('COMMIT');
    return { rewritten: 1, rehashed };
  });
}
