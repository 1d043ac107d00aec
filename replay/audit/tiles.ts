/**
 * The Merkle tree's storage: tiles of 256 hashes, the C2SP tlog-tiles layout. Tile level L, index t holds the hashes
 * of the tree's level 8L, nodes [256t, 256t + 256); the last tile of a level is partial until it fills. Any perfect
 * subtree of a committed tree is one tile entry hashed up at most 7 levels, so a proof is one read of a few tiles,
 * whatever the size of the log. The same tiles are what `publish.ts` writes to a folder for outsiders.
 */
import { nodeHash, perfectDecomposition, rangeRoot, type NodeRef } from '../merkle/index.js';

export const tileHeight = 8;
export const tileWidth = 1 << tileHeight;

export interface TileKey {
  level: number;
  index: number;
}

/** Tiles by `level/index`, each a Buffer of 32-byte hashes (a partial tile is shorter). */
export type TileMap = Map<string, Buffer>;

export const tileKey = (level: number, index: number): string => `${level}/${index}`;

/** Where a perfect subtree's hash comes from: the tile entries at level 8L below it. */
function baseOf(ref: NodeRef): { tile: TileKey; from: number; count: number } {
  const tileLevel = Math.floor(ref.level / tileHeight);
  const rest = ref.level - tileLevel * tileHeight;
  const first = ref.index * 2 ** rest;
  return { tile: { level: tileLevel, index: Math.floor(first / tileWidth) }, from: first % tileWidth, count: 2 ** rest };
}

/** The tiles needed to compute these perfect subtrees. */
export function tilesFor(refs: readonly NodeRef[]): TileKey[] {
  const keys = new Map<string, TileKey>();
  for (const ref of refs) {
    const { tile } = baseOf(ref);
    keys.set(tileKey(tile.level, tile.index), tile);
  }
  return [...keys.values()];
}

export class MissingTileError extends Error {
  constructor(readonly ref: NodeRef) {
    super(`the tree's node at level ${ref.level} index ${ref.index} is not stored yet (the Merkle follower is behind)`);
  }
}

/** Subtree hashes computed inside full tiles (which never change), by tile buffer. */
const insideFullTiles = new WeakMap<Buffer, Map<number, Buffer>>();

/** The hash of a perfect subtree from loaded tiles. */
export function perfectFromTiles(tiles: TileMap, ref: NodeRef): Buffer {
  const { tile, from, count } = baseOf(ref);
  const hashes = tiles.get(tileKey(tile.level, tile.index));
  if (!hashes || hashes.length < (from + count) * 32) throw new MissingTileError(ref);
  if (count === 1) return hashes.subarray(from * 32, from * 32 + 32);
  const full = hashes.length === tileWidth * 32;
  const memo = full ? (insideFullTiles.get(hashes) ?? new Map<number, Buffer>()) : undefined;
  if (memo && !insideFullTiles.has(hashes)) insideFullTiles.set(hashes, memo);
  const memoKey = from * 1024 + count;
  const known = memo?.get(memoKey);
  if (known) return known;
  let level: Buffer[] = [];
  for (let i = 0; i < count; i++) level.push(hashes.subarray((from + i) * 32, (from + i + 1) * 32));
  while (level.length > 1) {
    const up: Buffer[] = [];
    for (let i = 0; i < level.length; i += 2) up.push(nodeHash(level[i]!, level[i + 1]!));
    level = up;
  }
  memo?.set(memoKey, level[0]!);
  return level[0]!;
}

/** MTH of leaves [start, end) from loaded tiles. */
export function rangeRootFromTiles(tiles: TileMap, start: number, end: number): Buffer {
  return rangeRoot(start, end, (ref) => perfectFromTiles(tiles, ref));
}

/** Every perfect subtree under the given ranges. */
export function refsOf(ranges: ReadonlyArray<{ start: number; end: number }>): NodeRef[] {
  return ranges.flatMap((range) => (range.end > range.start ? perfectDecomposition(range.start, range.end) : []));
}

/**
 * The C2SP tlog-tiles path of a tile: `tile/<L>/<N>` with N in groups of three digits, all but the last prefixed
 * with `x` (`x001/x234/067`), and `.p/<W>` for a partial tile of W hashes.
 */
export function tilePath(level: number, index: number, width = tileWidth): string {
  let digits = String(index);
  while (digits.length % 3 !== 0) digits = `0${digits}`;
  const groups = digits.match(/\d{3}/g)!;
  const n = groups.map((group, i) => (i < groups.length - 1 ? `x${group}` : group)).join('/');
  return `tile/${level}/${n}${width < tileWidth ? `.p/${width}` : ''}`;
}

/** The tiles of a tree of `size` leaves, with the width each has at that size (full tiles are 256 wide). */
export function tilesOfTree(size: number): Array<TileKey & { width: number }> {
  const out: Array<TileKey & { width: number }> = [];
  for (let level = 0, nodes = size; nodes > 0; level++, nodes = Math.floor(nodes / tileWidth)) {
    const full = Math.floor(nodes / tileWidth);
    for (let index = 0; index < full; index++) out.push({ level, index, width: tileWidth });
    if (nodes % tileWidth > 0) out.push({ level, index: full, width: nodes % tileWidth });
  }
  return out;
}
