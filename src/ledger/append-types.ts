import type { ProposedEvent } from '../../events/index.js';

/**
 * What the stream must look like for an append to proceed: exactly at a version (0 = no events yet),
 * `'no_stream'`, `'stream_exists'`, or `'any'`.
 */
export type ExpectedVersion = number | 'any' | 'no_stream' | 'stream_exists';

export interface AppendOptions {
  expectedVersion?: ExpectedVersion;
  /**
   * The caller gave up (a deadline passed, its call was cancelled): an append still waiting for its batch when this
   * aborts is never written, and rejects with the signal's reason. Once its batch is being committed it is written.
   */
  signal?: AbortSignal;
}

export interface AppendResult {
  stream: string;
  /** The stream's version after the append (its last event's streamVersion). */
  nextExpectedVersion: number;
  /** Global positions of the appended events, in order. */
  positions: number[];
  /** True when every event id was already stored with the same content: nothing was written. */
  idempotentReplay: boolean;
}

export type { ProposedEvent };
