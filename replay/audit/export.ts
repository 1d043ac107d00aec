/**
 * An audit export: a stretch of the log in the exact form its hashes were computed over, with the signed checkpoints
 * that cover it and what an auditor needs to check them offline with nothing but the public key.
 *
 * The format is text, one record per line, written and read as a stream:
 *
 *   fleet-ledger audit export v1
 *   H <json: origin, from, to, prefix (the compact range of the leaves before `from`), anchor>
 *   C <base64 of a signed checkpoint note>            every checkpoint with a size in [from - 1, to]
 *   E <position> TAB <prev hash> TAB <hash> TAB <leaf as the tree recorded it> TAB <canonical event JSON>
 *
 * `to` is by default the newest signed checkpoint, so the last root is checkable. The recorded leaves come from the
 * transparency log's tiles, written as the log grew: a verifier authenticates them against the signed roots and then
 * names the exact first row that disagrees with them, even when every later chain hash was recomputed.
 */
import pg from 'pg';
import { canonicalEvent } from '../../src/ledger/index.js';
import { inclusionProofRanges, MerkleAccumulator } from '../merkle/index.js';
import { AuditError, loadTiles, readMerkleState, recordedLeaves } from './merkle-store.js';
import { rangeRootFromTiles, refsOf, tilesFor } from './tiles.js';

export const exportMagic = 'fleet-ledger audit export v1';

export interface ExportHeader {
  origin: string;
  from: number;
  to: number;
  /** The perfect subtrees of the leaves [0, from - 1) as peaks of a compact range (hex), oldest first. */
  prefix: { size: number; peaks: string[] };
  /** The hash of position from - 1, with its inclusion in the prefix tree: the first row's prev_hash must equal it. */
  anchor?: { position: number; hash: string; proof: string[] };
  exportedAt: string;
}

export interface ExportOptions {
  from?: number;
  to?: number;
}

/**
 * Lines of an export of [from, to] (default: up to the newest signed checkpoint). Everything is read in one REPEATABLE
 * READ READ ONLY transaction held for the whole stream: the header, the checkpoints, the rows and their leaves are of
 * one state of the log, whatever commits while a long export is written.
 */
export async function* exportLines(pool: pg.Pool, options: ExportOptions = {}): AsyncGenerator<string> {
  const client = await pool.connect();
  let done = false;
  try {
    await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
    yield* exportInSnapshot(client, options);
    await client.query('COMMIT');
    done = true;
  } finally {
    // Stopped early (the reader went away) or failed: the transaction is rolled back and the connection not reused.
    if (!done) await client.query('ROLLBACK').catch(() => undefined);
    client.release(!done);
  }
}

async function* exportInSnapshot(pool: pg.ClientBase, options: ExportOptions): AsyncGenerator<string> {
  const state = await readMerkleState(pool);
  const from = options.from ?? 1;
  const newest = (await pool.query<{ size: string }>('SELECT max(size) AS size FROM ledger_checkpoints')).rows[0]?.size;
  if (newest === null || newest === undefined) throw new AuditError('AUDIT_BEYOND_TREE', 'no checkpoint has been signed yet: nothing can be exported for offline verification');
  // Up to the newest checkpoint by default; an explicit `to` is taken as asked, up to what the tree holds (rows past
  // the last checkpoint in range are exported too, and the verifier says they are not covered by a signature).
  const to = options.to !== undefined ? Math.min(options.to, state.size) : Number(newest);
  if (!Number.isInteger(from) || from < 1 || from > to) throw new AuditError('AUDIT_BAD_RANGE', `--from must be between 1 and ${to}, got ${from}`);
  if (to > state.size) throw new AuditError('AUDIT_BEYOND_TREE', `checkpoint ${to} is beyond the tree (${state.size})`);

  // The compact range of the prefix: its peaks are the perfect subtrees of [0, from - 1), read from the tiles.
  const prefixSize = from - 1;
  const peaksRanges = prefixPeakRanges(prefixSize);
  const anchorProofRanges = prefixSize > 0 ? inclusionProofRanges(prefixSize - 1, prefixSize) : [];
  const tiles = await loadTiles(pool, tilesFor(refsOf([...peaksRanges, ...anchorProofRanges])));
  const peaks = peaksRanges.map((range) => rangeRootFromTiles(tiles, range.start, range.end).toString('hex'));
  let anchor: ExportHeader['anchor'];
  if (prefixSize > 0) {
    const row = (await pool.query<{ hash: Buffer }>('SELECT hash FROM ledger_events WHERE position = $1', [prefixSize])).rows[0];
    if (!row) throw new AuditError('AUDIT_CHAIN_BROKEN', `position ${prefixSize} is missing from the log`, prefixSize);
    anchor = { position: prefixSize, hash: row.hash.toString('hex'), proof: anchorProofRanges.map((range) => rangeRootFromTiles(tiles, range.start, range.end).toString('hex')) };
  }
  const header: ExportHeader = { origin: state.origin, from, to, prefix: { size: prefixSize, peaks }, ...(anchor ? { anchor } : {}), exportedAt: new Date().toISOString() };
  yield `${exportMagic}\n`;
  yield `H ${JSON.stringify(header)}\n`;
  const checkpoints = await pool.query<{ signed_note: string }>('SELECT signed_note FROM ledger_checkpoints WHERE size >= $1 AND size <= $2 ORDER BY size', [Math.max(1, prefixSize), to]);
  for (const row of checkpoints.rows) yield `C ${Buffer.from(row.signed_note, 'utf8').toString('base64')}\n`;

  const page = 5_000;
  for (let at = from; at <= to; at += page) {
    const last = Math.min(to, at + page - 1);
    const [rows, leaves] = await Promise.all([
      pool.query('SELECT * FROM ledger_events WHERE position >= $1 AND position <= $2 ORDER BY position', [at, last]),
      recordedLeaves(pool, at, last),
    ]);
    let chunk = '';
    let expected = at;
    for (const row of rows.rows) {
      const position = Number(row.position);
      // A missing row is left missing: the verifier names it. The leaf is the one recorded for that position.
      const leaf = leaves[position - at];
      const canonical = canonicalEvent({
        position,
        eventId: row.event_id,
        stream: row.stream,
        streamVersion: row.stream_version,
        type: row.type,
        schemaVersion: row.schema_version,
        recordedAt: row.recorded_at,
        observedAt: row.observed_at,
        actor: row.actor,
        correlationId: row.correlation_id,
        causationId: row.causation_id,
        data: row.data,
      });
      chunk += `E ${position}\t${(row.prev_hash as Buffer).toString('hex')}\t${(row.hash as Buffer).toString('hex')}\t${leaf ? leaf.toString('hex') : ''}\t${canonical}\n`;
      expected = position + 1;
    }
    void expected;
    yield chunk;
  }
}

/** The ranges of the perfect subtrees of [0, size): the binary decomposition of size, largest first. */
export function prefixPeakRanges(size: number): Array<{ start: number; end: number }> {
  const ranges: Array<{ start: number; end: number }> = [];
  let start = 0;
  for (let bit = 2 ** Math.floor(Math.log2(Math.max(1, size))); bit >= 1; bit /= 2) {
    if (size - start >= bit) {
      ranges.push({ start, end: start + bit });
      start += bit;
    }
  }
  return ranges;
}

/** A compact range restored from export peaks (the accumulator's own peak order). */
export function accumulatorFromPeaks(size: number, peaks: readonly string[]): MerkleAccumulator {
  return new MerkleAccumulator({ size, peaks: [...peaks] });
}
