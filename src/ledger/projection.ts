import type { Kysely, Transaction } from 'kysely';
import type { RecordedEvent } from '../../events/index.js';
import type { DynamicDatabase } from './database.js';

/**
 * A read model derived from the log. The runner gives `apply` a transaction bound to the schema the
 * projection's tables live in (`public` when live, a scratch schema during a rebuild), and commits the
 * projection's checkpoint in that same transaction: each event is applied exactly once.
 */
export interface Projection {
  /** Stable name: the checkpoint row, the advisory lock and the rebuild schema are keyed on it. */
  readonly name: string;
  /** Bump when `apply` or the tables change: the runner then rebuilds from zero before going live. */
  readonly version: number;
  /** The event types this projection reads; only these are delivered. */
  readonly eventTypes: readonly string[];
  /** The tables it owns, swapped as a whole by a rebuild. */
  readonly tables: readonly string[];
  /** Those of `tables` that hold the projection's own working state between batches (read by `apply` alone, never by a query). */
  readonly workingTables?: readonly string[];
  /**
   * Offered by a projection whose `apply` reaches its tables only through loads, upserts and deletes that can be held
   * in memory: a rebuild then holds its tables in memory from the empty scratch schema, page after page, and writes
   * them with set-based statements once, before the swap (or whenever more rows are held than the rebuild allows).
   */
  holdTables?(): HeldTableSet;
  /** Creates its tables (if absent) in the schema `db` is bound to. */
  createTables(db: Kysely<DynamicDatabase>): Promise<void>;
  /**
   * Applies a batch of events in position order. Throwing stops the projection with the error recorded
   * against the event; it is never skipped.
   */
  apply(trx: Transaction<DynamicDatabase>, events: readonly RecordedEvent[]): Promise<void>;
}

/**
 * A projection's tables held in memory (see `Projection.holdTables`). `run` makes the applies inside it read and write
 * memory; `begin` .. `commit` brackets one apply, and `rollback` undoes it in memory as a rolled-back transaction does
 * in the database; `flush` writes what changed into the tables `db` is bound to, and with `evict` empties memory.
 */
export interface HeldTableSet {
  run<T>(work: () => Promise<T>): Promise<T>;
  begin(): void;
  commit(): void;
  rollback(): void;
  /** Rows held now (the tables' rows: what a flush with `evict` lets go). */
  readonly rows: number;
  /** Entries held besides the rows that only wait to be written (row versions already closed). */
  readonly pending: number;
  /** Writes what only waits to be written (`pending`), keeping the rows in memory. */
  flushPending(db: Kysely<DynamicDatabase>): Promise<void>;
  /** `complete`: the rebuild's last flush (everything it accumulated is written; nothing follows but the swap). */
  flush(db: Kysely<DynamicDatabase>, options?: { evict?: boolean; complete?: boolean }): Promise<void>;
}

/** Raised by `apply` to name the event it could not apply and why. */
export class ProjectionApplyError extends Error {
  constructor(
    readonly event: RecordedEvent,
    reason: string,
  ) {
    super(reason);
  }
}
