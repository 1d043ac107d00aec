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
import * as crypto from 'node:crypto';

/** One-shot SHA-256 where Node has it (20.12+), else a Hash object. */
const oneShot = (crypto as unknown as { hash?: (algorithm: string, data: Uint8Array, encoding: 'buffer') => Buffer }).hash;
const sha256 = (data: Buffer): Buffer => (oneShot ? oneShot('sha256', data, 'buffer') : crypto.createHash('sha256').update(data).digest());
import { createReadStream, existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { leafHash, MerkleAccumulator, verifyInclusion } from '../merkle/index.js';
import { openNote, parseCheckpoint } from '../checkpoint/index.js';
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

const positionKey = Buffer.from('"position":');

/**
 * The file's lines as byte slices (no decoding), in batches: one array per chunk read, so the caller's loop over
 * lines is synchronous (a promise per line costs more than hashing the line).
 */
async function* byteLineBatches(file: string): AsyncGenerator<Buffer[]> {
  let rest: Buffer = Buffer.alloc(0);
  for await (const chunk of createReadStream(file, { highWaterMark: 4 << 20 }) as AsyncIterable<Buffer>) {
    const lines: Buffer[] = [];
    let start = 0;
    if (rest.length > 0) {
      // Only the line cut by the chunk boundary is copied, not the chunk.
      const end = chunk.indexOf(0x0a);
      if (end < 0) {
        rest = Buffer.concat([rest, chunk]);
        continue;
      }
      lines.push(Buffer.concat([rest, chunk.subarray(0, end)]));
      start = end + 1;
    }
    for (let end = chunk.indexOf(0x0a, start); end >= 0; end = chunk.indexOf(0x0a, start)) {
      lines.push(chunk.subarray(start, end));
      start = end + 1;
    }
    rest = chunk.subarray(start);
    yield lines;
  }
  if (rest.length > 0) yield [rest];
}

const hexValue = new Int16Array(256).fill(-1);
for (let digit = 0; digit < 16; digit++) {
  hexValue['0123456789abcdef'.charCodeAt(digit)] = digit;
  hexValue['0123456789ABCDEF'.charCodeAt(digit)] = digit;
}

/** The 32 bytes written as 64 hex digits at `line[from, to)` into `into`; false when they are not that. */
function decodeHash(line: Buffer, from: number, to: number, into: Buffer): boolean {
  if (to - from !== 64) return false;
  for (let i = 0; i < 32; i++) {
    const high = hexValue[line[from + 2 * i]!]!;
    const low = hexValue[line[from + 2 * i + 1]!]!;
    if (high < 0 || low < 0) return false;
    into[i] = (high << 4) | low;
  }
  return true;
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
  let prevBytes: Buffer | undefined;
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

  // Lines are read as bytes: an event's canonical JSON is hashed exactly as it sits in the file, never decoded.
  for await (const lines of byteLineBatches(file)) for (const line of lines) {
    lineNo += 1;
    if (lineNo === 1) {
      if (line.toString('utf8') !== exportMagic) return { ...report, ok: false, reason: `not an audit export (first line is not '${exportMagic}')` };
      continue;
    }
    const kind = line.length >= 2 && line[1] === 0x20 ? String.fromCharCode(line[0]!) : '';
    if (kind === 'E') {
      if (!header) return { ...report, ok: false, reason: 'an event comes before the header' };
      const t1 = line.indexOf(0x09, 2);
      const t2 = t1 < 0 ? -1 : line.indexOf(0x09, t1 + 1);
      const t3 = t2 < 0 ? -1 : line.indexOf(0x09, t2 + 1);
      const t4 = t3 < 0 ? -1 : line.indexOf(0x09, t3 + 1);
      if (t4 < 0) return { ...report, ok: false, reason: `line ${lineNo} is not a whole event record` };
      let position = t1 > 2 ? 0 : Number.NaN;
      for (let i = 2; i < t1; i++) {
        const digit = line[i]! - 48;
        if (digit < 0 || digit > 9) {
          position = Number.NaN;
          break;
        }
        position = position * 10 + digit;
      }
      // The three hashes are decoded from their hex digits in place (no strings); a field that is not 64 hex digits
      // is a mismatch like any other.
      const rowPrev = Buffer.allocUnsafe(32);
      const prevReadable = decodeHash(line, t1 + 1, t2, rowPrev);
      const hashBytes = Buffer.allocUnsafe(32);
      const hashReadable = decodeHash(line, t2 + 1, t3, hashBytes);
      let recordedLeaf: Buffer | undefined;
      if (t4 > t3 + 1) {
        recordedLeaf = Buffer.allocUnsafe(32);
        if (!decodeHash(line, t3 + 1, t4, recordedLeaf)) recordedLeaf = Buffer.alloc(0);
      }
      const canonical = line.subarray(t4 + 1);
      report.events += 1;
      if (position !== expected) {
        fail(expected, position > expected ? `row ${expected} is missing (the next row is ${position})` : `row ${position} appears again after ${expected - 1}`);
        // Re-synchronise on the row as given, so later checks still run.
        expected = position;
      }
      // The event's own position: the last top-level "position" key (keys after it in canonical order hold no objects).
      const at = canonical.lastIndexOf(positionKey);
      let stated = 0;
      for (let i = at + positionKey.length; at >= 0 && i < canonical.length; i++) {
        const digit = canonical[i]! - 48;
        if (digit < 0 || digit > 9) break;
        stated = stated * 10 + digit;
      }
      if (stated !== position) fail(position, `the event's content says position ${at < 0 ? '(none)' : stated}: a row moved`);
      if (!prevReadable || !rowPrev.equals(prevBytes!)) fail(position, `prev_hash does not match the hash of position ${position - 1}`);
      // SHA-256(prev_hash || canonical event) over the bytes as they are in the file: the 32 bytes before the event
      // (the tail of the fields just decoded) are overwritten with the row's prev_hash, so one one-shot hash reads
      // both without a copy of the event.
      let recomputed: Buffer;
      const bodyStart = t4 + 1 - 32;
      if (bodyStart >= 0) {
        rowPrev.copy(line, bodyStart);
        recomputed = sha256(line.subarray(bodyStart));
      } else {
        const body = Buffer.allocUnsafe(32 + canonical.length);
        rowPrev.copy(body, 0);
        canonical.copy(body, 32);
        recomputed = sha256(body);
      }
      if (!prevReadable || !hashReadable || !recomputed.equals(hashBytes)) fail(position, 'content does not match its hash (the row was altered)');
      const ownLeaf = leafHash(hashBytes);
      const sameLeaf = recordedLeaf !== undefined && recordedLeaf.equals(ownLeaf);
      if (!recordedLeaf) {
        recordedOk = false;
        firstRecordedMismatch ??= position;
      } else if (!sameLeaf) firstLeafMismatch ??= position;
      if (kept?.leaves && position <= kept.size && !kept.leaves[position - 1]!.equals(ownLeaf)) firstDeparture ??= position;
      // One tree while the recorded leaves agree with the rows (the usual case); two from the first disagreement.
      if (!sameLeaf && recorded === computed) recorded = new MerkleAccumulator(computed!.state());
      computed!.add(ownLeaf);
      if (recorded !== computed) recorded!.add(recordedLeaf ?? ownLeaf);
      if (signed.has(position) || kept?.size === position) atSize(position);
      prevBytes = hashBytes;
      expected = position + 1;
    } else if (kind === 'C') {
      const note = Buffer.from(line.toString('latin1', 2), 'base64').toString('utf8');
      try {
        const checkpoint = openSigned(note, options.key);
        if (header && checkpoint.origin !== header.origin) fail(undefined, `a checkpoint names origin '${checkpoint.origin}', the export '${header.origin}'`);
        signed.set(checkpoint.size, checkpoint.root);
        report.checkpoints += 1;
      } catch (error) {
        fail(undefined, `a checkpoint does not verify with the given key: ${error instanceof Error ? error.message : String(error)}`);
      }
    } else if (kind === 'H') {
      header = JSON.parse(line.toString('utf8', 2)) as ExportHeader;
      report.origin = header.origin;
      report.from = header.from;
      report.to = header.to;
      computed = new MerkleAccumulator({ size: header.prefix.size, peaks: header.prefix.peaks });
      recorded = computed;
      expected = header.from;
      if (header.prefix.size > 0) {
        const anchor = header.anchor;
        if (!anchor || anchor.position !== header.prefix.size) return { ...report, ok: false, reason: 'the export lacks the anchor row of its prefix' };
        if (!verifyInclusion(leafHash(Buffer.from(anchor.hash, 'hex')), anchor.position - 1, header.prefix.size, anchor.proof.map((h) => Buffer.from(h, 'hex')), recorded.root())) {
          return { ...report, ok: false, reason: `the anchor (position ${anchor.position}) is not the last leaf of the prefix tree` };
        }
        prevHash = anchor.hash;
      } else prevHash = '0'.repeat(64);
      prevBytes = Buffer.from(prevHash, 'hex');
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
