/**
 * The transparency log as the running ledger keeps it: the Merkle follower, the checkpoint signer and publisher, and
 * the pool proofs and exports read through. `fleet-ledger start` runs one; the API routes and the CLI use it.
 */
import { join } from 'node:path';
import pg from 'pg';
import { Checkpointer, loadOrCreateSigner, type SignerFile } from './checkpointer.js';
import { MerkleFollower, readMerkleState } from './merkle-store.js';

export interface AuditServiceOptions {
  connectionString: string;
  /** Where the signing key lives when `keyPath` is not given (`<dataDir>/checkpoint-signer.key`). */
  dataDir: string;
  keyPath?: string;
  /** Folder the checkpoints and tiles are published to; default `<dataDir>/transparency`. `false`: none. */
  publishDir?: string | false;
  checkpointIntervalMs?: number;
  followerIntervalMs?: number;
  log?: (message: string, fields?: Record<string, unknown>) => void;
}

export interface AuditStatus {
  origin: string;
  verifierKey: string;
  treeSize: number;
  headPosition: number;
  lagPositions: number;
  followerActive: boolean;
  followerError?: string;
  lastCheckpoint?: { size: number; at: string };
  checkpointError?: string;
  publishDir?: string;
}

export class AuditService {
  private constructor(
    readonly pool: pg.Pool,
    readonly signer: SignerFile,
    readonly origin: string,
    readonly follower: MerkleFollower,
    readonly checkpointer: Checkpointer,
    readonly publishDir: string | undefined,
  ) {}

  static async start(options: AuditServiceOptions): Promise<AuditService> {
    const pool = new pg.Pool({ connectionString: options.connectionString, max: 4 });
    // An idle connection the server closed is replaced by the pool; it is not the process's end.
    pool.on('error', (error) => options.log?.('audit pool connection lost', { error: error.message }));
    // Lost while checked out between statements: the next statement fails that call, never the process.
    pool.on('connect', (client) => client.on('error', () => undefined));
    try {
      const { origin } = await readMerkleState(pool);
      const signer = loadOrCreateSigner(options.keyPath ?? join(options.dataDir, 'checkpoint-signer.key'), origin);
      const publishDir = options.publishDir === false ? undefined : (options.publishDir ?? join(options.dataDir, 'transparency'));
      const follower = new MerkleFollower({ connectionString: options.connectionString, ...(options.followerIntervalMs ? { intervalMs: options.followerIntervalMs } : {}), ...(options.log ? { log: options.log } : {}) });
      const checkpointer = new Checkpointer({
        connectionString: options.connectionString,
        signer,
        ...(publishDir ? { publishDir } : {}),
        intervalMs: options.checkpointIntervalMs ?? 10_000,
        ...(options.log ? { log: options.log } : {}),
      });
      follower.start();
      checkpointer.start();
      return new AuditService(pool, signer, origin, follower, checkpointer, publishDir);
    } catch (error) {
      await pool.end();
      throw error;
    }
  }

  /** Folds the log into the tree up to its current head and signs a checkpoint of it (tests, `audit checkpoint`). */
  async checkpointNow(): Promise<{ size: number } | null> {
    await this.follower.catchUp();
    return this.checkpointer.checkpointNow();
  }

  async status(): Promise<AuditStatus> {
    const state = await readMerkleState(this.pool);
    const head = Number((await this.pool.query<{ position: string }>('SELECT position FROM ledger_head')).rows[0]!.position);
    const last = (await this.pool.query<{ size: string; published_at: Date }>('SELECT size, published_at FROM ledger_checkpoints ORDER BY size DESC LIMIT 1')).rows[0];
    return {
      origin: this.origin,
      verifierKey: this.signer.verifierKey,
      treeSize: state.size,
      headPosition: head,
      lagPositions: Math.max(0, head - state.size),
      followerActive: this.follower.status.active,
      ...(this.follower.status.error ? { followerError: this.follower.status.error } : {}),
      ...(last ? { lastCheckpoint: { size: Number(last.size), at: last.published_at.toISOString() } } : {}),
      ...(this.checkpointer.status.error ? { checkpointError: this.checkpointer.status.error } : {}),
      ...(this.publishDir ? { publishDir: this.publishDir } : {}),
    };
  }

  async stop(): Promise<void> {
    await this.checkpointer.stop();
    await this.follower.stop();
    await this.pool.end();
  }
}
