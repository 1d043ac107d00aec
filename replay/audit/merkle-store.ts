/**
 * The transparency log in PostgreSQL: the follower that extends the Merkle tree as the log grows, and proofs read
 * from its tiles. The follower runs beside the appends, not inside them (measured in `bench/audit.ts`): its lag is
 * bounded by its interval and reported. It checks every row's link to the one before (prev_hash) as it goes, so a
 * log rewritten before it is folded into the tree stops it with the position named, instead of being signed.
 */
import pg from 'pg';
import { isStoreUnavailable, outageBackoffMs } from '../../src/ledger/index.js';
import {
  consistencyProofRanges,
  inclusionProofRanges,
  leafHash,
  MerkleAccumulator,
} from '../merkle/index.js';
import { refsOf, rangeRootFromTiles, tileKey, tileHeight, tilesFor, tileWidth, type TileKey, type TileMap } from './tiles.js';

export interface MerkleState {
  origin: string;
  size: number;
  root: Buffer;
  lastHash: Buffer;
  peaks: Buffer[];
}

export async function readMerkleState(db: pg.ClientBase | pg.Pool): Promise<MerkleState> {
  const row = (await db.query<{ origin: string; size: string; root: Buffer; last_hash: Buffer; peaks: Buffer }>('SELECT origin, size, root, last_hash, peaks FROM ledger_merkle_state')).rows[0];
  if (!row) throw new AuditError('AUDIT_NOT_INITIALISED', 'ledger_merkle_state is empty: the ledger schema is older than the transparency log');
  const peaks: Buffer[] = [];
  for (let at = 0; at < row.peaks.length; at += 32) peaks.push(row.peaks.subarray(at, at + 32));
  return { origin: row.origin, size: Number(row.size), root: row.root, lastHash: row.last_hash, peaks };
}

export class AuditError extends Error {
  constructor(
    readonly code: 'AUDIT_NOT_INITIALISED' | 'AUDIT_CHAIN_BROKEN' | 'AUDIT_BEYOND_TREE' | 'AUDIT_BAD_RANGE' | 'AUDIT_TREE_BEYOND_LOG' | 'AUDIT_SIGNING_STOPPED',
    message: string,
    readonly position?: number,
  ) {
    super(message);
  }
}

/**
 * Full tiles never change once written (the tree only grows), so they are cached by pool; a partial tile is read
 * every time. A proof then reads the one or two tiles it has not seen, usually only the right edge.
 */
const fullTileCache = new WeakMap<object, Map<string, Buffer>>();
const fullTileCacheLimit = 20_000; // 160 MB at most

export async function loadTiles(db: pg.ClientBase | pg.Pool, keys: readonly TileKey[]): Promise<TileMap> {
  return (await loadTilesAndSize(db, keys, false)).tiles;
}

/**
 * The tiles of `keys` (cached full tiles first), and with `withSize` the tree's size read in the same statement:
 * a proof is one round trip to the database.
 */
async function loadTilesAndSize(db: pg.ClientBase | pg.Pool, keys: readonly TileKey[], withSize: boolean): Promise<{ tiles: TileMap; size: number }> {
  const tiles: TileMap = new Map();
  let cache = fullTileCache.get(db);
  if (!cache) {
    cache = new Map();
    fullTileCache.set(db, cache);
  }
  const missing: TileKey[] = [];
  for (const key of keys) {
    const cached = cache.get(tileKey(key.level, key.index));
    if (cached) tiles.set(tileKey(key.level, key.index), cached);
    else missing.push(key);
  }
  if (missing.length === 0 && !withSize) return { tiles, size: -1 };
  const rows = await db.query<{ level: number; idx: string; hashes: Buffer | null }>(
    `${withSize ? 'SELECT -1::smallint AS level, size AS idx, NULL::bytea AS hashes FROM ledger_merkle_state UNION ALL ' : ''}SELECT level, idx, hashes FROM ledger_merkle_tiles WHERE (level, idx) IN (SELECT * FROM unnest($1::smallint[], $2::bigint[]))`,
    [missing.map((key) => key.level), missing.map((key) => key.index)],
  );
  let size = -1;
  for (const row of rows.rows) {
    if (row.level === -1) {
      size = Number(row.idx);
      continue;
    }
    const key = tileKey(row.level, Number(row.idx));
    tiles.set(key, row.hashes!);
    if (row.hashes!.length === tileWidth * 32) {
      if (cache.size >= fullTileCacheLimit) cache.delete(cache.keys().next().value as string);
      cache.set(key, row.hashes!);
    }
  }
  if (withSize && size < 0) throw new AuditError('AUDIT_NOT_INITIALISED', 'ledger_merkle_state is empty: the ledger schema is older than the transparency log');
  return { tiles, size };
}

function requireWithin(size: number, treeSizeNow: number): void {
  if (!Number.isInteger(size) || size < 1) throw new AuditError('AUDIT_BAD_RANGE', `tree size must be a positive integer, got ${size}`);
  if (size > treeSizeNow) throw new AuditError('AUDIT_BEYOND_TREE', `tree size ${size} is beyond the Merkle tree's ${treeSizeNow} leaves (the follower may be behind the head)`);
}

/** The hashes of `ranges` in a tree of `size` leaves, checked against the tree's size in the same round trip. */
async function rangesToHashesWithin(db: pg.ClientBase | pg.Pool, size: number, ranges: ReadonlyArray<{ start: number; end: number }>): Promise<Buffer[]> {
  const loaded = await loadTilesAndSize(db, tilesFor(refsOf(ranges)), true);
  requireWithin(size, loaded.size);
  return ranges.map((range) => rangeRootFromTiles(loaded.tiles, range.start, range.end));
}

/** The root of the tree of `size` leaves (any size up to the tree's). */
export async function rootAt(db: pg.ClientBase | pg.Pool, size: number): Promise<Buffer> {
  requireWithin(size, Number.MAX_SAFE_INTEGER);
  return (await rangesToHashesWithin(db, size, [{ start: 0, end: size }]))[0]!;
}

/** Inclusion of log position `position` (leaf position - 1) in the tree of `size` leaves. */
export async function inclusionProof(db: pg.ClientBase | pg.Pool, position: number, size: number): Promise<{ leafIndex: number; treeSize: number; leafHash: Buffer; proof: Buffer[]; root: Buffer }> {
  requireWithin(size, Number.MAX_SAFE_INTEGER);
  if (!Number.isInteger(position) || position < 1 || position > size) throw new AuditError('AUDIT_BAD_RANGE', `position ${position} is not in a tree of ${size} leaves (positions 1..${size})`);
  const leafIndex = position - 1;
  const ranges = [...inclusionProofRanges(leafIndex, size), { start: 0, end: size }, { start: leafIndex, end: leafIndex + 1 }];
  const hashes = await rangesToHashesWithin(db, size, ranges);
  return { leafIndex, treeSize: size, proof: hashes.slice(0, -2), root: hashes[hashes.length - 2]!, leafHash: hashes[hashes.length - 1]! };
}

/** Consistency of the tree of `from` leaves with the tree of `to` leaves. */
export async function consistencyProof(db: pg.ClientBase | pg.Pool, from: number, to: number): Promise<{ from: number; to: number; proof: Buffer[]; fromRoot: Buffer; toRoot: Buffer }> {
  requireWithin(to, Number.MAX_SAFE_INTEGER);
  if (!Number.isInteger(from) || from < 1 || from > to) throw new AuditError('AUDIT_BAD_RANGE', `consistency needs 1 <= from <= to, got from ${from} to ${to}`);
  const ranges = [...consistencyProofRanges(from, to), { start: 0, end: from }, { start: 0, end: to }];
  const hashes = await rangesToHashesWithin(db, to, ranges);
  return { from, to, proof: hashes.slice(0, -2), fromRoot: hashes[hashes.length - 2]!, toRoot: hashes[hashes.length - 1]! };
}

/** The leaf hashes of positions [from, to] as the tree recorded them (1-based, inclusive). */
export async function recordedLeaves(db: pg.ClientBase | pg.Pool, from: number, to: number): Promise<Buffer[]> {
  if (to < from) return [];
  const first = Math.floor((from - 1) / tileWidth);
  const last = Math.floor((to - 1) / tileWidth);
  const keys: TileKey[] = [];
  for (let index = first; index <= last; index++) keys.push({ level: 0, index });
  const tiles = await loadTiles(db, keys);
  const leaves: Buffer[] = [];
  for (let position = from; position <= to; position++) {
    const tile = tiles.get(tileKey(0, Math.floor((position - 1) / tileWidth)));
    const at = ((position - 1) % tileWidth) * 32;
    if (!tile || tile.length < at + 32) throw new AuditError('AUDIT_BEYOND_TREE', `no recorded leaf for position ${position}`, position);
    leaves.push(tile.subarray(at, at + 32));
  }
  return leaves;
}

export interface FollowerOptions {
  connectionString: string;
  /** Between two looks at the head when caught up. */
  intervalMs?: number;
  batchSize?: number;
  log?: (message: string, fields?: Record<string, unknown>) => void;
  /** The tree's size after each batch (the store seals those positions against reuse). */
  onTreeSize?: (size: number) => void;
  /** The follower stopped on an error (the integrity check is asked at once, not at its next interval). */
  onStopped?: (error: unknown) => void;
}

/** Advisory lock key of the one follower per database ('merk' in ASCII). */
const followerLockKey = 0x6d65726b;

/**
 * Extends the tree over new rows, one transaction per batch: the new leaves and their completed parents go into the
 * tiles, and the compact range into `ledger_merkle_state`. One follower per database holds an advisory lock; a
 * second one waits as a standby.
 */
export class MerkleFollower {
  #client: pg.Client | null = null;
  #stopped = false;
  #running: Promise<void> | null = null;
  #wake: (() => void) | null = null;
  readonly status = { size: 0, head: 0, lagPositions: 0, active: false, error: undefined as string | undefined, lastBatchMs: 0 };

  constructor(private readonly options: FollowerOptions) {}

  start(): void {
    this.#running ??= this.#supervise();
  }

  /**
   * Runs the follower until `stop()`. The database away (a restart, a failover) only pauses it: it connects again,
   * takes its lock again and goes on from the tree's recorded size, so nothing is added twice. Anything else (a
   * broken chain) stops it, with the reason in `status.error`.
   */
  async #supervise(): Promise<void> {
    for (let attempt = 0; !this.#stopped; attempt += 1) {
      const began = performance.now();
      try {
        await this.#run();
        return;
      } catch (error) {
        this.status.error = error instanceof Error ? error.message : String(error);
        this.status.active = false;
        await this.#client?.end().catch(() => undefined);
        this.#client = null;
        if (this.#stopped) return;
        if (!isStoreUnavailable(error)) {
          this.options.log?.('the Merkle follower stopped', { error: this.status.error });
          this.options.onStopped?.(error);
          return;
        }
        // A run that lasted is a new outage: its first retry comes soon again.
        if (performance.now() - began > 30_000) attempt = 0;
        if (attempt === 0) this.options.log?.('the Merkle follower waits for the database', { error: this.status.error });
        await this.#sleep(outageBackoffMs(attempt));
      }
    }
  }

  /** Wakes the follower now (an append just committed). */
  poke(): void {
    this.#wake?.();
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    this.#wake?.();
    await this.#running;
    await this.#client?.end().catch(() => undefined);
    this.#client = null;
  }

  /** Folds every committed row into the tree; resolves when caught up with the head read at the call. */
  async catchUp(): Promise<number> {
    const client = await this.#connect();
    for (;;) {
      const added = await this.#step(client);
      if (added === 0) return this.status.size;
    }
  }

  async #connect(): Promise<pg.Client> {
    if (this.#client) return this.#client;
    const client = new pg.Client({ connectionString: this.options.connectionString });
    // A connection lost (server restart, database dropped) fails the current step, which reports it; never the process.
    client.on('error', (error) => {
      this.status.error = error.message;
      if (this.#client === client) this.#client = null;
    });
    await client.connect();
    this.#client = client;
    return client;
  }

  async #run(): Promise<void> {
    const client = await this.#connect();
    while (!this.#stopped) {
      const locked = (await client.query<{ locked: boolean }>('SELECT pg_try_advisory_lock($1) AS locked', [followerLockKey])).rows[0]!.locked;
      if (locked) break;
      await this.#sleep(this.options.intervalMs ?? 500);
    }
    this.status.active = !this.#stopped;
    // Holding the lock again after an outage: what stopped it is over.
    if (this.status.active) this.status.error = undefined;
    // A full batch means more is waiting: go on at once. Otherwise let the log grow for an interval, so the tree is
    // extended in a few large transactions a second instead of one per append (what keeps its cost off the appends).
    const batchSize = this.options.batchSize ?? 5_000;
    while (!this.#stopped) {
      const added = await this.#step(client);
      if (added < batchSize) await this.#sleep(this.options.intervalMs ?? 250);
    }
  }

  #sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, ms);
      this.#wake = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  }

  #queue: Promise<unknown> = Promise.resolve();

  /** One batch in one transaction, never two at once on the connection; the number of leaves added. */
  #step(client: pg.Client): Promise<number> {
    const next = this.#queue.then(() => this.#stepNow(client));
    this.#queue = next.catch(() => undefined);
    return next;
  }

  async #stepNow(client: pg.Client): Promise<number> {
    const started = performance.now();
    const batchSize = this.options.batchSize ?? 5_000;
    // One snapshot for the head, the tree's state and the rows: a commit landing between two reads can neither be
    // half-folded nor make the head look behind the tree.
    await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ');
    try {
      const state = await readMerkleState(client);
      const head = Number((await client.query<{ position: string }>('SELECT position FROM ledger_head')).rows[0]!.position);
      this.status.head = head;
      // Sealed first: when the head is behind the tree, those are exactly the positions no append may take again.
      this.options.onTreeSize?.(state.size);
      // Never an intact log's state (the tree only folds committed rows): rows were deleted and the head rewound.
      if (head < state.size) throw new AuditError('AUDIT_TREE_BEYOND_LOG', `the Merkle tree has ${state.size} leaves but the log's head is ${head}: rows were deleted and the head rewound`, head + 1);
      const rows = (
        await client.query<{ position: string; prev_hash: Buffer; hash: Buffer }>('SELECT position, prev_hash, hash FROM ledger_events WHERE position > $1 AND position <= $2 ORDER BY position LIMIT $3', [state.size, head, batchSize])
      ).rows;
      if (rows.length === 0) {
        await client.query('COMMIT');
        this.status.size = state.size;
        this.status.lagPositions = head - state.size;
        return 0;
      }
      const accumulator = new MerkleAccumulator({ size: state.size, peaks: state.peaks.map((peak) => peak.toString('hex')) });
      const changed = new Map<string, { level: number; index: number; entries: Buffer[] }>();
      let lastHash = state.lastHash;
      let expected = state.size + 1;
      for (const row of rows) {
        const position = Number(row.position);
        if (position !== expected) throw new AuditError('AUDIT_CHAIN_BROKEN', `position ${expected} is missing from the log (next row is ${position})`, expected);
        if (!row.prev_hash.equals(lastHash)) throw new AuditError('AUDIT_CHAIN_BROKEN', `position ${position}'s prev_hash does not match the hash of position ${position - 1} as the tree recorded it`, position);
        for (const node of accumulator.push(leafHash(row.hash))) {
          if (node.level % tileHeight !== 0) continue;
          const level = node.level / tileHeight;
          const index = Math.floor(node.index / tileWidth);
          const key = tileKey(level, index);
          let tile = changed.get(key);
          if (!tile) {
            tile = { level, index, entries: [] };
            changed.set(key, tile);
          }
          tile.entries.push(node.hash);
        }
        lastHash = row.hash;
        expected += 1;
      }
      // Append the new entries to the tiles they extend: one statement for every tile touched.
      const tiles = [...changed.values()];
      await client.query(
        `INSERT INTO ledger_merkle_tiles AS t (level, idx, hashes) SELECT * FROM unnest($1::smallint[], $2::bigint[], $3::bytea[])
         ON CONFLICT (level, idx) DO UPDATE SET hashes = t.hashes || EXCLUDED.hashes`,
        [tiles.map((tile) => tile.level), tiles.map((tile) => tile.index), tiles.map((tile) => Buffer.concat(tile.entries))],
      );
      const next = accumulator.state();
      await client.query('UPDATE ledger_merkle_state SET size = $1, peaks = $2, root = $3, last_hash = $4, updated_at = now()', [
        next.size,
        Buffer.concat(next.peaks.map((peak) => Buffer.from(peak, 'hex'))),
        accumulator.root(),
        lastHash,
      ]);
      await client.query('COMMIT');
      this.options.onTreeSize?.(next.size);
      this.status.size = next.size;
      this.status.lagPositions = head - next.size;
      this.status.lastBatchMs = performance.now() - started;
      return rows.length;
    } catch (error) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw error;
    }
  }
}
