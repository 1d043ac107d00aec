/**
 * The one-round-trip guess of the group commit: what this process knows of the log between its batches (the head it
 * left, the versions of the streams it wrote or read since, the database's clock as it last saw it), and the batch
 * assembled against that knowledge before the append lock is taken. A wrong guess writes nothing (the write's guard
 * and the unique indexes refuse it); the batch then goes the long way, under the lock.
 */
import { assemble, leaseOf, type Assembled, type PendingAppend } from './batch-assembly.js';
import { isStatementError } from './commit-resolution.js';
import type { WriteGuard } from './write-statement.js';

/** How far a one-round-trip batch's `recorded_at` may be from the database's clock, in seconds. */
const CLOCK_BOUND_S = 0.25;
/** Streams whose versions a store keeps to assume in one-round-trip batches. */
const KNOWN_STREAMS_MAX = 100_000;

/**
 * A one-round-trip write refused by a unique index because what it assumed was wrong: its stream already holds that
 * version (unique on (stream, stream_version)), or an event id its caller gave is stored already (a retry).
 */
export function isGuessRefused(error: unknown): boolean {
  const candidate = error as { code?: unknown; constraint?: unknown };
  return isStatementError(error) && candidate.code === '23505' && (candidate.constraint === 'ledger_events_stream_version' || candidate.constraint === 'ledger_events_event_id_key');
}

/** What a guess is checked against besides what it knows: how many batches this store committed, the signed size. */
export interface GuessContext {
  batches: number;
  signedSize: number;
  clock: (() => Date) | undefined;
}

/** What this process knows of the log between its batches, for one-round-trip commits. */
export class Speculation {
  head: { position: number; hash: Buffer; recordedAt: Date } | null = null;
  readonly versions = new Map<string, number>();
  clockOffsetMs = 0;
  misses = 0;
  pausedUntilBatch = 0;
  unsupported = false;

  /**
   * The one-round-trip guess, or null. When this process committed the log's head last, it knows the head (position,
   * hash, time) and the versions of the streams it wrote or read since, so it can assemble a batch (positions,
   * versions, hashes) before taking the lock, and send BEGIN, the lock, a guarded write and COMMIT at once. The guard,
   * evaluated under the lock, writes nothing unless the head is the one the batch was chained onto and `recorded_at`
   * is within `CLOCK_BOUND_S` of the database's clock (the ledger clock stays the database server's; this process
   * estimates it from the last time it read it). A stream not known is assumed absent; if it is not, or is past the
   * version assumed, the unique index on (stream, stream_version) refuses the write, and nothing is written either.
   * An event id a caller gave is assumed new; if it is stored (a retry), the unique index on event ids refuses the
   * write, and the long way answers the retry. Not guessed: appends carrying leases (their epochs are read under the
   * lock), and batches in which an append would fail its expected version against what is known.
   */
  guess(batch: PendingAppend[], context: GuessContext): { assembled: Assembled; recordedAt: Date; guard: WriteGuard } | null {
    const head = this.head;
    if (!head || this.unsupported || context.batches < this.pausedUntilBatch) return null;
    // The long way checks the signed size under the lock.
    if (head.position < context.signedSize) return null;
    for (const pending of batch) {
      for (const event of pending.events) if (leaseOf(event) !== undefined) return null;
    }
    const clock = context.clock;
    const now = clock ? clock() : new Date(Date.now() + this.clockOffsetMs);
    const recordedAt = now.getTime() >= head.recordedAt.getTime() ? now : head.recordedAt;
    const versions = new Map<string, number>();
    for (const pending of batch) {
      const version = this.versions.get(pending.stream);
      if (version !== undefined) versions.set(pending.stream, version);
    }
    const assembled = assemble(batch, { position: head.position, hash: head.hash, recordedAt, versions, known: new Map(), leases: new Map(), sagaLeases: new Map() });
    if (assembled.columns.eventId.length === 0 || assembled.settled.some((outcome) => !outcome.ok)) return null;
    return { assembled, recordedAt, guard: { headPosition: head.position, clockBoundS: clock ? Infinity : CLOCK_BOUND_S } };
  }

  /** The head this batch left, and the stream versions it wrote: what the next batch may assume. */
  remember(position: number, hash: Buffer, recordedAt: Date, touched: Map<string, { version: number }>): void {
    this.head = { position, hash, recordedAt };
    const versions = this.versions;
    for (const [stream, { version }] of touched) {
      versions.delete(stream);
      versions.set(stream, version);
    }
    // Bounded: the streams least recently written are forgotten first (a forgotten one is assumed absent, and a miss
    // teaches it again).
    for (const stream of versions.keys()) {
      if (versions.size <= KNOWN_STREAMS_MAX) break;
      versions.delete(stream);
    }
  }

  forget(): void {
    this.head = null;
    this.versions.clear();
  }
}
