import type { Kysely } from 'kysely';
import type { DynamicDatabase } from './database.js';
import type { EventStore } from './event-store.js';

export interface ProjectionRunnerOptions {
  batchSize?: number;
  /** How often a standby instance retries to become the live one. */
  standbyRetryMs?: number;
  log?: (message: string, fields?: Record<string, unknown>) => void;
  /**
   * What an event the projection cannot apply does: `set-aside` (the default) records it in
   * `projection_dead_letters`, appends `ProjectionEventSetAside` (an alarm) and goes on; `stop` stops the projection
   * with the event named, for tests and for a projection under development.
   */
  onFailure?: 'set-aside' | 'stop';
  /**
   * Called after each live batch is applied and checkpointed, with when its oldest event was recorded: the
   * difference is how long that event waited to be reflected in the read model (the projection's lag as its readers
   * feel it).
   */
  onApplied?: (projection: string, oldestRecordedAt: Date, events: number, appliedAt: Date) => void;
  /**
   * A rebuild of a projection that offers `holdTables` holds its tables in memory; past this many rows (per
   * projection, default 500,000) it writes them into the scratch schema and empties memory.
   */
  maxHeldRows?: number;
}

/** What running and rebuilding share: the store, its database as read models see it, and the runner's options. */
export interface ProjectionRunnerContext {
  readonly store: EventStore;
  readonly db: Kysely<DynamicDatabase>;
  readonly options: Required<ProjectionRunnerOptions>;
}

/** The context of a runner over `store`, with each option's default filled in. */
export function projectionRunnerContext(store: EventStore, options: ProjectionRunnerOptions): ProjectionRunnerContext {
  const resolved: Required<ProjectionRunnerOptions> = {
    batchSize: options.batchSize ?? 2000,
    standbyRetryMs: options.standbyRetryMs ?? 2000,
    log: options.log ?? (() => undefined),
    onFailure: options.onFailure ?? 'set-aside',
    onApplied: options.onApplied ?? (() => undefined),
    maxHeldRows: options.maxHeldRows ?? 500_000,
  };
  return { store, db: store.db as unknown as Kysely<DynamicDatabase>, options: resolved };
}
