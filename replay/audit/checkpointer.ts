/**
 * Signed checkpoints: the tree's size and root, with the time, as a C2SP signed note (Ed25519), so transparency-log
 * tooling can read them. Each is kept in `ledger_checkpoints` and published outside the database: a folder the
 * operator chooses receives `checkpoint` and the tiles in the C2SP tlog-tiles layout (what a witness, a mirror or an
 * auditor fetches), written file by file with a rename so a reader never sees half of one.
 */
import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import pg from 'pg';
import { awaitDurable } from '../../src/ledger/index.js';
import { formatCheckpoint, generateSignerKey, openNote, parseCheckpoint, parseSignerKey, signNote, verifierKeyOf } from '../checkpoint/index.js';
import { inSnapshot } from './log-snapshot.js';
import { loadTiles, readMerkleState, rootAt } from './merkle-store.js';
import { tilePath, tilesOfTree, type TileKey } from './tiles.js';

export interface SignerFile {
  /** `PRIVATE+KEY+<name>+<id>+<key>` */
  signerKey: string;
  /** `<name>+<id>+<key>`: what an auditor or a witness needs, and all they need. */
  verifierKey: string;
  path: string;
  created: boolean;
}

/**
 * The checkpoint signing key: read from `path`, or created there (mode 0600) on first use, named after the log's
 * origin. A key file readable by others is refused.
 */
export function loadOrCreateSigner(path: string, name: string): SignerFile {
  if (existsSync(path)) {
    const signerKey = readFileSync(path, 'utf8').trim();
    parseSignerKey(signerKey);
    return { signerKey, verifierKey: verifierKeyOf(signerKey), path, created: false };
  }
  mkdirSync(dirname(path), { recursive: true });
  const { signerKey, verifierKey } = generateSignerKey(name);
  writeFileSync(path, `${signerKey}\n`, { mode: 0o600 });
  chmodSync(path, 0o600);
  return { signerKey, verifierKey, path, created: true };
}

export interface Checkpoint {
  size: number;
  root: Buffer;
  note: string;
  publishedAt: Date;
}

/** The checkpoint body: origin, size, root, and the time it was signed as an extension line. */
export function checkpointText(origin: string, size: number, root: Buffer, at: Date): string {
  return formatCheckpoint({ origin, size, rootHash: root, extensions: [`time ${at.toISOString()}`] });
}

function writeAtomically(path: string, content: string | Buffer): void {
  mkdirSync(dirname(path), { recursive: true });
  const temporary = `${path}.tmp-${process.pid}`;
  writeFileSync(temporary, content);
  renameSync(temporary, path);
}

export interface CheckpointerOptions {
  connectionString: string;
  signer: SignerFile;
  /** Folder that receives `checkpoint`, `checkpoint.pub` and `tile/...`; none: database and API only. */
  publishDir?: string;
  intervalMs?: number;
  log?: (message: string, fields?: Record<string, unknown>) => void;
  /**
   * Asked inside the snapshot a checkpoint is signed from, before anything is signed or published: throws to refuse
   * (the online integrity check, `LogIntegrityMonitor.assertMaySign`). None: sign whatever the tree holds.
   */
  maySign?: (client: pg.ClientBase) => Promise<void>;
}

/**
 * Signs a checkpoint whenever the tree grew, at most once per interval, and publishes it. Publishing writes the tiles
 * that changed since the last checkpoint (full tiles once, the partial tile of each level at its new width) before
 * the checkpoint itself, so the folder is always a consistent tlog.
 */
export class Checkpointer {
  #pool: pg.Pool;
  #timer: NodeJS.Timeout | null = null;
  #busy: Promise<Checkpoint | null> | null = null;
  #published = 0;
  readonly status = { lastSize: 0, lastAt: undefined as Date | undefined, error: undefined as string | undefined };

  constructor(private readonly options: CheckpointerOptions) {
    this.#pool = new pg.Pool({ connectionString: options.connectionString, max: 2 });
    this.#pool.on('error', (error) => options.log?.('checkpoint pool connection lost', { error: error.message }));
    // Lost while checked out between statements: the next statement fails the checkpoint, never the process.
    this.#pool.on('connect', (client) => client.on('error', () => undefined));
  }

  start(): void {
    if (this.options.publishDir) writeAtomically(join(this.options.publishDir, 'checkpoint.pub'), `${this.options.signer.verifierKey}\n`);
    const tick = (): void => {
      void this.checkpointNow()
        .catch((error: unknown) => {
          this.status.error = error instanceof Error ? error.message : String(error);
          this.options.log?.('checkpoint failed', { error: this.status.error });
        })
        .finally(() => {
          if (this.#timer !== null) this.#timer = setTimeout(tick, this.options.intervalMs ?? 10_000);
        });
    };
    this.#timer = setTimeout(tick, 0);
  }

  async stop(): Promise<void> {
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = null;
    await this.#busy?.catch(() => undefined);
    await this.#pool.end();
  }

  /** Signs and publishes a checkpoint of the tree as it is now, if it grew since the last one. */
  checkpointNow(): Promise<Checkpoint | null> {
    this.#busy ??= this.#checkpoint().finally(() => {
      this.#busy = null;
    });
    return this.#busy;
  }

  async #checkpoint(): Promise<Checkpoint | null> {
    // The judgement, the tree's state, the newest stored checkpoint and the root are read in one snapshot, and the
    // checkpoint is stored in it: what is signed is what was judged (see `log-snapshot.ts`).
    const signed = await inSnapshot(
      this.#pool,
      async (client) => {
        await this.options.maySign?.(client);
        const state = await readMerkleState(client);
        const last = (await client.query<{ size: string | null }>('SELECT max(size) AS size FROM ledger_checkpoints')).rows[0]?.size;
        const lastSize = last === null || last === undefined ? 0 : Number(last);
        if (state.size === 0 || state.size <= lastSize) return { lastSize, checkpoint: null };
        const at = new Date();
        // The stored root is the follower's; recompute it from the tiles, so a checkpoint never signs a root its tiles
        // do not give (a proof built from them would not verify).
        const root = await rootAt(client, state.size);
        if (!root.equals(state.root)) throw new Error(`the tiles give another root for size ${state.size} than the follower recorded: not signing`);
        const note = signNote(checkpointText(state.origin, state.size, root, at), [this.options.signer.signerKey]);
        const keyId = this.options.signer.verifierKey.split('+')[1]!;
        await client.query('INSERT INTO ledger_checkpoints (size, root, signed_note, key_id, published_at) VALUES ($1, $2, $3, $4, $5) ON CONFLICT (size) DO NOTHING', [state.size, root, note, keyId, at]);
        return { lastSize, checkpoint: { size: state.size, root, note, publishedAt: at } };
      },
      { write: true },
    );
    const { lastSize, checkpoint } = signed;
    if (!checkpoint) {
      if (this.#published === 0 && lastSize > 0) await this.#publishLatest();
      return null;
    }
    if (this.options.publishDir) await this.#publish(checkpoint, lastSize);
    this.status.lastSize = checkpoint.size;
    this.status.lastAt = checkpoint.publishedAt;
    this.status.error = undefined;
    return checkpoint;
  }

  /** After a restart: the folder gets the newest stored checkpoint again (it may have been written elsewhere). */
  async #publishLatest(): Promise<void> {
    if (!this.options.publishDir) return;
    const row = (await this.#pool.query<{ size: string; root: Buffer; signed_note: string; published_at: Date }>('SELECT size, root, signed_note, published_at FROM ledger_checkpoints ORDER BY size DESC LIMIT 1')).rows[0];
    if (!row) return;
    await this.#publish({ size: Number(row.size), root: row.root, note: row.signed_note, publishedAt: row.published_at }, 0);
  }

  async #publish(checkpoint: Checkpoint, previousSize: number): Promise<void> {
    const dir = this.options.publishDir!;
    const before = new Map(tilesOfTree(previousSize).map((tile) => [`${tile.level}/${tile.index}`, tile.width]));
    const wanted = tilesOfTree(checkpoint.size).filter((tile) => before.get(`${tile.level}/${tile.index}`) !== tile.width || !existsSync(join(dir, tilePath(tile.level, tile.index, tile.width))));
    for (let at = 0; at < wanted.length; at += 500) {
      const slice = wanted.slice(at, at + 500);
      const tiles = await loadTiles(this.#pool, slice.map((tile): TileKey => ({ level: tile.level, index: tile.index })));
      for (const tile of slice) {
        const hashes = tiles.get(`${tile.level}/${tile.index}`);
        if (!hashes || hashes.length < tile.width * 32) throw new Error(`tile ${tile.level}/${tile.index} is shorter than ${tile.width} hashes`);
        writeAtomically(join(dir, tilePath(tile.level, tile.index, tile.width)), hashes.subarray(0, tile.width * 32));
        // The partial this tile had at the last checkpoint is superseded.
        const old = before.get(`${tile.level}/${tile.index}`);
        if (old !== undefined && old !== tile.width) rmSync(join(dir, tilePath(tile.level, tile.index, old)), { force: true });
      }
    }
    // Published outside the database only once durable: on a replicated cluster, a fence commit confirmed by the
    // synchronous standby after the checkpoint was read and stored (durability.ts). A failover then promotes a standby
    // that holds the checkpoint and every leaf it covers, so no published checkpoint is ahead of the log that goes on.
    const fence = await this.#pool.connect();
    let fenced = false;
    try {
      await awaitDurable(fence);
      fenced = true;
    } finally {
      fence.release(!fenced);
    }
    writeAtomically(join(dir, 'checkpoint'), checkpoint.note);
    this.#published += 1;
  }
}

/** Checks a signed checkpoint against a verifier key and returns what it states. */
export function openCheckpoint(note: string, verifierKey: string): { origin: string; size: number; root: Buffer; time?: string; text: string } {
  const opened = openNote(note, [verifierKey]);
  const checkpoint = parseCheckpoint(opened.text);
  const time = checkpoint.extensions?.find((line) => line.startsWith('time '))?.slice(5);
  return { origin: checkpoint.origin, size: checkpoint.size, root: checkpoint.rootHash, text: opened.text, ...(time ? { time } : {}) };
}
