import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  consistencyProof,
  consistencyProofRanges,
  emptyRoot,
  inclusionProof,
  inclusionProofRanges,
  leafHash,
  MerkleAccumulator,
  MerkleArgumentError,
  nodeHash,
  perfectDecomposition,
  rangeRoot,
  rootOfLeaves,
  verifyConsistency,
  verifyInclusion,
  type LeafRange,
  type NodeRef,
} from '../../replay/merkle/rfc9162.js';

// --- Oracles: RFC 9162 §2.1 as written, recursive, with their own hashing -----------------------------------------

const sha256 = (...parts: Uint8Array[]): Buffer => createHash('sha256').update(Buffer.concat(parts)).digest();
const oracleLeaf = (entry: Uint8Array): Buffer => sha256(Buffer.from([0]), entry);
const oracleNode = (left: Uint8Array, right: Uint8Array): Buffer => sha256(Buffer.from([1]), left, right);

/** k: the largest power of two smaller than n. */
function split(n: number): number {
  let k = 1;
  while (k * 2 < n) k *= 2;
  return k;
}

/** MTH(D[n]), §2.1.1. */
function mth(leaves: readonly Buffer[]): Buffer {
  if (leaves.length === 0) return sha256();
  if (leaves.length === 1) return leaves[0]!;
  const k = split(leaves.length);
  return oracleNode(mth(leaves.slice(0, k)), mth(leaves.slice(k)));
}

/** PATH(m, D[n]), §2.1.3.1. */
function path(m: number, leaves: readonly Buffer[]): Buffer[] {
  if (leaves.length <= 1) return [];
  const k = split(leaves.length);
  return m < k ? [...path(m, leaves.slice(0, k)), mth(leaves.slice(k))] : [...path(m - k, leaves.slice(k)), mth(leaves.slice(0, k))];
}

/** SUBPROOF(m, D[n], b), §2.1.4.1; PROOF(m, D[n]) = SUBPROOF(m, D[n], true). */
function subproof(m: number, leaves: readonly Buffer[], b: boolean): Buffer[] {
  if (m === leaves.length) return b ? [] : [mth(leaves)];
  const k = split(leaves.length);
  return m <= k ? [...subproof(m, leaves.slice(0, k), b), mth(leaves.slice(k))] : [...subproof(m - k, leaves.slice(k), false), mth(leaves.slice(0, k))];
}

/** Whether [start, end) is a node of the RFC tree of `size` leaves, by walking the tree. */
function isNodeOfTree(start: number, end: number, size: number): boolean {
  const walk = (a: number, b: number): boolean => {
    if (a === start && b === end) return true;
    if (b - a <= 1 || start < a || end > b) return false;
    const k = split(b - a);
    return walk(a, a + k) || walk(a + k, b);
  };
  return walk(0, size);
}

/** PATH as ranges, with BigInt arithmetic: an independent check of the exact arithmetic at any safe size. */
function pathRangesBig(m: bigint, size: bigint): Array<[bigint, bigint]> {
  const out: Array<[bigint, bigint]> = [];
  const walk = (a: bigint, b: bigint): void => {
    if (b - a <= 1n) return;
    let k = 1n;
    while (k * 2n < b - a) k *= 2n;
    if (m < a + k) {
      walk(a, a + k);
      out.push([a + k, b]);
    } else {
      walk(a + k, b);
      out.push([a, a + k]);
    }
  };
  walk(0n, size);
  return out;
}

// --- Helpers -----------------------------------------------------------------------------------------------------

const leavesOf = (n: number, salt = 'a'): Buffer[] => Array.from({ length: n }, (_, i) => leafHash(Buffer.from(`event ${i} of history ${salt}`)));

/** Every perfect subtree the accumulator reports, by `level/index`: what the follower writes to the tiles. */
function storedSubtrees(leaves: readonly Buffer[]): (ref: NodeRef) => Buffer {
  const nodes = new Map<string, Buffer>();
  const accumulator = new MerkleAccumulator();
  for (const leaf of leaves) for (const node of accumulator.push(leaf)) nodes.set(`${node.level}/${node.index}`, node.hash);
  return (ref) => {
    const hash = nodes.get(`${ref.level}/${ref.index}`);
    if (!hash) throw new Error(`the store has no subtree ${ref.level}/${ref.index}`);
    return hash;
  };
}

const fromStore = (ranges: readonly LeafRange[], perfect: (ref: NodeRef) => Buffer): Buffer[] => ranges.map((r) => rangeRoot(r.start, r.end, perfect));

const flip = (hash: Uint8Array, bit = 0): Buffer => {
  const copy = Buffer.from(hash);
  copy[bit >> 3] = copy[bit >> 3]! ^ (1 << (bit & 7));
  return copy;
};

const hex = (hashes: readonly Uint8Array[]): string[] => hashes.map((h) => Buffer.from(h).toString('hex'));

/** A tree whose leaves all have one hash: every perfect subtree of a level has the same hash, so trees of any safe size are cheap. */
function uniformTree(leaf: Buffer): (ref: NodeRef) => Buffer {
  const levels = [leaf];
  return (ref) => {
    while (levels.length <= ref.level) levels.push(nodeHash(levels[levels.length - 1]!, levels[levels.length - 1]!));
    return levels[ref.level]!;
  };
}

function caught(run: () => unknown): MerkleArgumentError {
  try {
    run();
  } catch (error) {
    if (error instanceof MerkleArgumentError) return error;
    throw error;
  }
  throw new Error('expected a MerkleArgumentError');
}

// --- Known answers -----------------------------------------------------------------------------------------------

/**
 * The reference tree of RFC 6962 implementations: transparency-dev/merkle, testonly/constants.go (LeafInputs,
 * NodeHashes, RootHashes, CompactTrees), the vectors Trillian and certificate-transparency-go have carried since the
 * C++ reference log. Proof vectors: transparency-dev/merkle, proof/verify_test.go (inclusionProofs, consistencyProofs;
 * leaf numbers there are 1-based).
 */
const reference = {
  leafInputs: ['', '00', '10', '2021', '3031', '40414243', '5051525354555657', '606162636465666768696a6b6c6d6e6f'],
  nodeHashes: [
    [
      '6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d',
      '96a296d224f285c67bee93c30f8a309157f0daa35dc5b87e410b78630a09cfc7',
      '0298d122906dcfc10892cb53a73992fc5b9f493ea4c9badb27b791b4127a7fe7',
      '07506a85fd9dd2f120eb694f86011e5bb4662e5c415a62917033d4a9624487e7',
      'bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b',
      '4271a26be0d8a84f0bd54c8c302e7cb3a3b5d1fa6780a40bcce2873477dab658',
      'b08693ec2e721597130641e8211e7eedccb4c26413963eee6c1e2ed16ffb1a5f',
      '46f6ffadd3d06a09ff3c5860d2755c8b9819db7df44251788c7d8e3180de8eb1',
    ],
    [
      'fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125',
      '5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e',
      '0ebc5d3437fbe2db158b9f126a1d118e308181031d0a949f8dededebc558ef6a',
      'ca854ea128ed050b41b35ffc1b87b8eb2bde461e9e3b5596ece6b9d5975a0ae0',
    ],
    ['d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7', '6b47aaf29ee3c2af9af889bc1fb9254dabd31177f16232dd6aab035ca39bf6e4'],
    ['5dc9da79a70659a9ad559cb701ded9a2ab9d823aad2f4960cfe370eff4604328'],
  ],
  rootHashes: [
    'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855',
    '6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d',
    'fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125',
    'aeb6bcfe274b70a14fb067a5e5578264db0fa9b51af5e0ba159158f329e06e77',
    'd37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7',
    '4e3bbb1f7b478dcfe71fb631631519a3bca12c9aefca1612bfce4c13a86264d4',
    '76e67dadbcdf1e10e1b74ddc608abd2f98dfb16fbce75277b5232a127f2087ef',
    'ddb89be403809e325750d3d263cd78929c2942b7942a34b77e122c9594a74c8c',
    '5dc9da79a70659a9ad559cb701ded9a2ab9d823aad2f4960cfe370eff4604328',
  ],
  /** CompactTrees(): the peaks of each prefix, as [level, index] of nodeHashes. */
  compactTrees: [[], [[0, 0]], [[1, 0]], [[1, 0], [0, 2]], [[2, 0]], [[2, 0], [0, 4]], [[2, 0], [1, 2]], [[2, 0], [1, 2], [0, 6]], [[3, 0]]],
  inclusionProofs: [
    { leaf: 1, size: 1, proof: [] },
    { leaf: 1, size: 8, proof: ['96a296d224f285c67bee93c30f8a309157f0daa35dc5b87e410b78630a09cfc7', '5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e', '6b47aaf29ee3c2af9af889bc1fb9254dabd31177f16232dd6aab035ca39bf6e4'] },
    { leaf: 6, size: 8, proof: ['bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b', 'ca854ea128ed050b41b35ffc1b87b8eb2bde461e9e3b5596ece6b9d5975a0ae0', 'd37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7'] },
    { leaf: 3, size: 3, proof: ['fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125'] },
    { leaf: 2, size: 5, proof: ['6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d', '5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e', 'bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b'] },
  ],
  consistencyProofs: [
    { size1: 1, size2: 1, proof: [] },
    { size1: 1, size2: 8, proof: ['96a296d224f285c67bee93c30f8a309157f0daa35dc5b87e410b78630a09cfc7', '5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e', '6b47aaf29ee3c2af9af889bc1fb9254dabd31177f16232dd6aab035ca39bf6e4'] },
    { size1: 6, size2: 8, proof: ['0ebc5d3437fbe2db158b9f126a1d118e308181031d0a949f8dededebc558ef6a', 'ca854ea128ed050b41b35ffc1b87b8eb2bde461e9e3b5596ece6b9d5975a0ae0', 'd37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7'] },
    { size1: 2, size2: 5, proof: ['5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e', 'bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b'] },
    { size1: 6, size2: 7, proof: ['0ebc5d3437fbe2db158b9f126a1d118e308181031d0a949f8dededebc558ef6a', 'b08693ec2e721597130641e8211e7eedccb4c26413963eee6c1e2ed16ffb1a5f', 'd37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7'] },
  ],
};

const referenceLeaves = reference.leafInputs.map((input) => leafHash(Buffer.from(input, 'hex')));
const referenceRoot = (size: number): Buffer => Buffer.from(reference.rootHashes[size]!, 'hex');

describe('the RFC 9162 Merkle tree agrees with the published reference vectors', () => {
  it('leaf hashes, interior hashes and the root of every prefix of the reference tree are the published ones', () => {
    expect(emptyRoot.toString('hex')).toBe(reference.rootHashes[0]);
    expect(hex(referenceLeaves)).toEqual(reference.nodeHashes[0]);
    expect(nodeHash(referenceLeaves[0]!, referenceLeaves[1]!).toString('hex')).toBe(reference.nodeHashes[1]![0]);
    const accumulator = new MerkleAccumulator();
    expect(accumulator.root().toString('hex')).toBe(reference.rootHashes[0]);
    referenceLeaves.forEach((leaf, i) => {
      accumulator.push(leaf);
      expect(accumulator.root().toString('hex')).toBe(reference.rootHashes[i + 1]);
      expect(rootOfLeaves(referenceLeaves.slice(0, i + 1)).toString('hex')).toBe(reference.rootHashes[i + 1]);
      expect(accumulator.state().peaks).toEqual(reference.compactTrees[i + 1]!.map(([level, index]) => reference.nodeHashes[level!]![index!]));
    });
    expect(rootOfLeaves([]).toString('hex')).toBe(reference.rootHashes[0]);
  });

  it('the accumulator reports every perfect subtree of the reference tree once, with its published hash', () => {
    const accumulator = new MerkleAccumulator();
    const reported = referenceLeaves.flatMap((leaf) => accumulator.push(leaf));
    const expected = reference.nodeHashes.flatMap((level, l) => level.map((hash, index) => ({ level: l, index, hash })));
    expect(reported.map((node) => ({ ...node, hash: node.hash.toString('hex') })).sort((a, b) => a.level - b.level || a.index - b.index)).toEqual(expected);
  });

  it('inclusion and consistency proofs of the reference tree are the published ones, from memory and from stored subtrees', () => {
    for (const vector of reference.inclusionProofs) {
      const leaves = referenceLeaves.slice(0, vector.size);
      const index = vector.leaf - 1;
      expect(hex(inclusionProof(index, leaves))).toEqual(vector.proof);
      expect(hex(fromStore(inclusionProofRanges(index, vector.size), storedSubtrees(leaves)))).toEqual(vector.proof);
      expect(verifyInclusion(leaves[index]!, index, vector.size, vector.proof.map((h) => Buffer.from(h, 'hex')), referenceRoot(vector.size))).toBe(true);
    }
    for (const vector of reference.consistencyProofs) {
      const leaves = referenceLeaves.slice(0, vector.size2);
      expect(hex(consistencyProof(vector.size1, leaves))).toEqual(vector.proof);
      expect(hex(fromStore(consistencyProofRanges(vector.size1, vector.size2), storedSubtrees(leaves)))).toEqual(vector.proof);
      expect(verifyConsistency(vector.size1, vector.size2, referenceRoot(vector.size1), referenceRoot(vector.size2), vector.proof.map((h) => Buffer.from(h, 'hex')))).toBe(true);
    }
  });
});

// --- Properties --------------------------------------------------------------------------------------------------

describe('the RFC 9162 Merkle tree, for all trees up to 300 leaves', () => {
  it('the accumulator root is the tree hash of every prefix, and a follower resumed from its state continues identically', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 300 }).chain((n) => fc.tuple(fc.constant(n), fc.integer({ min: 0, max: n }))), ([n, cut]) => {
        const leaves = leavesOf(n);
        const straight = new MerkleAccumulator();
        const first = new MerkleAccumulator();
        for (let i = 0; i < cut; i++) first.push(leaves[i]!);
        const resumed = new MerkleAccumulator(JSON.parse(JSON.stringify(first.state())) as ReturnType<MerkleAccumulator['state']>);
        expect(resumed.size).toBe(cut);
        leaves.forEach((leaf, i) => {
          const reported = straight.push(leaf);
          if (i >= cut) expect(hex(resumed.push(leaf).map((node) => node.hash))).toEqual(hex(reported.map((node) => node.hash)));
          expect(straight.root().equals(rootOfLeaves(leaves.slice(0, i + 1)))).toBe(true);
        });
        expect(straight.root().equals(mth(leaves))).toBe(true);
        expect(resumed.root().equals(mth(leaves))).toBe(true);
        expect(resumed.state()).toEqual(straight.state());
      }),
      { numRuns: 40 },
    );
  });

  it('the accumulator reports each perfect subtree exactly once, when its last leaf arrives, with its tree hash', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 300 }), (n) => {
        const leaves = leavesOf(n);
        const accumulator = new MerkleAccumulator();
        const seen = new Set<string>();
        leaves.forEach((leaf, position) => {
          for (const node of accumulator.push(leaf)) {
            const width = 2 ** node.level;
            expect((node.index + 1) * width - 1).toBe(position);
            expect(seen.has(`${node.level}/${node.index}`)).toBe(false);
            seen.add(`${node.level}/${node.index}`);
            expect(node.hash.equals(mth(leaves.slice(node.index * width, (node.index + 1) * width)))).toBe(true);
          }
        });
        let perfectSubtrees = 0;
        for (let width = 1; width <= n; width *= 2) perfectSubtrees += Math.floor(n / width);
        expect(seen.size).toBe(perfectSubtrees);
      }),
      { numRuns: 40 },
    );
  });

  it('proofs read from stored perfect subtrees equal the in-memory proofs and the RFC definitions, and verify', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 300 }).chain((n) => fc.tuple(fc.constant(n), fc.integer({ min: 0, max: n - 1 }), fc.integer({ min: 1, max: n }))), ([n, index, m]) => {
        const leaves = leavesOf(n);
        const perfect = storedSubtrees(leaves);
        const root = rangeRoot(0, n, perfect);
        expect(root.equals(mth(leaves))).toBe(true);

        const inclusion = fromStore(inclusionProofRanges(index, n), perfect);
        expect(hex(inclusion)).toEqual(hex(inclusionProof(index, leaves)));
        expect(hex(inclusion)).toEqual(hex(path(index, leaves)));
        expect(verifyInclusion(leaves[index]!, index, n, inclusion, root)).toBe(true);

        const consistency = fromStore(consistencyProofRanges(m, n), perfect);
        expect(hex(consistency)).toEqual(hex(consistencyProof(m, leaves)));
        expect(hex(consistency)).toEqual(hex(subproof(m, leaves, true)));
        expect(verifyConsistency(m, n, rangeRoot(0, m, perfect), root, consistency)).toBe(true);
      }),
      { numRuns: 300 },
    );
  });

  it('an inclusion proof fails for an altered leaf, root or proof hash, any other index, another size, or a proof cut short or padded', () => {
    fc.assert(
      fc.property(fc.integer({ min: 2, max: 200 }).chain((n) => fc.tuple(fc.constant(n), fc.integer({ min: 0, max: n - 1 }), fc.integer({ min: 1, max: 2 * n }), fc.nat(255))), ([n, index, otherSize, bit]) => {
        const all = leavesOf(2 * n);
        const leaves = all.slice(0, n);
        const leaf = leaves[index]!;
        const root = mth(leaves);
        const proof = inclusionProof(index, leaves);
        expect(verifyInclusion(leaf, index, n, proof, root)).toBe(true);

        expect(verifyInclusion(flip(leaf, bit), index, n, proof, root)).toBe(false);
        expect(verifyInclusion(leaf, index, n, proof, flip(root, bit))).toBe(false);
        proof.forEach((_, at) => expect(verifyInclusion(leaf, index, n, proof.map((h, i) => (i === at ? flip(h, bit) : h)), root)).toBe(false));
        for (let other = 0; other < n; other++) if (other !== index) expect(verifyInclusion(leaf, other, n, proof, root)).toBe(false);
        // Another size, with the root of the tree of that size: the proof of this tree does not hold there.
        if (otherSize !== n && otherSize > index) expect(verifyInclusion(leaf, index, otherSize, proof, mth(all.slice(0, otherSize)))).toBe(false);
        expect(verifyInclusion(leaf, index, index, proof, root)).toBe(false);
        // A tree twice as large is a level deeper: this proof, one hash short for it, fails even against this root.
        expect(verifyInclusion(leaf, index, 2 * n, proof, root)).toBe(false);
        if (proof.length > 0) expect(verifyInclusion(leaf, index, n, proof.slice(0, -1), root)).toBe(false);
        expect(verifyInclusion(leaf, index, n, [...proof, root], root)).toBe(false);
        expect(verifyInclusion(leaf, index, n, [root, ...proof], root)).toBe(false);
      }),
      { numRuns: 150 },
    );
  });

  it('a consistency proof fails for an altered root or proof hash, another size at either end, a forked log, or a proof cut short or padded', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 2, max: 200 }).chain((n) => fc.tuple(fc.constant(n), fc.integer({ min: 1, max: n - 1 }), fc.integer({ min: 1, max: n }), fc.integer({ min: 1, max: 2 * n }), fc.nat(255))),
        ([n, m, otherM, otherN, bit]) => {
          const all = leavesOf(2 * n);
          const leaves = all.slice(0, n);
          const oldRoot = mth(leaves.slice(0, m));
          const newRoot = mth(leaves);
          const proof = consistencyProof(m, leaves);
          expect(verifyConsistency(m, n, oldRoot, newRoot, proof)).toBe(true);

          expect(verifyConsistency(m, n, flip(oldRoot, bit), newRoot, proof)).toBe(false);
          expect(verifyConsistency(m, n, oldRoot, flip(newRoot, bit), proof)).toBe(false);
          expect(verifyConsistency(m, n, newRoot, oldRoot, proof)).toBe(false);
          proof.forEach((_, at) => expect(verifyConsistency(m, n, oldRoot, newRoot, proof.map((h, i) => (i === at ? flip(h, bit) : h)))).toBe(false));
          // Other sizes, each with the true root of that size: this proof is not theirs.
          if (otherM !== m) expect(verifyConsistency(otherM, n, mth(leaves.slice(0, otherM)), newRoot, proof)).toBe(false);
          if (otherN !== n && otherN >= m) expect(verifyConsistency(m, otherN, oldRoot, mth(all.slice(0, otherN)), proof)).toBe(false);
          expect(verifyConsistency(m, 2 * n, oldRoot, newRoot, proof)).toBe(false);
          expect(verifyConsistency(m, n, oldRoot, newRoot, [])).toBe(false);
          expect(verifyConsistency(m, n, oldRoot, newRoot, proof.slice(0, -1))).toBe(false);
          expect(verifyConsistency(m, n, oldRoot, newRoot, [...proof, newRoot])).toBe(false);
          expect(verifyConsistency(m, n, oldRoot, newRoot, [oldRoot, ...proof])).toBe(false);
          // A fork: one of the first m leaves rewritten, the rest appended as before. Its own honest proof fails.
          const forked = leaves.map((leaf, i) => (i === m - 1 ? leafHash(Buffer.from('rewritten')) : leaf));
          expect(verifyConsistency(m, n, oldRoot, mth(forked), consistencyProof(m, forked))).toBe(false);
        },
      ),
      { numRuns: 150 },
    );
  });

  it('perfectDecomposition accepts exactly the nodes of RFC 9162 trees and splits each into aligned perfect subtrees, largest first', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 600 }).chain((end) => fc.tuple(fc.integer({ min: 0, max: end - 1 }), fc.constant(end))), ([start, end]) => {
        if (!isNodeOfTree(start, end, end)) {
          expect(caught(() => perfectDecomposition(start, end)).code).toBe('MERKLE_NOT_A_SUBTREE');
          return;
        }
        const refs = perfectDecomposition(start, end);
        let at = start;
        refs.forEach((ref, i) => {
          expect(ref.index * 2 ** ref.level).toBe(at);
          if (i > 0) expect(ref.level).toBeLessThan(refs[i - 1]!.level);
          at += 2 ** ref.level;
        });
        expect(at).toBe(end);
      }),
      { numRuns: 2000 },
    );
  });
});

// --- Sizes and edges ---------------------------------------------------------------------------------------------

describe('the RFC 9162 Merkle tree at its edges', () => {
  it('proof ranges are exact for trees far beyond 2^32 leaves, up to the largest safe integer', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 1n, max: BigInt(Number.MAX_SAFE_INTEGER) }).chain((size) => fc.tuple(fc.constant(size), fc.bigInt({ min: 0n, max: size - 1n }))), ([size, index]) => {
        const ranges = inclusionProofRanges(Number(index), Number(size)).map((r): [bigint, bigint] => [BigInt(r.start), BigInt(r.end)]);
        expect(ranges).toEqual(pathRangesBig(index, size));
      }),
      { numRuns: 500 },
    );
    const leaf = leafHash(Buffer.from('the same event'));
    const perfect = uniformTree(leaf);
    for (const n of [2 ** 32 + 1, 2 ** 40 + 12_345, 2 ** 52 + 3, Number.MAX_SAFE_INTEGER]) {
      const root = rangeRoot(0, n, perfect);
      for (const index of [0, n - 1, Math.floor(n / 3)]) {
        expect(verifyInclusion(leaf, index, n, fromStore(inclusionProofRanges(index, n), perfect), root)).toBe(true);
      }
      for (const m of [1, n - 1, 2 ** 31 + 7, Math.floor(n / 2)]) {
        expect(verifyConsistency(m, n, rangeRoot(0, m, perfect), root, fromStore(consistencyProofRanges(m, n), perfect))).toBe(true);
      }
      expect(verifyInclusion(leaf, 0, n - 1, fromStore(inclusionProofRanges(0, n), perfect), rangeRoot(0, n - 1, perfect))).toBe(false);
    }
    expect(perfectDecomposition(0, Number.MAX_SAFE_INTEGER)).toHaveLength(53);
  });

  it('rootOfLeaves folds two million leaves in a loop, and agrees with the perfect subtrees of the same tree', () => {
    const leaf = leafHash(Buffer.from('the same event'));
    const n = 2_000_003;
    expect(rootOfLeaves(new Array<Buffer>(n).fill(leaf)).equals(rangeRoot(0, n, uniformTree(leaf)))).toBe(true);
  });

  it('a proof does not bind the tree size on its own: the size must come from the signed checkpoint with the root', () => {
    // Leaf 0 of a tree of 5 has the same shape of path as leaf 0 of a tree of 6 (three right siblings), so the RFC
    // algorithm accepts the size 6 against the root of 5. Against the root of the tree of 6 it fails.
    const leaves = leavesOf(6);
    const proof = inclusionProof(0, leaves.slice(0, 5));
    expect(verifyInclusion(leaves[0]!, 0, 6, proof, mth(leaves.slice(0, 5)))).toBe(true);
    expect(verifyInclusion(leaves[0]!, 0, 6, proof, mth(leaves))).toBe(false);
  });

  it('from m to m the proof is empty and the roots must be equal; from the empty tree there is no proof at all', () => {
    const leaves = leavesOf(5);
    const root = mth(leaves);
    expect(consistencyProofRanges(5, 5)).toEqual([]);
    expect(consistencyProof(5, leaves)).toEqual([]);
    expect(verifyConsistency(5, 5, root, root, [])).toBe(true);
    expect(verifyConsistency(5, 5, root, mth(leaves.slice(0, 4)), [])).toBe(false);
    expect(verifyConsistency(5, 5, root, root, [root])).toBe(false);
    // RFC 9162 defines PROOF(m, D[n]) for 0 < m: a proof from size 0 is meaningless, and refused both ways.
    const fromEmpty = caught(() => consistencyProofRanges(0, 5));
    expect(fromEmpty.code).toBe('MERKLE_SIZES_OUT_OF_ORDER');
    expect(fromEmpty.message).toMatch(/from size 0 to size 5/);
    expect(verifyConsistency(0, 5, emptyRoot, root, [])).toBe(false);
    expect(verifyConsistency(0, 0, emptyRoot, emptyRoot, [])).toBe(false);
  });

  it('requests the tree cannot answer are refused by code, with the offending values', () => {
    const beyond = caught(() => inclusionProofRanges(5, 5));
    expect(beyond).toMatchObject({ code: 'MERKLE_LEAF_OUT_OF_RANGE', data: { leafIndex: 5, treeSize: 5 }, retryable: false });
    expect(beyond.message).toMatch(/leaf index 5 is not in a tree of 5 leaves/);
    expect(caught(() => inclusionProofRanges(-1, 5)).code).toBe('MERKLE_LEAF_OUT_OF_RANGE');
    expect(caught(() => inclusionProofRanges(1.5, 5)).code).toBe('MERKLE_LEAF_OUT_OF_RANGE');
    expect(caught(() => inclusionProof(0, [])).code).toBe('MERKLE_LEAF_OUT_OF_RANGE');
    const backwards = caught(() => consistencyProofRanges(6, 5));
    expect(backwards).toMatchObject({ code: 'MERKLE_SIZES_OUT_OF_ORDER', data: { m: 6, n: 5 } });
    expect(backwards.message).toMatch(/from size 6 to size 5/);
    const notSubtree = caught(() => perfectDecomposition(1, 3));
    expect(notSubtree).toMatchObject({ code: 'MERKLE_NOT_A_SUBTREE', data: { start: 1, end: 3 } });
    expect(notSubtree.message).toMatch(/\[1, 3\)/);
    expect(caught(() => perfectDecomposition(2, 2)).code).toBe('MERKLE_NOT_A_SUBTREE');
    expect(caught(() => rangeRoot(2, 5, () => emptyRoot)).code).toBe('MERKLE_NOT_A_SUBTREE');
    expect(caught(() => new MerkleAccumulator({ size: 3, peaks: [emptyRoot.toString('hex')] }))).toMatchObject({ code: 'MERKLE_BAD_STATE', data: { size: 3, expected: 2, peaks: 1 } });
    expect(caught(() => new MerkleAccumulator({ size: 1, peaks: ['zz'.repeat(32)] })).code).toBe('MERKLE_BAD_STATE');
    expect(caught(() => new MerkleAccumulator({ size: -1, peaks: [] })).code).toBe('MERKLE_BAD_STATE');
    expect(caught(() => new MerkleAccumulator().push(Buffer.alloc(31)))).toMatchObject({ code: 'MERKLE_BAD_HASH', data: { length: 31 } });
    expect(caught(() => rootOfLeaves([emptyRoot, Buffer.alloc(33)])).code).toBe('MERKLE_BAD_HASH');
  });

  it('the verifiers answer false, never throw, for hostile input', () => {
    const leaves = leavesOf(8);
    const root = mth(leaves);
    const proof = inclusionProof(3, leaves);
    for (const [index, size] of [[-1, 8], [8, 8], [Number.NaN, 8], [3, Number.POSITIVE_INFINITY], [3, 2 ** 60], [0.5, 8]] as const) {
      expect(verifyInclusion(leaves[3]!, index, size, proof, root)).toBe(false);
    }
    expect(verifyInclusion(leaves[3]!.subarray(0, 31), 3, 8, proof, root)).toBe(false);
    expect(verifyInclusion(leaves[3]!, 3, 8, proof, root.subarray(1))).toBe(false);
    // Hashes of other lengths could be spliced into a node's input (64 bytes are both children of a node): refused.
    expect(verifyInclusion(Buffer.alloc(0), 0, 2, [Buffer.concat([leaves[0]!, leaves[1]!])], mth(leaves.slice(0, 2)))).toBe(false);
    expect(verifyInclusion(leaves[3]!, 3, 8, [Buffer.concat([proof[0]!, proof[1]!]), proof[2]!], root)).toBe(false);
    expect(verifyInclusion(leaves[3]!, 3, 8, new Array<Buffer>(100_000).fill(root), root)).toBe(false);
    expect(verifyConsistency(3, 8, mth(leaves.slice(0, 3)), root, new Array<Buffer>(100_000).fill(root))).toBe(false);
    expect(verifyConsistency(3, 2, root, root, [root])).toBe(false);
    expect(verifyConsistency(3, 8, mth(leaves.slice(0, 3)), root, [Buffer.alloc(0), ...consistencyProof(3, leaves)])).toBe(false);
  });

  it('a leaf hash is SHA-256 of 0x00 and the entry, whatever its length; a node hash is SHA-256 of 0x01 and both children', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 10_000 }), fc.uint8Array({ minLength: 32, maxLength: 32 }), fc.uint8Array({ minLength: 32, maxLength: 32 }), (entry, left, right) => {
        expect(leafHash(entry).equals(oracleLeaf(entry))).toBe(true);
        expect(nodeHash(left, right).equals(oracleNode(left, right))).toBe(true);
      }),
      { numRuns: 200 },
    );
    // Interleaved calls do not disturb each other (the hashing reuses buffers).
    const a = leafHash(Buffer.from('a'));
    const b = nodeHash(a, a);
    expect(a.equals(oracleLeaf(Buffer.from('a')))).toBe(true);
    expect(b.equals(oracleNode(a, a))).toBe(true);
  });
});
