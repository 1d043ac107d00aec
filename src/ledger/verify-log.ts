/**
 * The hash chain's check: recomputes every row's hash over a range of the log and names the first row that was
 * altered, deleted, inserted or moved.
 *
 * Guarantee: the head, the rows and "rows beyond the head" are read in one REPEATABLE READ READ ONLY transaction, so
 * the verdict is about one state of the log. Read in separate statements (as before), a commit landing between the
 * head read and the "beyond" read showed an untouched log as broken ("row beyond the recorded head") while appends
 * ran: an auditor who sees one false alarm stops believing the tool.
 */
import { sql, type Kysely, type Transaction } from 'kysely';
import { chainHash, genesisHash } from './canonical-json.js';
import type { LedgerDatabase } from './database.js';
import { canonicalEvent, storedEvent, type EventRow } from './event-row.js';

/** The verdict, with the head it was judged against (read in the same snapshot as the rows). */
export type ChainVerification =
  | { ok: true; from: number; to: number; checked: number; headPosition: number; headHash: string }
  | { ok: false; from: number; to: number; checked: number; headPosition: number; headHash: string; firstBrokenPosition: number; reason: string };

/** Rows read per statement: bounds memory on a large log, all statements in the same snapshot. */
const pageRows = 5000;

/**
 * Runs `work` in one REPEATABLE READ READ ONLY transaction: every statement in it sees the same committed state of
 * the log (PostgreSQL takes the snapshot at the first statement), whatever commits meanwhile.
 */
export function inLogSnapshot<T>(db: Kysely<LedgerDatabase>, work: (trx: Transaction<LedgerDatabase>) => Promise<T>): Promise<T> {
  return db.transaction().setIsolationLevel('repeatable read').setAccessMode('read only').execute(work);
}

/** Verifies [from, to] (default: the whole log) in one snapshot; `to` is bounded by the head of that snapshot. */
export function verifyLog(db: Kysely<LedgerDatabase>, options: { from?: number; to?: number } = {}): Promise<ChainVerification> {
  return inLogSnapshot(db, (trx) => verifyInSnapshot(trx, options));
}

async function verifyInSnapshot(trx: Transaction<LedgerDatabase>, options: { from?: number; to?: number }): Promise<ChainVerification> {
  const headRow = await trx.selectFrom('ledger_head').select(['position', 'hash']).executeTakeFirstOrThrow();
  const head = { headPosition: Number(headRow.position), headHash: headRow.hash.toString('hex') };
  const from = Math.max(1, options.from ?? 1);
  const to = Math.min(options.to ?? head.headPosition, head.headPosition);
  let prevHash = genesisHash;
  if (from > 1) {
    const before = await trx.selectFrom('ledger_events').select('hash').where('position', '=', from - 1).executeTakeFirst();
    if (!before) return { ok: false, from, to, checked: 0, ...head, firstBrokenPosition: from - 1, reason: 'row is missing' };
    prevHash = before.hash.toString('hex');
  }
  let expected = from;
  let checked = 0;
  while (expected <= to) {
    const rows = await trx.selectFrom('ledger_events').selectAll().where('position', '>=', expected).where('position', '<=', to).orderBy('position').limit(pageRows).execute();
    if (rows.length === 0) break;
    for (const raw of rows) {
      const event = storedEvent(raw as unknown as EventRow);
      const broken = (reason: string): ChainVerification => ({ ok: false, from, to, checked, ...head, firstBrokenPosition: expected, reason });
      if (event.position !== expected) return broken(`row is missing (next stored row is position ${event.position})`);
      if (event.prevHash !== prevHash) return broken('prev_hash does not match the hash of the row before');
      const hash = chainHash(prevHash, canonicalEvent(event));
      if (hash !== event.hash) return broken('content does not match its hash');
      prevHash = hash;
      expected += 1;
      checked += 1;
    }
  }
  if (expected <= to) return { ok: false, from, to, checked, ...head, firstBrokenPosition: expected, reason: 'row is missing' };
  if (to === head.headPosition && to > 0 && prevHash !== head.headHash) {
    return { ok: false, from, to, checked, ...head, firstBrokenPosition: to, reason: 'last row does not match the recorded head' };
  }
  // In the same snapshot as the head: a row past it is one the head does not account for (an insert around the
  // append path), never an append that committed after the head was read.
  const beyond = await sql<{ position: string }>`SELECT position FROM ledger_events WHERE position > ${head.headPosition} ORDER BY position LIMIT 1`.execute(trx);
  const first = beyond.rows[0];
  if (to === head.headPosition && first) {
    return { ok: false, from, to, checked, ...head, firstBrokenPosition: Number(first.position), reason: 'row beyond the recorded head' };
  }
  return { ok: true, from, to, checked, ...head };
}
