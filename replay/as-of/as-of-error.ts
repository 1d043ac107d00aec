/** The typed data each as-of error carries, by code. */
export interface AsOfErrorDetails {
  /** Neither a log position (a whole number, 1 or more) nor an RFC 3339 instant with a zone. */
  ASOF_INVALID_POINT: { value: string; reason: string };
  /** A position past the head of the log. */
  ASOF_BEYOND_HEAD: { value: string; position: number; headPosition: number };
  /** An instant later than the ledger clock: its answer would change as the log grows. */
  ASOF_IN_FUTURE: { value: string; now: string; headPosition: number };
  /** An instant before the first event, or any point of an empty log: there is no read model to show. */
  ASOF_BEFORE_LOG: { value: string; firstRecordedAt: string | null };
  /**
   * The question needs what history does not keep: a column that changes with every poll (last contact, miss counters)
   * or a read model without versions (gaps, topology). Answering it from the present would not be an answer as of then.
   */
  ASOF_NOT_KEPT: { projections: string[]; reason: string };
  /** A projection the question needs is not one the engine knows. */
  ASOF_UNKNOWN_PROJECTION: { projection: string; known: string[] };
  /** The engine is stopping or stopped. */
  ASOF_STOPPED: Record<string, never>;
}

export type AsOfErrorCode = keyof AsOfErrorDetails;

/** What each code means and whether asking again the same way can succeed. */
export const asOfErrorCatalogue: Record<AsOfErrorCode, { retryable: boolean; meaning: string }> = {
  ASOF_INVALID_POINT: { retryable: false, meaning: 'asOf is neither a log position (1 or more) nor an RFC 3339 instant with a zone' },
  ASOF_BEYOND_HEAD: { retryable: false, meaning: 'the position is past the head of the log' },
  ASOF_IN_FUTURE: { retryable: false, meaning: 'the instant is later than the ledger clock' },
  ASOF_BEFORE_LOG: { retryable: false, meaning: 'the instant is before the first event of the log (or the log is empty)' },
  ASOF_NOT_KEPT: { retryable: false, meaning: 'the question needs columns or read models whose history is not kept (see docs/replay.md)' },
  ASOF_UNKNOWN_PROJECTION: { retryable: false, meaning: 'the question names a projection the engine does not run' },
  ASOF_STOPPED: { retryable: true, meaning: 'the as-of engine is stopping; ask again once the ledger is up' },
};

/**
 * A question as of a point of the log that cannot be answered as asked: a stable `code`, the typed `details` naming
 * what was wrong, and whether asking again can succeed. Narrow with `switch (error.code)` on `AnyAsOfError`.
 */
export class AsOfError<C extends AsOfErrorCode = AsOfErrorCode> extends Error {
  override readonly name = 'AsOfError';
  readonly code: C;
  readonly details: AsOfErrorDetails[C];
  readonly retryable: boolean;

  constructor(code: C, details: AsOfErrorDetails[C], message: string) {
    super(message);
    this.code = code;
    this.details = details;
    this.retryable = asOfErrorCatalogue[code].retryable;
  }
}

/** The union of every as-of error, for exhaustive `switch (error.code)`. */
export type AnyAsOfError = { [C in AsOfErrorCode]: AsOfError<C> }[AsOfErrorCode];

export function isAsOfError(error: unknown): error is AnyAsOfError {
  return error instanceof AsOfError;
}

/** Whether the error is about the question asked (the caller's input: its point, or asking as of a point at all) rather than the engine. */
export function isPointError(error: AnyAsOfError): boolean {
  switch (error.code) {
    case 'ASOF_INVALID_POINT':
    case 'ASOF_BEYOND_HEAD':
    case 'ASOF_IN_FUTURE':
    case 'ASOF_BEFORE_LOG':
    case 'ASOF_NOT_KEPT':
      return true;
    case 'ASOF_UNKNOWN_PROJECTION':
    case 'ASOF_STOPPED':
      return false;
    default: {
      const unknown: never = error;
      throw new Error(`unknown as-of error ${String(unknown)}`);
    }
  }
}
