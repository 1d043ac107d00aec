import type { ExpectedVersion } from './append-types.js';

/** The typed data each ledger error carries, by code. */
export interface LedgerErrorDetails {
  LEDGER_WRONG_EXPECTED_VERSION: { stream: string; expected: ExpectedVersion; actual: number };
  LEDGER_EMPTY_APPEND: { stream: string };
  LEDGER_INVALID_STREAM: { stream: string; reason: string };
  LEDGER_INVALID_EVENT: { stream: string; index: number; type: string; issues: { path: string; message: string }[] };
  LEDGER_UNKNOWN_EVENT_TYPE: { stream: string; index: number; type: string };
  LEDGER_IDEMPOTENCY_CONFLICT: { stream: string; eventId: string; storedStream: string; reason: string };
  LEDGER_STORE_UNAVAILABLE: { operation: string; cause: string };
  LEDGER_COMMIT_UNKNOWN: { eventIds: string[]; cause: string };
  LEDGER_STORAGE_FULL: { location: string; freeBytes: number | null; minFreeBytes: number | null };
  LEDGER_DATA_DIR_LOCKED: { dataDir: string; pid: number };
  LEDGER_EMBEDDED_START_FAILED: { dataDir: string; cause: string };
  LEDGER_CLOSED: { operation: string };
  /** `position`: the one the append would have taken; `signedSize`: the leaves already signed or folded into the tree. */
  LEDGER_POSITION_SIGNED: { position: number; signedSize: number };
  /** `shard` for a poll lease, `saga` for a saga's lease: the one whose epoch the append carried. */
  LEDGER_STALE_EPOCH: { stream: string; epoch: number; currentEpoch: number | null; owner: string | null } & ({ shard: string } | { saga: string });
}

export type LedgerErrorCode = keyof LedgerErrorDetails;

/** What each code means and whether retrying the same call can succeed. The README table mirrors this. */
export const ledgerErrorCatalogue: Record<LedgerErrorCode, { retryable: boolean; meaning: string }> = {
  LEDGER_WRONG_EXPECTED_VERSION: { retryable: false, meaning: 'the stream is not at the version the append expected' },
  LEDGER_EMPTY_APPEND: { retryable: false, meaning: 'an append must carry at least one event' },
  LEDGER_INVALID_STREAM: { retryable: false, meaning: 'the stream name is not valid' },
  LEDGER_INVALID_EVENT: { retryable: false, meaning: 'an event payload failed the schema of its type; the field and reason are named' },
  LEDGER_UNKNOWN_EVENT_TYPE: { retryable: false, meaning: 'the event type is not in the catalogue' },
  LEDGER_IDEMPOTENCY_CONFLICT: { retryable: false, meaning: 'an event id is already stored with different content or in another stream' },
  LEDGER_STORE_UNAVAILABLE: { retryable: true, meaning: 'PostgreSQL could not be reached or the transaction failed; nothing of the append was committed' },
  LEDGER_COMMIT_UNKNOWN: {
    retryable: true,
    meaning: 'the connection was lost after COMMIT was sent and the database could not be asked in time whether it committed; a retry with the same event ids is safe (it is answered as a replay if it did)',
  },
  LEDGER_STORAGE_FULL: {
    retryable: true,
    meaning: 'the disk holding the ledger is full, or below the free space kept in reserve for PostgreSQL; nothing of the append was committed; retry once space is freed',
  },
  LEDGER_DATA_DIR_LOCKED: { retryable: false, meaning: 'another live process owns the embedded data folder' },
  LEDGER_EMBEDDED_START_FAILED: { retryable: false, meaning: 'the embedded PostgreSQL could not be initialised or started' },
  LEDGER_CLOSED: { retryable: false, meaning: 'the ledger has been closed' },
  LEDGER_POSITION_SIGNED: {
    retryable: false,
    meaning: "the append would take a position the ledger has already signed (the log's head is behind its Merkle tree or a published checkpoint: rows deleted or an older copy restored); nothing was committed; an operator must resolve the log first",
  },
  LEDGER_STALE_EPOCH: {
    retryable: false,
    meaning: "the events were written under a poll lease or saga lease whose epoch is no longer current (another process took the shard or the saga over, or the shard was released); nothing was committed",
  },
};

/**
 * An error of the ledger: a stable `code`, the typed `details` of that code, and whether a retry of the
 * same call can succeed. Narrow with `switch (error.code)` on `AnyLedgerError`.
 */
export class LedgerError<C extends LedgerErrorCode = LedgerErrorCode> extends Error {
  override readonly name = 'LedgerError';
  readonly code: C;
  readonly details: LedgerErrorDetails[C];
  readonly retryable: boolean;

  constructor(code: C, details: LedgerErrorDetails[C], message: string) {
    super(message);
    this.code = code;
    this.details = details;
    this.retryable = ledgerErrorCatalogue[code].retryable;
  }
}

/** The union of every ledger error, for exhaustive `switch (error.code)`. */
export type AnyLedgerError = { [C in LedgerErrorCode]: LedgerError<C> }[LedgerErrorCode];

export function isLedgerError(error: unknown): error is AnyLedgerError {
  return error instanceof LedgerError;
}
