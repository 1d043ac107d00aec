import type { Kysely } from 'kysely';
import pg from 'pg';
import type { Projection } from './projection.js';
import type { EventStore } from './event-store.js';
import { boundedConnection } from './connection-bounds.js';
import type { DynamicDatabase } from './database.js';
import { ensureProjectionTables } from './projection-checkpoint.js';
import { superviseProjection, type LiveProjection } from './projection-follow.js';
import { tryLockProjection } from './projection-lock.js';
import { rebuildLocked, rebuildTogether } from './projection-rebuild.js';
import { projectionRunnerContext, type ProjectionRunnerContext, type ProjectionRunnerOptions } from './projection-runner-context.js';
import type { ProjectionStatus, RebuildProgress, RebuildResult } from './projection-status.js';

// The runner's public surface (re-exported by the ledger's index) lives in these files; one import site for it.
export type { ProjectionFailure, ProjectionStatus, ProjectionStatusSource, RebuildProgress, RebuildResult } from './projection-status.js';
export type { ProjectionRunnerOptions } from './projection-runner-context.js';
export { projectionLockKey } from './projection-lock.js';
export { isTransientDatabaseError } from './transient-database-error.js';

/**
 * Runs projections against the log. Guarantees:
 * - exactly once: a batch's read-model writes and the checkpoint commit in one transaction, and the
 *   checkpoint only moves from the position this instance read (a second writer would fail, not repeat);
 * - one live instance per projection, by a session advisory lock; others wait as standby;
 * - an event that cannot be applied stops that projection (status `failed`, with the event and the
 *   reason), never skipped; the other projections go on;
 * - a rebuild writes into fresh tables in a scratch schema and swaps them in one transaction.
 *
 * This class holds the live loops and decides when they pause; following the log is `projection-follow.ts`,
 * rebuilding and the swap `projection-rebuild.ts`, setting an event aside `projection-set-aside.ts`.
 */
export class ProjectionRunner {
  readonly #live = new Map<string, LiveProjection>();
  readonly #context: ProjectionRunnerContext;

  constructor(
    private readonly store: EventStore,
    private readonly projections: readonly Projection[],
    options: ProjectionRunnerOptions = {},
  ) {
    this.#context = projectionRunnerContext(store, options);
  }

  get db(): Kysely<DynamicDatabase> {
    return this.store.db as unknown as Kysely<DynamicDatabase>;
  }

  /** Creates every projection's tables and starts each one (live, or standby if another instance runs it). */
  async start(): Promise<void> {
    for (const projection of this.projections) await ensureProjectionTables(this.#context, projection);
    for (const projection of this.projections) this.#startOne(projection);
  }

  #startOne(projection: Projection): void {
    const abort = new AbortController();
    const live: LiveProjection = {
      projection,
      abort,
      lastAppliedAt: null,
      lockClient: null,
      status: { name: projection.name, version: projection.version, state: 'starting', position: 0, headPosition: 0, lagPositions: 0, lagSeconds: 0, error: null, setAside: 0 },
      done: Promise.resolve(),
    };
    this.#live.set(projection.name, live);
    live.done = superviseProjection(this.#context, live);
  }

  #projection(name: string): Projection {
    const projection = this.projections.find((p) => p.name === name);
    if (!projection) throw new Error(`unknown projection '${name}' (known: ${this.projections.map((p) => p.name).join(', ')})`);
    return projection;
  }

  /**
   * Rebuilds one projection from zero (or up to `toPosition`) into fresh tables, then swaps them in.
   * The projection's live loop in this process is paused meanwhile; the others keep running.
   */
  async rebuild(name: string, options: { toPosition?: number; onProgress?: (progress: RebuildProgress) => void } = {}): Promise<RebuildResult> {
    const projection = this.#projection(name);
    const live = this.#live.get(name);
    if (live) {
      live.abort.abort();
      await live.done;
    }
    await ensureProjectionTables(this.#context, projection);
    const client = new pg.Client(boundedConnection(this.store.connectionString));
    client.on('error', () => undefined);
    await client.connect();
    try {
      if (!(await tryLockProjection(client, name))) throw new Error(`projection ${name} is live in another process; stop it there or rebuild there`);
      return await rebuildLocked(this.#context, projection, options);
    } finally {
      await client.end();
      if (live) this.#startOne(projection);
    }
  }

  /**
   * Rebuilds several projections from zero at once over one read of the log (each page read once, while the one
   * before is applied; each projection applies the events of its types in its own transaction, side by side), each
   * into its own scratch schema, each swapped in when the log is read to the end. Their live loops in this process
   * pause meanwhile. Refused (nothing changed) if any of them is live in another process.
   */
  async rebuildAll(
    names: readonly string[] = this.projections.map((p) => p.name),
    options: { toPosition?: number; maxPageBytes?: number; maxPageEvents?: number; onProgress?: (progress: RebuildProgress) => void } = {},
  ): Promise<Map<string, RebuildResult>> {
    const chosen = names.map((name) => this.#projection(name));
    const paused = chosen.filter((projection) => this.#live.has(projection.name));
    for (const projection of paused) this.#live.get(projection.name)!.abort.abort();
    await Promise.all(paused.map((projection) => this.#live.get(projection.name)?.done));
    const client = new pg.Client(boundedConnection(this.store.connectionString));
    client.on('error', () => undefined);
    await client.connect();
    try {
      for (const projection of chosen) {
        await ensureProjectionTables(this.#context, projection);
        if (!(await tryLockProjection(client, projection.name))) throw new Error(`projection ${projection.name} is live in another process; stop it there or rebuild there`);
      }
      return await rebuildTogether(this.#context, chosen, options);
    } finally {
      await client.end();
      for (const projection of paused) this.#startOne(projection);
    }
  }

  /** Position, lag and state of every projection (for health and metrics). */
  async status(): Promise<ProjectionStatus[]> {
    const head = await this.store.head();
    // A standby's own position is where it last applied (nothing, often): the read model is as current as the live
    // instance in another process keeps it, which is the checkpoint row. Read it, so a standby process is not
    // reported lagging (and not ready) while the read model is current.
    const standby = [...this.#live.values()].filter((live) => live.status.state === 'standby').map((live) => live.status.name);
    const checkpoints = new Map<string, { position: number; updatedAt: Date }>();
    if (standby.length > 0) {
      const rows = await this.db.selectFrom('projection_checkpoints').select(['name', 'position', 'updated_at']).where('name', 'in', standby).execute();
      for (const row of rows) checkpoints.set(String(row.name), { position: Number(row.position), updatedAt: new Date(row.updated_at as unknown as string) });
    }
    return [...this.#live.values()].map((live) => {
      const shared = live.status.state === 'standby' ? checkpoints.get(live.status.name) : undefined;
      const position = shared ? Math.max(live.status.position, shared.position) : live.status.position;
      const appliedAt = shared ? shared.updatedAt : live.lastAppliedAt;
      const lagPositions = Math.max(0, head.position - position);
      const lagSeconds = lagPositions === 0 ? 0 : Math.max(0, (head.recordedAt.getTime() - (appliedAt?.getTime() ?? head.recordedAt.getTime())) / 1000);
      return { ...live.status, position, headPosition: head.position, lagPositions, lagSeconds };
    });
  }

  /** Clears a failed projection so it resumes from its checkpoint (after the cause was fixed). */
  async clearFailure(name: string): Promise<void> {
    await this.db.updateTable('projection_checkpoints').set({ status: 'running', error: null, updated_at: new Date() }).where('name', '=', name).execute();
    const live = this.#live.get(name);
    const projection = this.projections.find((p) => p.name === name);
    if (live && projection && live.status.state === 'failed') this.#startOne(projection);
  }

  async stop(): Promise<void> {
    for (const live of this.#live.values()) live.abort.abort();
    await Promise.all([...this.#live.values()].map((live) => live.done));
  }
}
