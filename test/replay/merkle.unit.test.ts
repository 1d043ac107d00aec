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
  nodeHash,
  perfectDecomposition,
  rangeRoot,
  rootOfLeaves,
  verifyConsistency,
  verifyInclusion,
  type NodeRef,
} from '../../replay/merkle/rfc9162.js';

/** RFC 9162's definition, recursively, straight from §2.1.1: the oracle the fast implementations are held to. */
function mth(leaves: readonly Buffer[]): Buffer {
  if (leaves.length === 0) return createHash('sha256').digest();
  if (leaves.length === 1) return leaves[0]!;
  let k = 1;
  while (k * 2 < leaves.length) k *= 2;
  return nodeHash(mth(leaves.slice(0, k)), mth(leaves.slice(k)));
}

const leavesOf = (n: number, salt = 0): Buffer[] => Array.from({ length: n }, (_, i) => leafHash(Buffer.from(`entry ${i} ${salt}`)));

/** Every perfect subtree of the leaves, as the accumulator completes them (what the tiles store). */
function perfectMap(leaves: readonly Buffer[]): (ref: NodeRef) => Buffer {
  const nodes = new Map<string, Buffer>();
  const accumulator = new MerkleAccumulator();
  for (const leaf of leaves) for (const node of accumulator.push(leaf)) nodes.set(`${node.level}/${node.index}`, node.hash);
  return (ref) => {
    const hash = nodes.get(`${ref.level}/${ref.index}`);
    if (!hash) throw new Error(`no node ${ref.level}/${ref.index}`);
    return hash;
  };
}

const flip = (hash: Buffer): Buffer => {
  const copy = Buffer.from(hash);
  copy[0] = copy[0]! ^ 1;
  return copy;
};

describe('the RFC 9162 Merkle tree', () => {
  it('matches the reference vectors of the RFC 6962 test tree (google/certificate-transparency, merkle_tree_test)', () => {
    // The eight leaf inputs and the roots of each prefix, from the reference implementation's tests.
    const inputs = ['', '00', '10', '2021', '3031', '40414243', '5051525354555657', '606162636465666768696a6b6c6d6e6f'].map((hex) => Buffer.from(hex, 'hex'));
    const roots = [
      '6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d',
      'fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125',
      'aeb6bcfe274b70a14fb067a5e5578264db0fa9b51af5e0ba159158f329e06e77',
      'd37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7',
      '4e3bbb1f7b478dcfe71fb631631519a3bca12c9aefca1612bfce4c13a86264d4',
      '76e67dadbcdf1e10e1b74ddc608abd2f98dfb16fbce75277b5232a127f2087ef',
      'ddb89be403809e325750d3d263cd78929c2942b7942a34b77e122c9594a74c8c',
      '5dc9da79a70659a9ad559cb701ded9a2ab9d823aad2f4960cfe370eff4604328',
    ];
    const accumulator = new MerkleAccumulator();
    inputs.forEach((input, i) => {
      accumulator.push(leafHash(input));
      expect(accumulator.root().toString('hex')).toBe(roots[i]);
    });
    expect(emptyRoot.toString('hex')).toBe('e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
  });

  it('property: the accumulator root equals the RFC definition for every prefix, and survives a restart from its state', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 300 }), fc.integer({ min: 0, max: 300 }), (n, cut) => {
        const leaves = leavesOf(n);
        const first = new MerkleAccumulator();
        leaves.slice(0, Math.min(cut, n)).forEach((leaf) => first.push(leaf));
        const resumed = new MerkleAccumulator(first.state());
        leaves.slice(Math.min(cut, n)).forEach((leaf) => resumed.push(leaf));
        expect(resumed.root().equals(mth(leaves))).toBe(true);
        expect(rootOfLeaves(leaves).equals(mth(leaves))).toBe(true);
      }),
      { numRuns: 60 },
    );
  });

  it('property: proofs built from stored perfect subtrees equal the in-memory ones and verify', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 300 }).chain((n) => fc.tuple(fc.constant(n), fc.integer({ min: 0, max: n - 1 }), fc.integer({ min: 1, max: n }))), ([n, index, m]) => {
        const leaves = leavesOf(n);
        const perfect = perfectMap(leaves);
        const root = rangeRoot(0, n, perfect);
        expect(root.equals(mth(leaves))).toBe(true);
        const inclusion = inclusionProofRanges(index, n).map((r) => rangeRoot(r.start, r.end, perfect));
        expect(inclusion).toEqual(inclusionProof(index, leaves));
        expect(verifyInclusion(leaves[index]!, index, n, inclusion, root)).toBe(true);
        const consistency = consistencyProofRanges(m, n).map((r) => rangeRoot(r.start, r.end, perfect));
        expect(consistency).toEqual(consistencyProof(m, leaves));
        expect(verifyConsistency(m, n, mth(leaves.slice(0, m)), root, consistency)).toBe(true);
        // What a store reads is exactly what rangeRoot asks for.
        for (const r of inclusionProofRanges(index, n)) for (const ref of perfectDecomposition(r.start, r.end)) expect(() => perfect(ref)).not.toThrow();
      }),
      { numRuns: 200 },
    );
  });

  it('property: an inclusion proof fails for any altered leaf, root, proof hash, index or size', () => {
    fc.assert(
      fc.property(fc.integer({ min: 2, max: 200 }).chain((n) => fc.tuple(fc.constant(n), fc.integer({ min: 0, max: n - 1 }), fc.nat())), ([n, index, pick]) => {
        const leaves = leavesOf(n);
        const root = mth(leaves);
        const proof = inclusionProof(index, leaves);
        expect(verifyInclusion(flip(leaves[index]!), index, n, proof, root)).toBe(false);
        expect(verifyInclusion(leaves[index]!, index, n, proof, flip(root))).toBe(false);
        if (proof.length > 0) {
          const at = pick % proof.length;
          expect(verifyInclusion(leaves[index]!, index, n, proof.map((h, i) => (i === at ? flip(h) : h)), root)).toBe(false);
        }
        expect(verifyInclusion(leaves[index]!, (index + 1) % n, n, proof, root)).toBe(false);
        // A size claim is only as good as its root: against the root of a tree of another size, the proof fails.
        expect(verifyInclusion(leaves[index]!, index, n + 1, proof, mth([...leaves, leafHash(Buffer.from('one more'))]))).toBe(false);
        expect(verifyInclusion(leaves[index]!, index, index, proof, root)).toBe(false);
      }),
      { numRuns: 200 },
    );
  });

  it('property: a consistency proof fails for any altered root, proof hash or size, and for a log that forked', () => {
    fc.assert(
      fc.property(fc.integer({ min: 2, max: 200 }).chain((n) => fc.tuple(fc.constant(n), fc.integer({ min: 1, max: n - 1 }), fc.nat())), ([n, m, pick]) => {
        const leaves = leavesOf(n);
        const oldRoot = mth(leaves.slice(0, m));
        const newRoot = mth(leaves);
        const proof = consistencyProof(m, leaves);
        expect(verifyConsistency(m, n, oldRoot, newRoot, proof)).toBe(true);
        expect(verifyConsistency(m, n, flip(oldRoot), newRoot, proof)).toBe(false);
        expect(verifyConsistency(m, n, oldRoot, flip(newRoot), proof)).toBe(false);
        const at = pick % proof.length;
        expect(verifyConsistency(m, n, oldRoot, newRoot, proof.map((h, i) => (i === at ? flip(h) : h)))).toBe(false);
        if (m + 1 < n) expect(verifyConsistency(m + 1, n, mth(leaves.slice(0, m + 1)), newRoot, proof)).toBe(false);
        expect(verifyConsistency(m, n + 1, oldRoot, mth([...leaves, leafHash(Buffer.from('one more'))]), proof)).toBe(false);
        // A fork: the same first m - 1 leaves, then another history.
        const forked = [...leaves.slice(0, m - 1), ...leavesOf(n - m + 1, 1)];
        expect(verifyConsistency(m, n, oldRoot, mth(forked), consistencyProof(m, forked))).toBe(false);
      }),
      { numRuns: 200 },
    );
  });

  it('refuses proofs that cannot exist, by name', () => {
    expect(() => inclusionProofRanges(5, 5)).toThrow(/not in a tree of 5/);
    expect(() => consistencyProofRanges(6, 5)).toThrow(/1 <= m <= n/);
    expect(() => consistencyProofRanges(0, 5)).toThrow(/1 <= m <= n/);
    expect(() => new MerkleAccumulator({ size: 3, peaks: [] })).toThrow(/2 peaks/);
  });
});
