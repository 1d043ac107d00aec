/**
 * The background worker that keeps snapshots coming as the projections advance: a copy of each projection every
 * `everyEvents` positions of its progress, or every `everyMs` when it advanced at all (a quiet ledger still gets a
 * snapshot a while after its last change), whichever comes first. Progress is each projection's own checkpoint, not
 * the head: a copy of a projection that lags would not bound its tail any better. The projections due together are
 * copied in one snapshot (in steady state, all of them). When none is due, it fills one stretch where a projection has
 * no copy for more than twice `everyEvents` (a copy that took long while the projection caught up fast leaves one),
 * from the copy before it along the log, so that no question's tail is much longer than the policy says.
 */
import { sql, type Kysely } from 'kysely';
import type { Projection, DynamicDatabase } from '../../src/ledger/index.js';
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
  /**
   * Called (within `exclusive`) when no projection is due: fills one stretch where a projection has no copy for far
   * longer than the policy asks, and returns the snapshots made (none: nothing to fill).
   */
  fillGap?(): Promise<SnapshotSummary[]>;
  onSnapshot?(snapshot: SnapshotSummary, pruned: number): void;
  onError?(error: unknown): void;
}

export class Snapshotter {
  #timer: NodeJS.Timeout | null = null;
  #running: Promise<void> | null = null;
  #stopped = false;

  constructor(
    private readonly db: Kysely<DynamicDatabase>,
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

  /**
   * Takes a snapshot of the projections the policy says are due; returns it (null: none due, or another process took
   * it). Each projection is due on its own progress since its own newest copy: one that lags the others (a slow
   * projection during a burst) is copied as it catches up instead of waiting for the slowest, so no projection's
   * copies are further apart than its progress during one snapshot.
   */
  async tick(now: Date = new Date()): Promise<SnapshotSummary | null> {
    return this.hooks.exclusive(async () => {
      const progress = await this.#checkpoints();
      if (progress.size === 0) return null;
      const names = [...progress.keys()];
      // Each projection's newest copy, and when it was taken: a fill copies earlier positions later, and must not
      // put off the copy the time rule owes a quiet ledger.
      const newest = await sql<{ projection: string; version: number; position: string | number; taken_at: Date }>`
        SELECT DISTINCT ON (p.projection, p.version) p.projection, p.version, p.position, s.taken_at
          FROM as_of_snapshot_parts p JOIN as_of_snapshots s ON s.id = p.snapshot_id
         WHERE p.projection = ANY(${names})
         ORDER BY p.projection, p.version, p.position DESC, s.taken_at DESC`.execute(this.db);
      const due = this.projections.filter((projection) => {
        const at = progress.get(projection.name);
        if (at === undefined) return false;
        const last = newest.rows.find((row) => row.projection === projection.name && row.version === projection.version);
        const lastPosition = Number(last?.position ?? 0);
        const lastAt = last ? new Date(last.taken_at).getTime() : 0;
        return at - lastPosition >= this.policy.everyEvents || (at > lastPosition && now.getTime() - lastAt >= this.policy.everyMs);
      });
      if (due.length === 0) {
        const filled = (await this.hooks.fillGap?.()) ?? [];
        for (const snapshot of filled) this.hooks.onSnapshot?.(snapshot, 0);
        return filled[filled.length - 1] ?? null;
      }
      const snapshot = await takeSnapshot(this.db, due);
      if (!snapshot) return null;
      const pruned = await pruneSnapshots(this.db, await listSnapshots(this.db), this.policy.retention, now);
      this.hooks.onSnapshot?.(snapshot, pruned.length);
      return snapshot;
    });
  }

  /** The checkpoint of each projection that runs at the version this process knows. */
  async #checkpoints(): Promise<Map<string, number>> {
    const names = this.projections.map((projection) => projection.name);
    const rows = await sql<{ name: string; version: number; position: string | number; status: string }>`
      SELECT name, version, position, status FROM projection_checkpoints WHERE name = ANY(${names})`.execute(this.db);
    const running = rows.rows.filter((row) => row.status === 'running' && Number(row.position) > 0 && this.projections.some((p) => p.name === row.name && p.version === row.version));
    return new Map(running.map((row) => [row.name, Number(row.position)]));
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = null;
    await this.#running;
  }
}
