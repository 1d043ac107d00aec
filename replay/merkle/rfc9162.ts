/**
 * The Merkle tree of RFC 9162 (Certificate Transparency 2.0), §2.1, over the event log: leaf hash
 * SHA-256(0x00 || entry), interior hash SHA-256(0x01 || left || right), a tree of n leaves split at the largest power
 * of two smaller than n.
 *
 * Guarantees:
 * - Proofs are described as *ranges of leaves* whose tree hashes form the proof (`inclusionProofRanges`,
 *   `consistencyProofRanges`). Every such range is a node of the RFC 9162 tree, so it is a short run of perfect
 *   subtrees (`perfectDecomposition`): a store that keeps perfect subtrees (tiles) answers any proof with one read.
 * - Verification is the RFC's own algorithms (§2.1.3.2, §2.1.4.2) step for step; it never throws on hostile input,
 *   it answers false.
 * - Every size and index is a safe integer (< 2^53), and the arithmetic is exact across that range (no 32-bit
 *   bitwise operators, no floating-point logarithm trusted without correction).
 * - Nothing here recurses with the size of the tree: two million leaves are a loop, not a call stack.
 *
 * node:crypto only: the offline verifier imports this and nothing else of the ledger.
 */
import * as crypto from 'node:crypto';

/** The errors of this file: every one is a caller's mistake, so none is worth retrying. */
export const merkleErrorCatalogue = {
  MERKLE_LEAF_OUT_OF_RANGE: { retryable: false, meaning: 'a leaf index that is not below the tree size (0 <= index < size)' },
  MERKLE_SIZES_OUT_OF_ORDER: { retryable: false, meaning: 'a consistency proof asked for sizes other than 1 <= m <= n' },
  MERKLE_NOT_A_SUBTREE: { retryable: false, meaning: 'a range of leaves that is no node of any RFC 9162 tree' },
  MERKLE_BAD_HASH: { retryable: false, meaning: 'a hash that is not 32 bytes' },
  MERKLE_BAD_STATE: { retryable: false, meaning: 'a compact range whose peaks do not fit its size' },
} as const satisfies Record<string, { retryable: boolean; meaning: string }>;

export type MerkleErrorCode = keyof typeof merkleErrorCatalogue;

/** A request the tree cannot answer (an index past the end, m > n, a range that is no subtree). */
export class MerkleArgumentError extends Error {
  override readonly name = 'MerkleArgumentError';
  readonly retryable = false;

  constructor(
    readonly code: MerkleErrorCode,
    message: string,
    /** The offending values, by name (`leafIndex`, `treeSize`, `m`, `n`, `start`, `end`, `size`, `length`). */
    readonly data: Readonly<Record<string, number>>,
  ) {
    super(message);
  }
}

const hashLength = 32;
const leafPrefix = Buffer.from([0x00]);
const nodePrefix = Buffer.from([0x01]);

/**
 * One-shot SHA-256 (`crypto.hash`, Node >= 20.12) where the runtime has it: per call it crosses into C++ once, where
 * `createHash().update().digest()` crosses four times, and on the small inputs of a tree that overhead is most of the
 * cost (measured on Node 20.20: a 300-byte leaf 1.2 to 1.5 times, a node 1.3 to 1.9 times as fast). Older Node 20
 * releases fall back to `createHash`. Inputs go through reused buffers: the hash is synchronous, so nothing can
 * overwrite them between the copy and the hash.
 */
const oneShot = (crypto as unknown as { hash?: (algorithm: string, data: Uint8Array, encoding: 'buffer') => Buffer }).hash;
/** Entries up to this size are copied after the prefix into one buffer; larger ones are streamed, never copied. */
const scratchLimit = 4096;
const leafScratch = Buffer.alloc(1 + scratchLimit);
const nodeScratch = Buffer.alloc(1 + 2 * hashLength);
nodeScratch[0] = 0x01;

/** RFC 9162 §2.1.1: the hash of a leaf, SHA-256(0x00 || entry). */
export function leafHash(entry: Uint8Array): Buffer {
  if (oneShot && entry.length <= scratchLimit) {
    leafScratch[0] = 0x00;
    leafScratch.set(entry, 1);
    return oneShot('sha256', leafScratch.subarray(0, 1 + entry.length), 'buffer');
  }
  return crypto.createHash('sha256').update(leafPrefix).update(entry).digest();
}

/** RFC 9162 §2.1.1: the hash of an interior node, SHA-256(0x01 || left || right). */
export function nodeHash(left: Uint8Array, right: Uint8Array): Buffer {
  if (oneShot && left.length === hashLength && right.length === hashLength) {
    nodeScratch.set(left, 1);
    nodeScratch.set(right, 1 + hashLength);
    return oneShot('sha256', nodeScratch, 'buffer');
  }
  return crypto.createHash('sha256').update(nodePrefix).update(left).update(right).digest();
}

/** MTH({}): the hash of the empty tree, SHA-256 of the empty string. Shared: do not write into it. */
export const emptyRoot: Buffer = crypto.createHash('sha256').digest();

/** A perfect subtree: the 2^level leaves [index × 2^level, (index + 1) × 2^level). */
export interface NodeRef {
  level: number;
  index: number;
}

export interface NodeWithHash extends NodeRef {
  hash: Buffer;
}

/** Leaves [start, end). */
export interface LeafRange {
  start: number;
  end: number;
}

// --- Exact integer arithmetic on safe integers -------------------------------------------------------------------

/** 2^⌊log2 n⌋ for a safe integer n >= 1. Math.log2 rounds up just below large powers of two, hence the correction. */
function highestPowerOfTwoIn(n: number): number {
  let power = 2 ** Math.floor(Math.log2(n));
  if (power > n) power /= 2;
  else if (power * 2 <= n) power *= 2;
  return power;
}

/** k of RFC 9162 §2.1.1: the largest power of two smaller than n (n >= 2). */
const splitOf = (n: number): number => highestPowerOfTwoIn(n - 1);

const isPowerOfTwo = (n: number): boolean => n >= 1 && highestPowerOfTwoIn(n) === n;

/** log2 of a power of two, counted (exact where a logarithm might not be). */
function levelOf(width: number): number {
  let level = 0;
  for (let w = width; w > 1; w /= 2) level += 1;
  return level;
}

/** The number of one bits of a safe integer. */
function onesIn(n: number): number {
  let ones = 0;
  for (let rest = n; rest > 0; rest = Math.floor(rest / 2)) ones += rest % 2;
  return ones;
}

const isIndex = (n: number): boolean => Number.isSafeInteger(n) && n >= 0;

const isHash = (bytes: Uint8Array | undefined): bytes is Uint8Array => bytes instanceof Uint8Array && bytes.length === hashLength;

const sameHash = (a: Uint8Array, b: Uint8Array): boolean => Buffer.compare(a, b) === 0;

/** A Buffer over the same memory (no copy) when a caller hands a plain Uint8Array. */
const asBuffer = (bytes: Uint8Array): Buffer => (Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength));

function requireHash(bytes: Uint8Array, what: string): void {
  const length = bytes instanceof Uint8Array ? bytes.length : -1;
  if (length !== hashLength) throw new MerkleArgumentError('MERKLE_BAD_HASH', `${what} is ${length < 0 ? 'not bytes' : `${length} bytes`}, not ${hashLength}`, { length });
}

// --- Trees over leaf hashes held in memory -----------------------------------------------------------------------

/**
 * MTH(D[start:end]) over leaf hashes in memory, as a compact range: the perfect subtrees of the binary decomposition
 * of the count, folded from the right, which is the RFC's split applied to the whole list. O(end - start) hashes,
 * O(log n) memory, no recursion.
 */
function rootOfSpan(leafHashes: readonly Uint8Array[], start: number, end: number): Buffer {
  if (end === start) return emptyRoot;
  const peaks: Buffer[] = [];
  for (let i = start; i < end; i++) {
    const leaf = leafHashes[i]!;
    requireHash(leaf, `leaf hash ${i}`);
    let hash = asBuffer(leaf);
    for (let count = i - start; count % 2 === 1; count = (count - 1) / 2) hash = nodeHash(peaks.pop()!, hash);
    peaks.push(hash);
  }
  let root = peaks[peaks.length - 1]!;
  for (let i = peaks.length - 2; i >= 0; i--) root = nodeHash(peaks[i]!, root);
  return root;
}

/** The reference MTH of RFC 9162 §2.1.1 over a list of leaf hashes (emptyRoot for none). */
export function rootOfLeaves(leafHashes: readonly Uint8Array[]): Buffer {
  return rootOfSpan(leafHashes, 0, leafHashes.length);
}

// --- Perfect subtrees --------------------------------------------------------------------------------------------

/**
 * Refuses a range that is not a node of an RFC 9162 tree. [start, end) is a node of some tree (and then of the tree
 * of `end` leaves) exactly when start is a multiple of the smallest power of two >= end - start: the root [0, n) is,
 * and the split keeps it true for both children.
 */
function requireSubtree(start: number, end: number): void {
  const ok = isIndex(start) && isIndex(end) && end > start && start % (isPowerOfTwo(end - start) ? end - start : 2 * highestPowerOfTwoIn(end - start)) === 0;
  if (!ok) {
    throw new MerkleArgumentError('MERKLE_NOT_A_SUBTREE', `leaves [${start}, ${end}) are not a subtree of an RFC 9162 tree (its start must be a multiple of the smallest power of two >= its width)`, { start, end });
  }
}

/**
 * The perfect subtrees that make up the subtree of leaves [start, end), left to right: one per one bit of the width,
 * largest first. Throws MERKLE_NOT_A_SUBTREE for a range that is no node of an RFC 9162 tree (every range the proof
 * functions here produce, every prefix [0, n) and every single leaf is one).
 */
export function perfectDecomposition(start: number, end: number): NodeRef[] {
  requireSubtree(start, end);
  const refs: NodeRef[] = [];
  let at = start;
  let width = highestPowerOfTwoIn(end - start);
  for (let level = levelOf(width); at < end; level -= 1, width /= 2) {
    if (end - at >= width) {
      refs.push({ level, index: at / width });
      at += width;
    }
  }
  return refs;
}

/** MTH(D[start:end]) for a subtree, from the hashes of its perfect subtrees (`perfectDecomposition`), right fold. */
export function rangeRoot(start: number, end: number, perfect: (ref: NodeRef) => Buffer): Buffer {
  const hashes = perfectDecomposition(start, end).map((ref) => perfect(ref));
  let root = hashes[hashes.length - 1]!;
  for (let i = hashes.length - 2; i >= 0; i--) root = nodeHash(hashes[i]!, root);
  return root;
}

// --- Proofs as ranges --------------------------------------------------------------------------------------------

/**
 * The ranges whose tree hashes are the audit path PATH(leafIndex, D[treeSize]) of RFC 9162 §2.1.3.1, in the proof's
 * order (the leaf's sibling first, the root's other child last).
 */
export function inclusionProofRanges(leafIndex: number, treeSize: number): LeafRange[] {
  if (!isIndex(leafIndex) || !isIndex(treeSize) || leafIndex >= treeSize) {
    throw new MerkleArgumentError('MERKLE_LEAF_OUT_OF_RANGE', `leaf index ${leafIndex} is not in a tree of ${treeSize} leaves (needs 0 <= index < size)`, { leafIndex, treeSize });
  }
  // Walking down from the root meets the siblings root side first; the proof lists them leaf side first.
  const siblings: LeafRange[] = [];
  let start = 0;
  let end = treeSize;
  while (end - start > 1) {
    const k = splitOf(end - start);
    if (leafIndex < start + k) {
      siblings.push({ start: start + k, end });
      end = start + k;
    } else {
      siblings.push({ start, end: start + k });
      start += k;
    }
  }
  return siblings.reverse();
}

/**
 * The ranges whose tree hashes are PROOF(m, D[n]) = SUBPROOF(m, D[n], true) of RFC 9162 §2.1.4.1, in the proof's
 * order. m == n gives the empty proof. m == 0 is refused: the RFC defines PROOF(m, D[n]) only for 0 < m (the empty
 * tree is a prefix of every tree, there is nothing to prove, and `verifyConsistency` answers false for it).
 */
export function consistencyProofRanges(m: number, n: number): LeafRange[] {
  if (!isIndex(m) || !isIndex(n) || m < 1 || m > n) {
    throw new MerkleArgumentError(
      'MERKLE_SIZES_OUT_OF_ORDER',
      m === 0 ? `no consistency proof from size 0 to size ${n}: a proof from the empty tree is meaningless (RFC 9162 defines PROOF(m, D[n]) for 0 < m)` : `no consistency proof from size ${m} to size ${n} (needs 1 <= m <= n)`,
      { m, n },
    );
  }
  // SUBPROOF recurses on one side and appends the other side's hash after it: walking down collects those hashes
  // root first, and the proof lists them deepest first. It stops at the subtree that ends at m (all of it old).
  const appended: LeafRange[] = [];
  let start = 0;
  let end = n;
  let whole = true;
  while (end !== m) {
    const k = splitOf(end - start);
    if (m - start <= k) {
      appended.push({ start: start + k, end });
      end = start + k;
    } else {
      appended.push({ start, end: start + k });
      start += k;
      whole = false;
    }
  }
  return [...(whole ? [] : [{ start, end }]), ...appended.reverse()];
}

/** The audit path of a leaf, over leaf hashes in memory (tests, exports): the tree hashes of `inclusionProofRanges`. */
export function inclusionProof(leafIndex: number, leafHashes: readonly Uint8Array[]): Buffer[] {
  return inclusionProofRanges(leafIndex, leafHashes.length).map((range) => rootOfSpan(leafHashes, range.start, range.end));
}

/** The consistency proof from size m to all the leaf hashes in memory: the tree hashes of `consistencyProofRanges`. */
export function consistencyProof(m: number, leafHashes: readonly Uint8Array[]): Buffer[] {
  return consistencyProofRanges(m, leafHashes.length).map((range) => rootOfSpan(leafHashes, range.start, range.end));
}

// --- Verification ------------------------------------------------------------------------------------------------

/**
 * RFC 9162 §2.1.3.2: whether `proof` shows the leaf hash at `leafIndex` in the tree of `treeSize` leaves whose hash is
 * `root`. Any hash that is not 32 bytes fails. The tree size is only as trustworthy as the root it comes with: take
 * both from a signed checkpoint, never from the party that sends the proof.
 */
export function verifyInclusion(leafHash: Uint8Array, leafIndex: number, treeSize: number, proof: readonly Uint8Array[], root: Uint8Array): boolean {
  // 1. leaf_index >= tree_size fails.
  if (!isIndex(leafIndex) || !isIndex(treeSize) || leafIndex >= treeSize || !isHash(leafHash) || !isHash(root)) return false;
  // 2., 3.
  let fn = leafIndex;
  let sn = treeSize - 1;
  let r: Uint8Array = leafHash;
  // 4.
  for (const p of proof) {
    if (sn === 0 || !isHash(p)) return false;
    if (fn % 2 === 1 || fn === sn) {
      r = nodeHash(p, r);
      while (fn % 2 === 0 && fn !== 0) {
        fn /= 2;
        sn = Math.floor(sn / 2);
      }
    } else {
      r = nodeHash(r, p);
    }
    fn = Math.floor(fn / 2);
    sn = Math.floor(sn / 2);
  }
  // 5.
  return sn === 0 && sameHash(r, root);
}

/**
 * RFC 9162 §2.1.4.2: whether `proof` shows the tree of `first` leaves with hash `firstRoot` is a prefix of the tree of
 * `second` leaves with hash `secondRoot`. Beyond the RFC's algorithm, which needs 0 < first < second:
 * - first == second holds with an empty proof and equal roots, and only then;
 * - first == 0 is false: a consistency proof from the empty tree is meaningless (the RFC defines none). Every tree
 *   extends the empty one, so a party holding only the empty tree has nothing to check: it trusts on first use.
 */
export function verifyConsistency(first: number, second: number, firstRoot: Uint8Array, secondRoot: Uint8Array, proof: readonly Uint8Array[]): boolean {
  if (!isIndex(first) || !isIndex(second) || first < 1 || first > second || !isHash(firstRoot) || !isHash(secondRoot)) return false;
  if (first === second) return proof.length === 0 && sameHash(firstRoot, secondRoot);
  // 1. An empty consistency_path fails.
  if (proof.length === 0) return false;
  // 2. If first is an exact power of 2, first_hash is prepended to the path.
  const prepended = isPowerOfTwo(first);
  const seed = prepended ? firstRoot : proof[0];
  if (!isHash(seed)) return false;
  // 3.
  let fn = first - 1;
  let sn = second - 1;
  // 4.
  while (fn % 2 === 1) {
    fn = (fn - 1) / 2;
    sn = Math.floor(sn / 2);
  }
  // 5.
  let fr: Uint8Array = seed;
  let sr: Uint8Array = seed;
  // 6. Each value after the first of the (possibly prepended) path.
  for (let i = prepended ? 0 : 1; i < proof.length; i++) {
    const c = proof[i];
    if (sn === 0 || !isHash(c)) return false;
    if (fn % 2 === 1 || fn === sn) {
      fr = nodeHash(c, fr);
      sr = nodeHash(c, sr);
      while (fn % 2 === 0 && fn !== 0) {
        fn /= 2;
        sn = Math.floor(sn / 2);
      }
    } else {
      sr = nodeHash(sr, c);
    }
    fn = Math.floor(fn / 2);
    sn = Math.floor(sn / 2);
  }
  // 7.
  return sn === 0 && sameHash(fr, firstRoot) && sameHash(sr, secondRoot);
}

// --- The compact range a follower keeps --------------------------------------------------------------------------

export interface AccumulatorState {
  size: number;
  /** The hashes of the perfect subtrees of the binary decomposition of `size`, largest (leftmost) first, hex. */
  peaks: string[];
}

/**
 * A compact range over the leaves appended so far (Trillian's compact.Range): one hash per one bit of the size.
 * Appending a leaf returns every perfect subtree it completes, so a follower can store them as tiles; the root of
 * everything so far is a fold of the peaks, O(log n). Its state is a few hashes: a follower that stores it with the
 * tiles it wrote, in the same transaction, resumes after a crash exactly where the tiles end.
 */
export class MerkleAccumulator {
  #size: number;
  readonly #peaks: Buffer[];

  /** An empty tree, or the tree a stored `state()` describes (its peaks are checked against its size). */
  constructor(state?: AccumulatorState) {
    const size = state?.size ?? 0;
    const peaks = state?.peaks ?? [];
    if (!isIndex(size)) throw new MerkleArgumentError('MERKLE_BAD_STATE', `a compact range's size is a safe integer >= 0, got ${size}`, { size });
    const expected = onesIn(size);
    if (expected !== peaks.length || peaks.some((peak) => typeof peak !== 'string' || !/^[0-9a-fA-F]{64}$/.test(peak))) {
      throw new MerkleArgumentError('MERKLE_BAD_STATE', `a compact range of ${size} leaves has ${expected} peaks of 32 bytes (64 hex digits), got ${peaks.length}`, {
        size,
        expected,
        peaks: peaks.length,
      });
    }
    this.#size = size;
    this.#peaks = peaks.map((peak) => Buffer.from(peak, 'hex'));
  }

  /** The number of leaves appended so far. */
  get size(): number {
    return this.#size;
  }

  /**
   * Appends a leaf hash. Returns the perfect subtrees this leaf completes: the leaf itself (level 0, index = its
   * position), then each parent it completes, up to the highest. The leaf's bytes are kept, not copied.
   */
  push(leafHash: Uint8Array): NodeWithHash[] {
    const completed: NodeWithHash[] = [];
    this.#append(leafHash, completed);
    return completed;
  }

  /** Appends a leaf hash, like `push`, without reporting the subtrees it completes (a verifier's loop). */
  add(leafHash: Uint8Array): void {
    this.#append(leafHash, undefined);
  }

  #append(leafHash: Uint8Array, completed: NodeWithHash[] | undefined): void {
    requireHash(leafHash, 'a leaf hash');
    if (this.#size >= Number.MAX_SAFE_INTEGER) throw new MerkleArgumentError('MERKLE_BAD_STATE', `a tree of ${this.#size} leaves cannot grow: sizes are safe integers`, { size: this.#size });
    let hash = asBuffer(leafHash);
    let level = 0;
    // At every level, the new node's index is the size of the tree counted in nodes of that level.
    let index = this.#size;
    completed?.push({ level, index, hash });
    // Each trailing one bit of the old size is a peak of the level the new node has reached: they merge.
    while (index % 2 === 1) {
      hash = nodeHash(this.#peaks.pop()!, hash);
      level += 1;
      index = (index - 1) / 2;
      completed?.push({ level, index, hash });
    }
    this.#peaks.push(hash);
    this.#size += 1;
  }

  /** MTH of every leaf appended so far (emptyRoot before the first). */
  root(): Buffer {
    if (this.#peaks.length === 0) return emptyRoot;
    let root = this.#peaks[this.#peaks.length - 1]!;
    for (let i = this.#peaks.length - 2; i >= 0; i--) root = nodeHash(this.#peaks[i]!, root);
    return root;
  }

  /** What to store to resume later: `new MerkleAccumulator(state)`. */
  state(): AccumulatorState {
    return { size: this.#size, peaks: this.#peaks.map((peak) => peak.toString('hex')) };
  }
}
