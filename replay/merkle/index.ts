/** The Merkle tree of RFC 9162 (Certificate Transparency v2): hashes, proofs, their checks and the accumulator. */
export * from './rfc9162.js';
