import { ledgerErrorCatalogue, type LedgerErrorCode } from '../ledger/index.js';
import type { BodyCapName } from './body-caps.js';

/** The typed data each API error carries, by code. */
export interface ApiErrorDetails {
  API_UNAUTHORIZED: { reason: 'missing' | 'unknown' | 'plaintext' };
  API_FORBIDDEN: { role: string; allowed: readonly string[] };
  API_STREAM_MISMATCH: { stream: string; derivedStream: string; type: string };
  API_STREAM_RESERVED: { stream: string; owner: string; type: string };
  API_INVALID_REQUEST: { field: string; reason: string; offset?: number; issues?: Array<{ field: string; reason: string }>; problems?: Array<{ line: number; field: string | null; reason: string }> };
  API_NOT_FOUND: { resource: string; id?: string };
  API_CONFLICT: { reason: string; status?: string; expected?: number; actual?: number };
  API_UNSUPPORTED_MEDIA_TYPE: { contentType: string };
  API_PAYLOAD_TOO_LARGE: { limitBytes: number; cap: BodyCapName };
  API_NOT_READY: { reasons: string[] };
  API_TOO_MANY_REQUESTS: { limit: number; resource: string };
  API_INTERNAL: Record<string, never>;
}

export type ApiErrorCode = keyof ApiErrorDetails;

/** Every API code with its HTTP status and meaning. The README's error table mirrors this (a test checks it). */
export const apiErrorCatalogue: Record<ApiErrorCode, { status: number; meaning: string }> = {
  API_UNAUTHORIZED: { status: 401, meaning: 'no bearer token, a token that is not configured, or (KurrentDB face) credentials sent over plaintext (`details.reason`)' },
  API_FORBIDDEN: { status: 403, meaning: "the token's role may not use this route, append this event type, or report for this node" },
  API_STREAM_MISMATCH: { status: 403, meaning: 'the event belongs in the stream derived from its content (`details.derivedStream`), not the one named; nothing was written' },
  API_STREAM_RESERVED: { status: 403, meaning: 'the stream is written by the ledger itself (poll batches, sagas, capacity, leases, EBOM imports: `details.owner`); nothing was written' },
  API_INVALID_REQUEST: {
    status: 400,
    meaning: 'a parameter, header or body field is invalid (body text that is not UTF-8 and integers beyond 2^53 - 1 included, `details.offset` the byte); `details.field` names it and nothing was written',
  },
  API_NOT_FOUND: { status: 404, meaning: 'the route, node, stream or alarm does not exist' },
  API_CONFLICT: {
    status: 409,
    meaning: "the saga is not in a state that allows the verb, its revision moved on, or a live feed's resume point is not in this log (resume-point-not-in-log: the log was restored) or cannot be checked (resume-id-without-hash) (`details.reason`)",
  },
  API_UNSUPPORTED_MEDIA_TYPE: { status: 415, meaning: 'the body has a content type the route does not read' },
  API_PAYLOAD_TOO_LARGE: { status: 413, meaning: 'the body is larger than its cap (`details.cap`, `details.limitBytes`: README "Body caps"); refused while it arrived, nothing was parsed or written' },
  API_NOT_READY: { status: 503, meaning: 'the store is unreachable, or a projection failed or lags too far (readiness)' },
  API_TOO_MANY_REQUESTS: { status: 429, meaning: 'a bounded resource (live feeds open at once) is at its limit; try again later (`details.limit`)' },
  API_INTERNAL: { status: 500, meaning: 'an unexpected failure; the log has the detail, the answer does not' },
};

/**
 * The HTTP status of every ledger error, in one place. Typed as a full record so a new ledger code does not
 * compile until it has a status here (and a row in the README, which a test checks).
 */
export const ledgerErrorStatus: Record<LedgerErrorCode, number> = {
  LEDGER_WRONG_EXPECTED_VERSION: 409,
  LEDGER_EMPTY_APPEND: 400,
  LEDGER_INVALID_STREAM: 400,
  LEDGER_INVALID_EVENT: 400,
  LEDGER_UNKNOWN_EVENT_TYPE: 400,
  LEDGER_IDEMPOTENCY_CONFLICT: 409,
  LEDGER_STORE_UNAVAILABLE: 503,
  LEDGER_COMMIT_UNKNOWN: 503,
  LEDGER_STORAGE_FULL: 507,
  LEDGER_DATA_DIR_LOCKED: 503,
  LEDGER_EMBEDDED_START_FAILED: 503,
  LEDGER_CLOSED: 503,
  LEDGER_POSITION_SIGNED: 503,
  LEDGER_STALE_EPOCH: 409,
};

/** Every code an API answer can carry, with its status: the source of the README table test. */
export function documentedErrorCodes(): Array<{ code: string; status: number; retryable: boolean | null }> {
  return [
    ...Object.entries(apiErrorCatalogue).map(([code, entry]) => ({ code, status: entry.status, retryable: code === 'API_NOT_READY' ? true : null })),
    ...Object.entries(ledgerErrorStatus).map(([code, status]) => ({ code, status, retryable: ledgerErrorCatalogue[code as LedgerErrorCode].retryable })),
  ];
}

/** An error answered by the API: a stable code, its status from the catalogue, and typed details. */
export class ApiError<C extends ApiErrorCode = ApiErrorCode> extends Error {
  override readonly name = 'ApiError';
  readonly code: C;
  readonly details: ApiErrorDetails[C];
  readonly status: number;

  constructor(code: C, details: ApiErrorDetails[C], message: string) {
    super(message);
    this.code = code;
    this.details = details;
    this.status = apiErrorCatalogue[code].status;
  }
}

/** The body of every error answer. */
export interface ErrorBody {
  error: { code: string; message: string; details: unknown };
}
