/**
 * The background worker that keeps snapshots coming as the projections advance: one every `everyEvents` positions of
 * projection progress, or every `everyMs` when the log moved at all (a quiet ledger still gets a snapshot a while
 * after its last change), whichever comes first. It measures progress by the lowest checkpoint of the projections it
 * copies, not by the head: a snapshot of projections that lag would not bound the tail any better.
 */
import { sql, type Kysely } from 'kysely';
import type { Projection } from '../../src/ledger/index.js';
import { pruneSnapshots, type RetentionPolicy } from './retention.js';
import { listSnapshots, takeSnapshot, type SnapshotSummary } from './snapshot-store.js';

export interface SnapshotPolicy {
  /** A snapshot once the projections advanced this many positions past the last one. */
  everyEvents: number;
  /** A snapshot once this long passed since the last one, if the projections advanced at all. */
  everyMs: number;
  /** How often the worker looks. */
  checkMs: number;
  retention: RetentionPolicy;
}

export interface SnapshotterHooks {
  /** Serializes with other snapshot work of the engine (a backfill). */
  exclusive<T>(run: () => Promise<T>): Promise<T>;
  onSnapshot?(snapshot: SnapshotSummary, pruned: number): void;
  onError?(error: unknown): void;
}

export class Snapshotter {
  #timer: NodeJS.Timeout | null = null;
  #running: Promise<void> | null = null;
  #stopped = false;

  constructor(
    private readonly db: Kysely<any>,
    private readonly projections: readonly Projection[],
    private readonly policy: SnapshotPolicy,
    private readonly hooks: SnapshotterHooks,
  ) {}

  start(): void {
    this.#stopped = false;
    this.#schedule();
  }

  #schedule(): void {
    if (this.#stopped) return;
    this.#timer = setTimeout(() => {
      this.#running = this.tick()
        .then(() => undefined)
        .catch((error: unknown) => this.hooks.onError?.(error))
        .finally(() => {
          this.#running = null;
          this.#schedule();
        });
    }, this.policy.checkMs);
    this.#timer.unref();
  }

  /** Takes a snapshot if the policy says one is due; returns it (null: not due, or another process took it). */
  async tick(now: Date = new Date()): Promise<SnapshotSummary | null> {
    return this.hooks.exclusive(async () => {
      const progress = await this.#lowestCheckpoint();
      if (progress === 0) return null;
      const last = await sql<{ position: string | number | null; taken_at: Date | null }>`
        SELECT min(p.position) AS position, max(s.taken_at) AS taken_at FROM as_of_snapshots s JOIN as_of_snapshot_parts p ON p.snapshot_id = s.id
         WHERE s.id = (SELECT max(id) FROM as_of_snapshots)`.execute(this.db);
      const lastPosition = Number(last.rows[0]?.position ?? 0);
      const lastAt = last.rows[0]?.taken_at ? new Date(last.rows[0].taken_at).getTime() : 0;
      const due = progress - lastPosition >= this.policy.everyEvents || (progress > lastPosition && now.getTime() - lastAt >= this.policy.everyMs);
      if (!due) return null;
      const snapshot = await takeSnapshot(this.db, this.projections);
      if (!snapshot) return null;
      const pruned = await pruneSnapshots(this.db, await listSnapshots(this.db), this.policy.retention, now);
      this.hooks.onSnapshot?.(snapshot, pruned.length);
      return snapshot;
    });
  }

  async #lowestCheckpoint(): Promise<number> {
    const names = this.projections.map((projection) => projection.name);
    const rows = await sql<{ name: string; version: number; position: string | number; status: string }>`
      SELECT name, version, position, status FROM projection_checkpoints WHERE name = ANY(${names})`.execute(this.db);
    const running = rows.rows.filter((row) => row.status === 'running' && this.projections.some((p) => p.name === row.name && p.version === row.version));
    return running.length === 0 ? 0 : Math.min(...running.map((row) => Number(row.position)));
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = null;
    await this.#running;
  }
}
