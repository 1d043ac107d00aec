/** The typed data each history error carries, by code. */
export interface HistoryErrorDetails {
  /** Neither a log position (a whole number) nor an RFC 3339 instant with a zone. */
  HISTORY_INVALID_POINT: { parameter: 'from' | 'to'; value: string; reason: string };
  /** A position past the head of the log, or an instant in the future (its answer would change as the log grows). */
  HISTORY_POINT_BEYOND_HEAD: { parameter: 'from' | 'to'; value: string; headPosition: number };
  /** `from` is after `to`. */
  HISTORY_WINDOW_REVERSED: { parameter: 'from'; from: string; to: string };
}

export type HistoryErrorCode = keyof HistoryErrorDetails;

/** What each code means. None is retryable: the same question gets the same answer. */
export const historyErrorCatalogue: Record<HistoryErrorCode, { meaning: string }> = {
  HISTORY_INVALID_POINT: { meaning: 'a window bound is neither a log position nor an RFC 3339 instant' },
  HISTORY_POINT_BEYOND_HEAD: { meaning: 'a window bound is past the head of the log or in the future' },
  HISTORY_WINDOW_REVERSED: { meaning: 'the window starts after it ends' },
};

/**
 * A question about the log's history that cannot be answered as asked: a stable `code`, the typed `details` naming
 * the parameter at fault. Terminal: asking again the same way gets the same refusal.
 */
export class HistoryError<C extends HistoryErrorCode = HistoryErrorCode> extends Error {
  override readonly name = 'HistoryError';
  readonly code: C;
  readonly details: HistoryErrorDetails[C];
  readonly retryable = false;

  constructor(code: C, details: HistoryErrorDetails[C], message: string) {
    super(message);
    this.code = code;
    this.details = details;
  }
}

/** The union of every history error, for exhaustive `switch (error.code)`. */
export type AnyHistoryError = { [C in HistoryErrorCode]: HistoryError<C> }[HistoryErrorCode];

export function isHistoryError(error: unknown): error is AnyHistoryError {
  return error instanceof HistoryError;
}
