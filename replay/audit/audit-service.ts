/**
 * The transparency log as the running ledger keeps it: the Merkle follower, the checkpoint signer and publisher, and
 * the pool proofs and exports read through. `fleet-ledger start` runs one; the API routes and the CLI use it.
 */
import { join } from 'node:path';
import pg from 'pg';
import { isLedgerError, nameUuid, type EventStore } from '../../src/ledger/index.js';
import { Checkpointer, loadOrCreateSigner, type SignerFile } from './checkpointer.js';
import { LogIntegrityMonitor, type IntegrityAlarm } from './log-integrity.js';
import { inSnapshot, readLogFacts } from './log-snapshot.js';
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
  /** Between two online integrity checks (`log-integrity.ts`). Default 5 s. */
  integrityIntervalMs?: number;
  /**
   * The store whose appends must never reuse a signed position (its `refusePositionsUpTo` is called), and where an
   * integrity alarm is recorded (`LedgerIntegrityAlarmRaised`, which the alarms projection opens as critical).
   */
  store?: Pick<EventStore, 'refusePositionsUpTo' | 'append'>;
  /** Called once when the log is found to disagree with its tree or checkpoints (a critical alarm). */
  onAlarm?: (alarm: IntegrityAlarm) => void;
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
  /** Present when the log disagrees with its Merkle tree or published checkpoint: signing has stopped. */
  integrityAlarm?: IntegrityAlarm;
}

/**
 * Records the alarm in the log, once (its id is derived from the finding and the time it was found), so the alarms
 * projection opens it as critical and auditors see when the ledger noticed. Refused when the head is behind what was
 * signed (the append would reuse a signed position): then `/readyz`, the metric and the process log raise it alone.
 */
async function recordAlarm(store: Pick<EventStore, 'append'>, alarm: IntegrityAlarm, log: AuditServiceOptions['log']): Promise<void> {
  try {
    await store.append('ledger-integrity', [
      {
        eventId: nameUuid(`ledger-integrity\u0000${alarm.code}\u0000${alarm.detectedAt}`),
        type: 'LedgerIntegrityAlarmRaised',
        data: { code: alarm.code, summary: alarm.summary.slice(0, 2000), detectedAt: alarm.detectedAt },
        actor: { kind: 'system', id: 'ledger-integrity' },
      },
    ]);
  } catch (error) {
    log?.('the integrity alarm is not recorded in the log (the append was refused): /readyz, the metric and the process log raise it', { code: isLedgerError(error) ? error.code : String(error) });
  }
}

export class AuditService {
  private constructor(
    readonly pool: pg.Pool,
    readonly signer: SignerFile,
    readonly origin: string,
    readonly follower: MerkleFollower,
    readonly checkpointer: Checkpointer,
    readonly publishDir: string | undefined,
    readonly integrity: LogIntegrityMonitor,
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
      const store = options.store;
      const integrity = new LogIntegrityMonitor({
        pool,
        verifierKey: signer.verifierKey,
        origin,
        ...(publishDir ? { publishDir } : {}),
        ...(options.integrityIntervalMs ? { intervalMs: options.integrityIntervalMs } : {}),
        ...(store ? { seal: (size: number) => store.refusePositionsUpTo(size) } : {}),
        onAlarm: (alarm: IntegrityAlarm) => {
          options.onAlarm?.(alarm);
          if (store) void recordAlarm(store, alarm, options.log);
        },
        ...(options.log ? { log: options.log } : {}),
      });
      // At start, before anything is signed: a log tampered with while the ledger was stopped (tail deleted, a row
      // rewritten, an older copy restored) raises the alarm now, not when an auditor next looks.
      await integrity.checkNow().catch((error: unknown) => options.log?.('the integrity check at start could not read the log; it is tried again while running', { error: error instanceof Error ? error.message : String(error) }));
      const follower = new MerkleFollower({
        connectionString: options.connectionString,
        ...(options.followerIntervalMs ? { intervalMs: options.followerIntervalMs } : {}),
        ...(options.log ? { log: options.log } : {}),
        ...(store ? { onTreeSize: (size: number) => store.refusePositionsUpTo(size) } : {}),
        onStopped: () => void integrity.checkNow().catch(() => undefined),
      });
      const checkpointer = new Checkpointer({
        connectionString: options.connectionString,
        signer,
        ...(publishDir ? { publishDir } : {}),
        intervalMs: options.checkpointIntervalMs ?? 10_000,
        ...(options.log ? { log: options.log } : {}),
        maySign: (client) => integrity.assertMaySign(client),
      });
      follower.start();
      checkpointer.start();
      integrity.start();
      return new AuditService(pool, signer, origin, follower, checkpointer, publishDir, integrity);
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
    // Tree size, head and newest checkpoint in one statement (one snapshot): a commit between separate reads made the
    // lag jump, and a tree larger than the head was shown as "lag 0".
    const facts = await inSnapshot(this.pool, (client) => readLogFacts(client));
    const alarm = this.integrity.status.alarm;
    return {
      origin: this.origin,
      verifierKey: this.signer.verifierKey,
      treeSize: facts.treeSize,
      headPosition: facts.headPosition,
      // Negative when the tree is beyond the log (never for an intact one): shown as it is, not as 0.
      lagPositions: facts.headPosition - facts.treeSize,
      followerActive: this.follower.status.active,
      ...(this.follower.status.error ? { followerError: this.follower.status.error } : {}),
      ...(facts.newestCheckpointAt ? { lastCheckpoint: { size: facts.newestCheckpointSize, at: facts.newestCheckpointAt.toISOString() } } : {}),
      ...(this.checkpointer.status.error ? { checkpointError: this.checkpointer.status.error } : {}),
      ...(this.publishDir ? { publishDir: this.publishDir } : {}),
      ...(alarm ? { integrityAlarm: alarm } : {}),
    };
  }

  async stop(): Promise<void> {
    await this.integrity.stop();
    await this.checkpointer.stop();
    await this.follower.stop();
    await this.pool.end();
  }
}
