/**
 * The online tamper check: at start and while running, the ledger compares its head, its rows, its Merkle tree and the
 * last checkpoint it published outside the database, each comparison in one snapshot (`log-snapshot.ts`).
 *
 * Guarantees, once a disagreement is found (a tree larger than the log, a signed leaf that no longer matches its row,
 * a head behind a checkpoint, a published root the tree no longer gives):
 * - no checkpoint is signed or published again by this process (`assertMaySign` refuses; a republished older
 *   checkpoint would overwrite the evidence in the published folder);
 * - a critical alarm is raised once (`status.alarm`, `onAlarm`): the API's `/readyz` fails with its code and the
 *   metrics export it;
 * - the positions already signed are sealed in the store (`seal`), so an append never reuses one: without it, the
 *   next event after a rewound head takes a signed position and is never signed itself.
 * The alarm stays until the process restarts: a log found rewritten does not heal.
 *
 * What is compared where: the sizes and the tree's last leaf on every check (cheap); every leaf against its row's
 * hash, and every row's hash against its content and the row before, a page per check, round the log (a row
 * rewritten with the chain recomputed keeps a consistent chain, but its hash no longer gives the leaf the tree
 * recorded when it was signed).
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { canonicalEvent, chainHash, genesisHash, storedEvent } from '../../src/ledger/index.js';
import { leafHash } from '../merkle/index.js';
import { openCheckpoint } from './checkpointer.js';
import { AuditError, recordedLeaves, rootAt } from './merkle-store.js';
import { inSnapshot, readLogFacts, type LogFacts } from './log-snapshot.js';
import { MissingTileError } from './tiles.js';

/** One disagreement between the log, its tree and its checkpoints, with what shows it. */
export type IntegrityFinding =
  | { code: 'AUDIT_TREE_BEYOND_LOG'; treeSize: number; headPosition: number }
  | { code: 'AUDIT_HEAD_BEHIND_CHECKPOINT'; headPosition: number; checkpointSize: number; checkpoint: 'published' | 'stored' }
  | { code: 'AUDIT_LEAF_MISMATCH'; position: number; reason: string }
  | { code: 'AUDIT_CHECKPOINT_MISMATCH'; checkpointSize: number };

export type IntegrityCode = IntegrityFinding['code'];

/** The newest checkpoint found in the published folder, its signature checked. */
export interface PublishedCheckpoint {
  size: number;
  root: Buffer;
}

/** The critical alarm an integrity finding raises. */
export interface IntegrityAlarm {
  kind: 'ledger-integrity';
  severity: 'critical';
  code: IntegrityCode;
  summary: string;
  finding: IntegrityFinding;
  detectedAt: string;
}

/**
 * The size judgement, pure: what one snapshot of the log and the published checkpoint say. `rootAtPublished` is the
 * tree's root at the published size when the tree reaches it (null otherwise).
 */
export function judgeLog(facts: LogFacts, published: PublishedCheckpoint | null, rootAtPublished: Buffer | null): IntegrityFinding | null {
  if (facts.treeSize > facts.headPosition) return { code: 'AUDIT_TREE_BEYOND_LOG', treeSize: facts.treeSize, headPosition: facts.headPosition };
  if (published && facts.headPosition < published.size) return { code: 'AUDIT_HEAD_BEHIND_CHECKPOINT', headPosition: facts.headPosition, checkpointSize: published.size, checkpoint: 'published' };
  if (facts.headPosition < facts.publishedSize) return { code: 'AUDIT_HEAD_BEHIND_CHECKPOINT', headPosition: facts.headPosition, checkpointSize: facts.publishedSize, checkpoint: 'published' };
  if (facts.headPosition < facts.newestCheckpointSize) return { code: 'AUDIT_HEAD_BEHIND_CHECKPOINT', headPosition: facts.headPosition, checkpointSize: facts.newestCheckpointSize, checkpoint: 'stored' };
  if (facts.treeSize > 0 && !(facts.rowHashAtTreeSize?.equals(facts.treeLastHash) ?? false)) {
    return { code: 'AUDIT_LEAF_MISMATCH', position: facts.treeSize, reason: facts.rowHashAtTreeSize ? "the row's hash is not the one the tree's last leaf was made from" : 'the row of the tree\'s last leaf is missing' };
  }
  if (published && rootAtPublished && !rootAtPublished.equals(published.root)) return { code: 'AUDIT_CHECKPOINT_MISMATCH', checkpointSize: published.size };
  return null;
}

/** The alarm's one-line summary of a finding. */
export function describeFinding(finding: IntegrityFinding): string {
  switch (finding.code) {
    case 'AUDIT_TREE_BEYOND_LOG':
      return `the Merkle tree has ${finding.treeSize} leaves but the log's head is ${finding.headPosition}: rows were deleted and the head rewound`;
    case 'AUDIT_HEAD_BEHIND_CHECKPOINT':
      return `the log's head ${finding.headPosition} is behind the ${finding.checkpoint} checkpoint of size ${finding.checkpointSize}: an older copy was restored or the tail deleted`;
    case 'AUDIT_LEAF_MISMATCH':
      return `position ${finding.position} no longer matches the leaf the tree recorded for it (${finding.reason}): a row was rewritten`;
    case 'AUDIT_CHECKPOINT_MISMATCH':
      return `the tree no longer gives the root of the published checkpoint of size ${finding.checkpointSize}: the log forked from what was published`;
    default: {
      const unknown: never = finding;
      return String(unknown);
    }
  }
}

/** The smallest size no append may go below: what was folded into the tree, stored as signed, or published. */
export function signedSizeOf(facts: LogFacts, published: PublishedCheckpoint | null): number {
  return Math.max(facts.treeSize, facts.newestCheckpointSize, facts.publishedSize, published?.size ?? 0);
}

/**
 * The published size the database must be told of, or null: a published checkpoint beyond every size the database
 * holds (its tree, its checkpoints, a published size recorded before). Only the database bounds every writer: the
 * poller, the projections and the lease keeper append from threads of their own, through stores of their own.
 */
export function publishedSizeToRecord(facts: LogFacts, published: PublishedCheckpoint | null): number | null {
  return published && published.size > Math.max(facts.treeSize, facts.newestCheckpointSize, facts.publishedSize) ? published.size : null;
}

export interface LogIntegrityOptions {
  pool: pg.Pool;
  /** The checkpoints' verifier key: a published checkpoint is believed only with a good signature. */
  verifierKey: string;
  /** The folder checkpoints are published to (its `checkpoint` file); none: only the stored ones are compared. */
  publishDir?: string;
  /** This log's origin: a published checkpoint of another origin is not compared. */
  origin?: string;
  /** Between two checks while running. Default 5 s. */
  intervalMs?: number;
  /** Rows compared with their leaves per check: at most this many (default 20,000) and this many stored bytes (default 2 MiB). */
  sweepRows?: number;
  sweepBytes?: number;
  /** Seals the positions already signed against reuse (the store's `refusePositionsUpTo`). */
  seal?: (size: number) => void;
  /** Called once, when the first disagreement is found. */
  onAlarm?: (alarm: IntegrityAlarm) => void;
  log?: (message: string, fields?: Record<string, unknown>) => void;
}

export class LogIntegrityMonitor {
  readonly status = { alarm: null as IntegrityAlarm | null, checks: 0, sweptTo: 0, error: undefined as string | undefined };
  #timer: NodeJS.Timeout | null = null;
  #running: Promise<IntegrityFinding | null> | null = null;

  constructor(private readonly options: LogIntegrityOptions) {}

  /** Checks every interval from now on (the first check is the caller's, at start: `checkNow`). */
  start(): void {
    const tick = (): void => {
      void this.checkNow()
        .catch((error: unknown) => {
          // A check that could not read (the database away) is not a finding: it is tried again next interval.
          this.status.error = error instanceof Error ? error.message : String(error);
        })
        .finally(() => {
          if (this.#timer !== null) this.#timer = setTimeout(tick, this.options.intervalMs ?? 5_000);
        });
    };
    this.#timer = setTimeout(tick, this.options.intervalMs ?? 5_000);
  }

  async stop(): Promise<void> {
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = null;
    await this.#running?.catch(() => undefined);
  }

  /**
   * One check: the sizes in one snapshot, then the next page of rows against their leaves (`sweep: 'all'`: every row
   * up to the tree's size). Returns the finding (also raised), or null.
   */
  checkNow(options: { sweep?: 'page' | 'all' } = {}): Promise<IntegrityFinding | null> {
    const run = this.#check(options.sweep ?? 'page');
    // What `stop` waits for: settles when the check does, and never rejects (the caller of `checkNow` is the one
    // told of a failure; a copy that rejected with nobody listening would end the process, as a lost connection did).
    const guarded: Promise<IntegrityFinding | null> = run
      .catch(() => null)
      .finally(() => {
        if (this.#running === guarded) this.#running = null;
      });
    this.#running = guarded;
    return run;
  }

  /**
   * Refuses (AUDIT_SIGNING_STOPPED) unless the log agrees with its tree and checkpoints: called by the checkpoint
   * signer inside the snapshot it signs from, so what it signs is what was judged.
   */
  async assertMaySign(client: pg.ClientBase): Promise<void> {
    if (!this.status.alarm) await this.#judgeSizes(client);
    const alarm = this.status.alarm;
    if (alarm) throw new AuditError('AUDIT_SIGNING_STOPPED', `not signing: ${alarm.summary} (${alarm.code}, since ${alarm.detectedAt})`);
  }

  async #check(sweep: 'page' | 'all'): Promise<IntegrityFinding | null> {
    const finding = await inSnapshot(this.options.pool, (client) => this.#judgeSizes(client, { raise: false }));
    await this.#recordPublishedSize();
    this.status.checks += 1;
    this.status.error = undefined;
    if (finding?.code === 'AUDIT_LEAF_MISMATCH' && !this.status.alarm) {
      // The last leaf shows a rewrite; the alarm names the first row rewritten, as the offline verifier would (one
      // sweep of the whole log, once: the alarm is raised only once).
      this.status.sweptTo = 0;
      return this.#raise((await this.#sweep('all')) ?? finding);
    }
    if (finding) return this.#raise(finding);
    return this.#sweep(sweep);
  }

  /** The next page of rows against their leaves (`all`: up to the tree's end); a mismatch found is raised. */
  async #sweep(sweep: 'page' | 'all'): Promise<IntegrityFinding | null> {
    for (;;) {
      const { finding: leafFinding, wrapped } = await inSnapshot(this.options.pool, (client) => this.#sweepPage(client));
      if (leafFinding) return this.#raise(leafFinding);
      if (sweep === 'page' || wrapped) return null;
    }
  }

  /** A published size beyond what the database holds, not yet recorded there (`#recordPublishedSize`). */
  #publishedSizeToRecord = 0;

  /**
   * Records in the database a published checkpoint's size it falls short of (`ledger_merkle_state.published_size`,
   * only grows), after the snapshot that found it (read only): every append transaction of every writer reads it under
   * the append lock. The check at start does this before the poller and the lease keeper are started. A failure is
   * retried at the next check; meanwhile this process's own store is sealed (`seal`).
   */
  async #recordPublishedSize(): Promise<void> {
    const size = this.#publishedSizeToRecord;
    if (size === 0) return;
    try {
      await this.options.pool.query('UPDATE ledger_merkle_state SET published_size = greatest(published_size, $1)', [size]);
      if (this.#publishedSizeToRecord === size) this.#publishedSizeToRecord = 0;
    } catch (error) {
      this.#warnOnce('the published checkpoint\'s size could not be recorded in the database: only this store refuses its positions until it is', { size, error: error instanceof Error ? error.message : String(error) });
    }
  }

  /** The size judgement in the caller's snapshot; seals the signed positions either way. */
  async #judgeSizes(client: pg.ClientBase, options: { raise: boolean } = { raise: true }): Promise<IntegrityFinding | null> {
    const facts = await readLogFacts(client);
    const published = this.#published();
    this.options.seal?.(signedSizeOf(facts, published));
    this.#publishedSizeToRecord = Math.max(this.#publishedSizeToRecord, publishedSizeToRecord(facts, published) ?? 0);
    const reachable = published && published.size <= facts.treeSize && published.size <= facts.headPosition;
    const rootAtPublished = reachable ? await rootAt(client, published.size).catch((error: unknown) => {
      // Within the tree's recorded size, a node it cannot give means its tiles were cut: it gives no root at all.
      if (error instanceof MissingTileError) return Buffer.alloc(32);
      throw error;
    }) : null;
    const finding = judgeLog(facts, published, rootAtPublished);
    return finding && options.raise ? this.#raise(finding) : finding;
  }

  /**
   * The newest checkpoint in the published folder, or null: none published, no folder, another log's, or one this
   * key does not verify (said once in the log).
   */
  #published(): PublishedCheckpoint | null {
    if (!this.options.publishDir) return null;
    const path = join(this.options.publishDir, 'checkpoint');
    if (!existsSync(path)) return null;
    try {
      const opened = openCheckpoint(readFileSync(path, 'utf8'), this.options.verifierKey);
      // Another log's checkpoint (a database created again beside a folder kept from before): not this log's history.
      if (this.options.origin !== undefined && opened.origin !== this.options.origin) {
        this.#warnOnce('the published checkpoint is of another log (origin differs): not compared', { published: opened.origin, origin: this.options.origin });
        return null;
      }
      return { size: opened.size, root: opened.root };
    } catch (error) {
      // Not signed by this ledger's key (the key was replaced, or the file was): nothing it says can be believed.
      this.#warnOnce('the published checkpoint does not verify with the signing key: not compared', { error: error instanceof Error ? error.message : String(error) });
      return null;
    }
  }

  /**
   * Rows (sweptTo, sweptTo + sweepRows] up to the tree's size, each against the leaf the tree recorded, its content
   * against its hash and its prev_hash against the row before. `wrapped`: the sweep reached the tree's end and starts
   * again from the first row next time.
   */
  async #sweepPage(client: pg.ClientBase): Promise<{ finding: IntegrityFinding | null; wrapped: boolean }> {
    const size = Number((await client.query<{ size: string }>('SELECT size FROM ledger_merkle_state')).rows[0]?.size ?? 0);
    const from = this.status.sweptTo + 1;
    const last = Math.min(size, this.status.sweptTo + (this.options.sweepRows ?? 20_000));
    if (from > last) {
      this.status.sweptTo = 0;
      return { finding: null, wrapped: true };
    }
    // Bounded in bytes as well as rows, so a stretch of large events (poll batches) is not read and hashed at once on
    // the API's thread: the page ends at the last row whose running stored size is within `sweepBytes`.
    const cut = (
      await client.query<{ cut: string | null }>(
        `SELECT max(position) AS cut FROM (SELECT position, sum(pg_column_size(data) + pg_column_size(actor)) OVER (ORDER BY position) AS running
           FROM ledger_events WHERE position >= $1 AND position <= $2) page WHERE running <= $3`,
        [from, last, this.options.sweepBytes ?? 2 * 2 ** 20],
      )
    ).rows[0]?.cut;
    const to = Math.max(from, Math.min(last, cut === null || cut === undefined ? from : Number(cut)));
    let leaves: Buffer[];
    try {
      leaves = await recordedLeaves(client, from, to);
    } catch (error) {
      // The tree's state counts leaves its tiles no longer hold: the tree itself was cut.
      if (error instanceof AuditError && error.code === 'AUDIT_BEYOND_TREE') return { finding: { code: 'AUDIT_LEAF_MISMATCH', position: error.position ?? from, reason: 'the tree has no recorded leaf for it' }, wrapped: false };
      throw error;
    }
    const rows = (await client.query('SELECT * FROM ledger_events WHERE position >= $1 AND position <= $2 ORDER BY position', [Math.max(1, from - 1), to])).rows;
    let prev: string | null = from === 1 ? genesisHash : null;
    let expected = from;
    for (const row of rows) {
      const event = storedEvent(row);
      if (event.position === from - 1) {
        prev = event.hash!;
        continue;
      }
      const mismatch = (reason: string): { finding: IntegrityFinding; wrapped: boolean } => ({ finding: { code: 'AUDIT_LEAF_MISMATCH', position: expected, reason }, wrapped: false });
      if (event.position !== expected) return mismatch('the row is missing');
      if (!leafHash(Buffer.from(event.hash!, 'hex')).equals(leaves[expected - from]!)) return mismatch("the row's hash does not give the recorded leaf");
      if (prev !== null && event.prevHash !== prev) return mismatch('prev_hash does not match the hash of the row before');
      if (chainHash(event.prevHash!, canonicalEvent(event)) !== event.hash) return mismatch('the content does not match its hash');
      prev = event.hash!;
      expected += 1;
    }
    if (expected <= to) return { finding: { code: 'AUDIT_LEAF_MISMATCH', position: expected, reason: 'the row is missing' }, wrapped: false };
    this.status.sweptTo = to;
    return { finding: null, wrapped: false };
  }

  readonly #warned = new Set<string>();

  /** Said once per process, not at every check. */
  #warnOnce(message: string, fields: Record<string, unknown>): void {
    if (this.#warned.has(message)) return;
    this.#warned.add(message);
    this.options.log?.(message, fields);
  }

  #raise(finding: IntegrityFinding): IntegrityFinding {
    if (this.status.alarm) return finding;
    const alarm: IntegrityAlarm = { kind: 'ledger-integrity', severity: 'critical', code: finding.code, summary: describeFinding(finding), finding, detectedAt: new Date().toISOString() };
    this.status.alarm = alarm;
    this.options.log?.('LEDGER INTEGRITY ALARM: the log disagrees with its Merkle tree or published checkpoint; signing stopped', { severity: 'critical', code: alarm.code, summary: alarm.summary });
    this.options.onAlarm?.(alarm);
    return finding;
  }
}
