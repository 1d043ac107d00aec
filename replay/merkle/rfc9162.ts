/**
 * The Merkle tree of RFC 9162 (Certificate Transparency 2.0), §2.1: leaf hash SHA-256(0x00 || entry), interior
 * SHA-256(0x01 || left || right), a tree of n leaves split at the largest power of two smaller than n. Audit paths
 * (inclusion) and consistency proofs are produced as *ranges of leaves* whose tree hashes form the proof, so a store
 * of perfect subtrees (tiles) can answer them with one read; verification is the RFC's own algorithms, word for word.
 * node:crypto only: the offline verifier imports this and nothing else of the ledger.
 */
import { createHash } from 'node:crypto';

const leafPrefix = Buffer.from([0]);
const nodePrefix = Buffer.from([1]);

export class MerkleArgumentError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'MerkleArgumentError';
  }
}

export function leafHash(entry: Uint8Array): Buffer {
  return createHash('sha256').update(leafPrefix).update(entry).digest();
}

export function nodeHash(left: Uint8Array, right: Uint8Array): Buffer {
  return createHash('sha256').update(nodePrefix).update(left).update(right).digest();
}

/** The hash of the empty tree: SHA-256 of the empty string. */
export const emptyRoot: Buffer = createHash('sha256').digest();

/** A perfect subtree: 2^level leaves starting at leaf index × 2^level. */
export interface NodeRef {
  level: number;
  index: number;
}

export interface NodeWithHash extends NodeRef {
  hash: Buffer;
}

/** The largest power of two smaller than n (n ≥ 2). */
function split(n: number): number {
  let k = 1;
  while (k * 2 < n) k *= 2;
  return k;
}

const isPowerOfTwo = (n: number): boolean => n > 0 && Number.isInteger(Math.log2(n));

function checkRange(start: number, end: number): void {
  if (!Number.isSafeInteger(start) || !Number.isSafeInteger(end) || start < 0 || end <= start) throw new MerkleArgumentError(`not a range of leaves: [${start}, ${end})`);
}

/**
 * The perfect subtrees `rangeRoot` reads for MTH(D[start:end]), in the order it reads them: an aligned power-of-two
 * range is one node; any other range splits as the RFC splits a tree.
 */
export function perfectDecomposition(start: number, end: number): NodeRef[] {
  checkRange(start, end);
  const refs: NodeRef[] = [];
  const walk = (a: number, b: number): void => {
    const n = b - a;
    if (isPowerOfTwo(n) && a % n === 0) {
      refs.push({ level: Math.round(Math.log2(n)), index: a / n });
      return;
    }
    const k = split(n);
    walk(a, a + k);
    walk(a + k, b);
  };
  walk(start, end);
  return refs;
}

/** MTH(D[start:end]) from the hashes of perfect subtrees. */
export function rangeRoot(start: number, end: number, perfect: (ref: NodeRef) => Buffer): Buffer {
  checkRange(start, end);
  const hashOf = (a: number, b: number): Buffer => {
    const n = b - a;
    if (isPowerOfTwo(n) && a % n === 0) return perfect({ level: Math.round(Math.log2(n)), index: a / n });
    const k = split(n);
    return nodeHash(hashOf(a, a + k), hashOf(a + k, b));
  };
  return hashOf(start, end);
}

/** The reference MTH over leaf hashes (RFC 9162 §2.1.1), by levels: no recursion depth to speak of. */
export function rootOfLeaves(leafHashes: readonly Buffer[]): Buffer {
  const accumulator = new MerkleAccumulator();
  for (const leaf of leafHashes) accumulator.push(leaf);
  return accumulator.root();
}

export interface LeafRange {
  start: number;
  end: number;
}

/** The ranges whose tree hashes are the audit path PATH(m, D[n]) (§2.1.3.1), leaf side first. */
export function inclusionProofRanges(leafIndex: number, treeSize: number): LeafRange[] {
  if (!Number.isSafeInteger(leafIndex) || !Number.isSafeInteger(treeSize) || leafIndex < 0 || leafIndex >= treeSize) {
    throw new MerkleArgumentError(`leaf index ${leafIndex} is not in a tree of ${treeSize} leaves`);
  }
  const path = (m: number, a: number, b: number): LeafRange[] => {
    const n = b - a;
    if (n === 1) return [];
    const k = split(n);
    return m < k ? [...path(m, a, a + k), { start: a + k, end: b }] : [...path(m - k, a + k, b), { start: a, end: a + k }];
  };
  return path(leafIndex, 0, treeSize);
}

/** The ranges whose tree hashes are PROOF(m, D[n]) = SUBPROOF(m, D[n], true) (§2.1.4.1), in proof order. */
export function consistencyProofRanges(m: number, n: number): LeafRange[] {
  if (!Number.isSafeInteger(m) || !Number.isSafeInteger(n) || m < 1 || m > n) throw new MerkleArgumentError(`no consistency proof from size ${m} to size ${n} (needs 1 <= m <= n)`);
  const subproof = (mm: number, a: number, b: number, whole: boolean): LeafRange[] => {
    const size = b - a;
    if (mm === size) return whole ? [] : [{ start: a, end: b }];
    const k = split(size);
    return mm <= k ? [...subproof(mm, a, a + k, whole), { start: a + k, end: b }] : [...subproof(mm - k, a + k, b, false), { start: a, end: a + k }];
  };
  return subproof(m, 0, n, true);
}

/** Tree hashes of ranges over an in-memory list of leaf hashes (tests, small exports). */
function hashesOf(ranges: readonly LeafRange[], leaves: readonly Buffer[]): Buffer[] {
  return ranges.map((range) => rootOfLeaves(leaves.slice(range.start, range.end)));
}

export function inclusionProof(leafIndex: number, leaves: readonly Buffer[]): Buffer[] {
  return hashesOf(inclusionProofRanges(leafIndex, leaves.length), leaves);
}

export function consistencyProof(m: number, leaves: readonly Buffer[]): Buffer[] {
  return hashesOf(consistencyProofRanges(m, leaves.length), leaves);
}

/** RFC 9162 §2.1.3.2. */
export function verifyInclusion(leaf: Uint8Array, leafIndex: number, treeSize: number, proof: readonly Uint8Array[], root: Uint8Array): boolean {
  if (!Number.isSafeInteger(leafIndex) || !Number.isSafeInteger(treeSize) || leafIndex < 0 || leafIndex >= treeSize) return false;
  let fn = BigInt(leafIndex);
  let sn = BigInt(treeSize - 1);
  let r: Buffer = Buffer.from(leaf);
  for (const p of proof) {
    if (sn === 0n) return false;
    if ((fn & 1n) === 1n || fn === sn) {
      r = nodeHash(p, r);
      if ((fn & 1n) === 0n) {
        while ((fn & 1n) === 0n && fn !== 0n) {
          fn >>= 1n;
          sn >>= 1n;
        }
      }
    } else {
      r = nodeHash(r, p);
    }
    fn >>= 1n;
    sn >>= 1n;
  }
  return sn === 0n && r.equals(root);
}

/** RFC 9162 §2.1.4.2; equal sizes need an empty proof and equal roots. */
export function verifyConsistency(first: number, second: number, firstRoot: Uint8Array, secondRoot: Uint8Array, proof: readonly Uint8Array[]): boolean {
  if (!Number.isSafeInteger(first) || !Number.isSafeInteger(second) || first < 1 || first > second) return false;
  if (first === second) return proof.length === 0 && Buffer.from(firstRoot).equals(secondRoot);
  if (proof.length === 0) return false;
  const path: Uint8Array[] = isPowerOfTwo(first) ? [firstRoot, ...proof] : [...proof];
  let fn = BigInt(first - 1);
  let sn = BigInt(second - 1);
  while ((fn & 1n) === 1n) {
    fn >>= 1n;
    sn >>= 1n;
  }
  let fr: Buffer = Buffer.from(path[0]!);
  let sr: Buffer = Buffer.from(path[0]!);
  for (const c of path.slice(1)) {
    if (sn === 0n) return false;
    if ((fn & 1n) === 1n || fn === sn) {
      fr = nodeHash(c, fr);
      sr = nodeHash(c, sr);
      if ((fn & 1n) === 0n) {
        while ((fn & 1n) === 0n && fn !== 0n) {
          fn >>= 1n;
          sn >>= 1n;
        }
      }
    } else {
      sr = nodeHash(sr, c);
    }
    fn >>= 1n;
    sn >>= 1n;
  }
  return fr.equals(firstRoot) && sr.equals(secondRoot) && sn === 0n;
}

export interface AccumulatorState {
  size: number;
  /** The roots of the perfect subtrees of the binary decomposition of `size`, largest (leftmost) first, hex. */
  peaks: string[];
}

/**
 * A compact range over the leaves so far (Trillian's compact.Range): one hash per set bit of the size. Appending a
 * leaf returns every perfect subtree it completes, so a store can keep them; the root of everything so far is a fold
 * of the peaks.
 */
export class MerkleAccumulator {
  #size: number;
  #peaks: Buffer[];

  constructor(state?: AccumulatorState) {
    this.#size = state?.size ?? 0;
    this.#peaks = (state?.peaks ?? []).map((peak) => Buffer.from(peak, 'hex'));
    let bits = 0;
    for (let rest = this.#size; rest > 0; rest = Math.floor(rest / 2)) bits += rest % 2;
    if (bits !== this.#peaks.length || this.#peaks.some((peak) => peak.length !== 32)) {
      throw new MerkleArgumentError(`a compact range of ${this.#size} leaves has ${bits} peaks of 32 bytes, got ${this.#peaks.length}`);
    }
  }

  get size(): number {
    return this.#size;
  }

  push(leaf: Buffer): NodeWithHash[] {
    const completed: NodeWithHash[] = [{ level: 0, index: this.#size, hash: leaf }];
    let hash = leaf;
    let index = this.#size;
    let level = 0;
    // Every trailing one bit of the old size is a peak of the same level as the new node: merge them.
    for (let rest = this.#size; rest % 2 === 1; rest = Math.floor(rest / 2)) {
      hash = nodeHash(this.#peaks.pop()!, hash);
      level += 1;
      index = Math.floor(index / 2);
      completed.push({ level, index, hash });
    }
    this.#peaks.push(hash);
    this.#size += 1;
    return completed;
  }

  root(): Buffer {
    if (this.#peaks.length === 0) return emptyRoot;
    let root = this.#peaks[this.#peaks.length - 1]!;
    for (let i = this.#peaks.length - 2; i >= 0; i--) root = nodeHash(this.#peaks[i]!, root);
    return root;
  }

  state(): AccumulatorState {
    return { size: this.#size, peaks: this.#peaks.map((peak) => peak.toString('hex')) };
  }
}
