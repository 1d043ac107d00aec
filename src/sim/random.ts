/**
 * Seeded pseudo-random numbers, so the same scenario and seed build the same fleet (identities, firmware mix,
 * topology) on every run. Not for anything secret.
 */
export type Random = () => number;

/** mulberry32: a small, fast 32-bit generator with a good enough spread for simulation draws. */
export function seededRandom(seed: number): Random {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** FNV-1a over a string: a stable 32-bit hash used to derive per-BMC values and ETags. */
export function fnv1a(text: string, seed = 0x811c9dc5): number {
  let hash = seed >>> 0;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash >>> 0;
}

/** Picks an index from `weights` (non-negative, not all zero) with probability proportional to its weight. */
export function pickWeighted(weights: readonly number[], random: Random): number {
  const total = weights.reduce((sum, weight) => sum + weight, 0);
  let draw = random() * total;
  for (let i = 0; i < weights.length; i++) {
    draw -= weights[i] ?? 0;
    if (draw < 0) return i;
  }
  return weights.length - 1;
}

/** MurmurHash3's 32-bit finaliser: every output bit depends on every input bit (FNV's low bits do not). */
export function mix32(value: number): number {
  let h = value >>> 0;
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}
