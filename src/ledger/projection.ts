import type { Kysely, Transaction } from 'kysely';
import type { RecordedEvent } from '../../events/index.js';

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
  /**
   * Those of `tables` that hold the projection's own working state between batches (read by `apply` alone, never by a
   * query). Time travel keeps them in memory while it applies a tail instead of writing them, and offers no view of them.
   */
  readonly workingTables?: readonly string[];
  /** Creates its tables (if absent) in the schema `db` is bound to. */
  createTables(db: Kysely<any>): Promise<void>;
  /**
   * Applies a batch of events in position order. Throwing stops the projection with the error recorded
   * against the event; it is never skipped.
   */
  apply(trx: Transaction<any>, events: readonly RecordedEvent[]): Promise<void>;
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
