/**
 * The offline verifier: an audit export checked with nothing but the log's public key (no database, no network).
 * Deliberately independent of the code that wrote the log: it recomputes every hash from the bytes in the file.
 *
 * Checked, in one pass:
 * - every checkpoint's signature, and that they all name the export's origin;
 * - every row: its position is the next one, its hash is SHA-256(prev_hash || canonical event), its prev_hash is
 *   the hash of the row before (the first row: the anchor, proven to be the prefix tree's last leaf);
 * - the tree: the leaves recorded by the transparency log give every signed root in the range (so they are
 *   authentic), and each row's own leaf SHA-256(0x00 || hash) equals the recorded one; the rows' leaves give the roots;
 * - the checkpoint the auditor kept (`since`): a signed note, or a published tlog-tiles folder whose tiles then give
 *   the exact first position where this log departs from what was published.
 *
 * The answer names the first position that fails and why.
 */
import { createHash } from 'node:crypto';
import { createReadStream, existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { leafHash, MerkleAccumulator, verifyInclusion } from '../merkle/rfc9162.js';
import { openNote, parseCheckpoint } from '../checkpoint/signed-note.js';
import { exportMagic, type ExportHeader } from './export.js';
import { tilePath, tilesOfTree, tileWidth } from './tiles.js';

export interface VerifyOptions {
  /** The log's verifier key (`<name>+<id>+<key>`). */
  key: string;
  /** A checkpoint the auditor kept: a signed note file, or a folder published by the ledger (checkpoint + tiles). */
  since?: string;
}

export interface VerifyReport {
  ok: boolean;
  origin?: string;
  from?: number;
  to?: number;
  events: number;
  checkpoints: number;
  /** The first position that fails, and why. */
  firstBadPosition?: number;
  reason?: string;
  /** What was also found, after the first failure. */
  notes: string[];
  since?: { size: number; consistent: boolean };
  eventsPerSecond?: number;
}

interface SignedRoot {
  size: number;
  root: Buffer;
}

function openSigned(note: string, key: string): { origin: string; size: number; root: Buffer } {
  const { text } = openNote(note, [key]);
  const checkpoint = parseCheckpoint(text);
  return { origin: checkpoint.origin, size: checkpoint.size, root: checkpoint.rootHash };
}

/** Leaves [0, size) from a published tlog-tiles folder, authenticated against its signed checkpoint. */
function publishedLeaves(dir: string, key: string): { size: number; root: Buffer; origin: string; leaves: Buffer[] } {
  const checkpoint = openSigned(readFileSync(join(dir, 'checkpoint'), 'utf8'), key);
  const leaves: Buffer[] = [];
  for (const tile of tilesOfTree(checkpoint.size).filter((t) => t.level === 0)) {
    const path = join(dir, tilePath(0, tile.index, tile.width));
    const fallback = join(dir, tilePath(0, tile.index));
    const bytes = existsSync(path) ? readFileSync(path) : existsSync(fallback) ? readFileSync(fallback) : null;
    if (!bytes || bytes.length < tile.width * 32) throw new Error(`the published folder lacks ${tilePath(0, tile.index, tile.width)}`);
    for (let i = 0; i < tile.width; i++) leaves.push(bytes.subarray(i * 32, i * 32 + 32));
  }
  if (!rootOf(leaves).equals(checkpoint.root)) throw new Error(`the published tiles do not give the root of their own checkpoint (size ${checkpoint.size})`);
  return { ...checkpoint, leaves };
}

function rootOf(leaves: readonly Buffer[]): Buffer {
  const accumulator = new MerkleAccumulator();
  for (const leaf of leaves) accumulator.push(leaf);
  return accumulator.root();
}

export async function verifyExport(file: string, options: VerifyOptions): Promise<VerifyReport> {
  const started = performance.now();
  const report: VerifyReport = { ok: true, events: 0, checkpoints: 0, notes: [] };
  // Every failure found; the report names the lowest position (a failure without a position only when none has).
  // A failure that only bounds where the damage is (a root that no longer matches) ranks after every exact one.
  const failures: Array<{ position: number | undefined; reason: string; exact: boolean }> = [];
  const fail = (position: number | undefined, reason: string, exact = true): void => {
    if (failures.length < 1_000) failures.push({ position, reason, exact });
  };

  let kept: { size: number; root: Buffer; origin: string; leaves?: Buffer[] } | undefined;
  if (options.since) {
    kept = statSync(options.since).isDirectory() ? publishedLeaves(options.since, options.key) : openSigned(readFileSync(options.since, 'utf8'), options.key);
  }

  const lines = createInterface({ input: createReadStream(file, { encoding: 'utf8', highWaterMark: 1 << 20 }), crlfDelay: Infinity });
  let header: ExportHeader | undefined;
  const signed = new Map<number, Buffer>();
  let recorded: MerkleAccumulator | undefined;
  let computed: MerkleAccumulator | undefined;
  let recordedOk = true;
  let firstRecordedMismatch: number | undefined;
  let lastGoodSigned = 0;
  let firstBadSigned: number | undefined;
  let expected = 0;
  let prevHash = '';
  let lineNo = 0;
  // Positions where the row's own leaf differs from the recorded one (the tree's record, authenticated below).
  let firstLeafMismatch: number | undefined;
  // The first position whose leaf differs from the kept published leaves.
  let firstDeparture: number | undefined;

  const atSize = (size: number): void => {
    const root = signed.get(size);
    if (root) {
      if (!recorded!.root().equals(root)) {
        recordedOk = false;
        firstRecordedMismatch ??= size;
      }
      if (computed!.root().equals(root)) {
        if (firstBadSigned === undefined) lastGoodSigned = size;
      } else firstBadSigned ??= size;
    }
    if (kept && kept.size === size && !kept.leaves && !computed!.root().equals(kept.root)) {
      firstDeparture ??= -1;
    }
  };

  for await (const line of lines) {
    lineNo += 1;
    if (lineNo === 1) {
      if (line !== exportMagic) return { ...report, ok: false, reason: `not an audit export (first line is not '${exportMagic}')` };
      continue;
    }
    const kind = line.slice(0, 2);
    if (kind === 'E ') {
      if (!header) return { ...report, ok: false, reason: 'an event comes before the header' };
      const fields = line.slice(2).split('\t', 4);
      const tail = line.indexOf('\t', line.indexOf('\t', line.indexOf('\t', line.indexOf('\t') + 1) + 1) + 1);
      const canonical = line.slice(tail + 1);
      const position = Number(fields[0]);
      const [, prev, hash, leafHex] = fields as [string, string, string, string];
      report.events += 1;
      if (position !== expected) {
        fail(expected, position > expected ? `row ${expected} is missing (the next row is ${position})` : `row ${position} appears again after ${expected - 1}`);
        // Re-synchronise on the row as given, so later checks still run.
        expected = position;
      }
      const stated = /"position":(\d+)/.exec(canonical.slice(canonical.lastIndexOf('"position":')))?.[1];
      if (Number(stated) !== position) fail(position, `the event's content says position ${stated ?? '(none)'}: a row moved`);
      if (prev !== prevHash) fail(position, `prev_hash does not match the hash of position ${position - 1}`);
      const recomputed = createHash('sha256').update(Buffer.from(prev, 'hex')).update(canonical, 'utf8').digest();
      if (recomputed.toString('hex') !== hash) fail(position, 'content does not match its hash (the row was altered)');
      const ownLeaf = leafHash(Buffer.from(hash, 'hex'));
      const recordedLeaf = leafHex ? Buffer.from(leafHex, 'hex') : undefined;
      if (!recordedLeaf) {
        recordedOk = false;
        firstRecordedMismatch ??= position;
      } else if (!recordedLeaf.equals(ownLeaf)) firstLeafMismatch ??= position;
      if (kept?.leaves && position <= kept.size && !kept.leaves[position - 1]!.equals(ownLeaf)) firstDeparture ??= position;
      recorded!.push(recordedLeaf ?? ownLeaf);
      computed!.push(ownLeaf);
      atSize(position);
      prevHash = hash;
      expected = position + 1;
    } else if (kind === 'C ') {
      const note = Buffer.from(line.slice(2), 'base64').toString('utf8');
      try {
        const checkpoint = openSigned(note, options.key);
        if (header && checkpoint.origin !== header.origin) fail(undefined, `a checkpoint names origin '${checkpoint.origin}', the export '${header.origin}'`);
        signed.set(checkpoint.size, checkpoint.root);
        report.checkpoints += 1;
      } catch (error) {
        fail(undefined, `a checkpoint does not verify with the given key: ${error instanceof Error ? error.message : String(error)}`);
      }
    } else if (kind === 'H ') {
      header = JSON.parse(line.slice(2)) as ExportHeader;
      report.origin = header.origin;
      report.from = header.from;
      report.to = header.to;
      recorded = new MerkleAccumulator({ size: header.prefix.size, peaks: header.prefix.peaks });
      computed = new MerkleAccumulator({ size: header.prefix.size, peaks: header.prefix.peaks });
      expected = header.from;
      if (header.prefix.size > 0) {
        const anchor = header.anchor;
        if (!anchor || anchor.position !== header.prefix.size) return { ...report, ok: false, reason: 'the export lacks the anchor row of its prefix' };
        if (!verifyInclusion(leafHash(Buffer.from(anchor.hash, 'hex')), anchor.position - 1, header.prefix.size, anchor.proof.map((h) => Buffer.from(h, 'hex')), recorded.root())) {
          return { ...report, ok: false, reason: `the anchor (position ${anchor.position}) is not the last leaf of the prefix tree` };
        }
        prevHash = anchor.hash;
      } else prevHash = '0'.repeat(64);
      if (kept && kept.origin !== header.origin) fail(undefined, `your checkpoint is of origin '${kept.origin}', the export of '${header.origin}'`);
      // The prefix itself against what the auditor kept: its root at the prefix size.
      if (kept && header.prefix.size > 0 && kept.size >= header.prefix.size) {
        const keptPrefix = kept.leaves ? rootOf(kept.leaves.slice(0, header.prefix.size)) : kept.size === header.prefix.size ? kept.root : undefined;
        if (keptPrefix && !keptPrefix.equals(recorded.root())) firstDeparture ??= -1;
      }
    } else if (line.length > 0) {
      return { ...report, ok: false, reason: `line ${lineNo} is not a record of an audit export` };
    }
  }
  if (!header) return { ...report, ok: false, reason: 'the export has no header' };
  if (expected - 1 < header.to) fail(expected, `the export ends at position ${expected - 1}, its checkpoint at ${header.to}: rows ${expected}..${header.to} are missing`);
  const lastSigned = Math.max(0, ...[...signed.keys()].filter((size) => size <= expected - 1));
  if (lastSigned < expected - 1) report.notes.push(`rows ${lastSigned + 1}..${expected - 1} are after the last checkpoint in the export: no signature covers them yet`);
  if (report.checkpoints === 0) fail(undefined, 'the export holds no checkpoint signed by this key');

  // Which rows are bad, most precise first: a row that disagrees with the authenticated record of the tree.
  if (firstBadSigned !== undefined) {
    if (recordedOk && firstLeafMismatch !== undefined) {
      fail(firstLeafMismatch, `the row differs from the leaf the transparency log recorded for it when it was appended (the signed root of size ${firstBadSigned} no longer matches)`);
    } else {
      fail(lastGoodSigned + 1, `the rows no longer give the signed root of size ${firstBadSigned} (they still give ${lastGoodSigned > 0 ? `size ${lastGoodSigned}'s` : 'no earlier one'}): a row in ${lastGoodSigned + 1}..${firstBadSigned} was rewritten${recordedOk ? '' : ', and the recorded leaves were rewritten too'}`, false);
    }
  } else if (!recordedOk && firstRecordedMismatch !== undefined) {
    report.notes.push(`the recorded leaves disagree with the signed roots from size ${firstRecordedMismatch}: the tiles were altered, the rows were not`);
  }

  if (kept) {
    report.since = { size: kept.size, consistent: true };
    const end = expected - 1;
    if (kept.size > end) {
      report.since.consistent = false;
      fail(end + 1, `your checkpoint is of size ${kept.size} but this log ends at ${end}: rows ${end + 1}..${kept.size} are gone (the log was truncated or rolled back)`);
    } else if (kept.size < header.prefix.size) {
      report.notes.push(`your checkpoint (size ${kept.size}) is before this export's start: export from position ${kept.size} or earlier to check it`);
    } else if (firstDeparture !== undefined) {
      report.since.consistent = false;
      if (firstDeparture > 0) fail(firstDeparture, `this log departs from the one published at size ${kept.size}: position ${firstDeparture} differs (a fork or a rewrite)`);
      else fail(header.prefix.size + 1, `this log does not give your checkpoint's root at size ${kept.size} (a fork or a rewrite in ${header.prefix.size + 1}..${kept.size})`, false);
    }
  }
  if (failures.length > 0) {
    const rank = (f: (typeof failures)[number]): number => (f.exact ? 0 : 2 ** 53) + (f.position ?? 2 ** 52);
    const ranked = [...failures].sort((a, b) => rank(a) - rank(b));
    const first = ranked[0]!;
    report.ok = false;
    if (first.position !== undefined) report.firstBadPosition = first.position;
    report.reason = first.reason;
    report.notes.push(...ranked.slice(1, 20).map((f) => (f.position !== undefined ? `position ${f.position}: ${f.reason}` : f.reason)));
  }
  report.eventsPerSecond = Math.round(report.events / ((performance.now() - started) / 1000));
  void tileWidth;
  return report;
}
