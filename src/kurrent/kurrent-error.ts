import { Metadata, status, type ServiceError } from '@grpc/grpc-js';
import type { AuthorizationRefusal } from '../api/index.js';
import { isLedgerError } from '../ledger/index.js';

/**
 * An answer of the gRPC face that is an error: a gRPC status, the message, and the trailers the KurrentDB client
 * reads. `exception` is the client's own tag (`access-denied`, `stream-deleted`, ...: the 6.x client turns it
 * into its typed error); `fleet-ledger-code` is our stable code and `field` names what was wrong in the request.
 */
export class KurrentCallError extends Error {
  override readonly name = 'KurrentCallError';
  readonly status: status;
  readonly trailers: Record<string, string>;

  constructor(code: status, message: string, trailers: Record<string, string> = {}) {
    super(message);
    this.status = code;
    this.trailers = trailers;
  }

  /**
   * The authorization policy's refusal, as the client's `AccessDeniedError`: the same code and typed details the HTTP
   * API answers with (`fleet-ledger-code`, `fleet-ledger-details` as JSON), the code also leading the message (a
   * BatchAppend refusal reaches the client as its message only).
   */
  static refused(refusal: AuthorizationRefusal): KurrentCallError {
    return new KurrentCallError(refusal.code === 'API_UNAUTHORIZED' ? status.UNAUTHENTICATED : status.PERMISSION_DENIED, `${refusal.code}: ${refusal.message}`, {
      exception: 'access-denied',
      'fleet-ledger-code': refusal.code,
      'fleet-ledger-details': JSON.stringify(refusal.details),
    });
  }

  /** The request is malformed or names something the ledger refuses; `field` says where. */
  static badRequest(field: string, message: string, code = 'KURRENT_BAD_REQUEST'): KurrentCallError {
    return new KurrentCallError(status.INVALID_ARGUMENT, `${field}: ${message}`, { 'fleet-ledger-code': code, field });
  }

  static unsupported(message: string): KurrentCallError {
    return new KurrentCallError(status.UNIMPLEMENTED, message, { 'fleet-ledger-code': 'KURRENT_UNSUPPORTED' });
  }
}

/** The gRPC error for anything a handler threw: ours as they are, the ledger's by their retryability. */
export function serviceError(error: unknown): Partial<ServiceError> {
  const known = toCallError(error);
  const metadata = new Metadata();
  for (const [key, value] of Object.entries(known.trailers)) metadata.set(key, value);
  return { code: known.status, details: known.message, metadata };
}

function toCallError(error: unknown): KurrentCallError {
  if (error instanceof KurrentCallError) return error;
  if (isLedgerError(error)) {
    switch (error.code) {
      case 'LEDGER_INVALID_EVENT': {
        const issue = error.details.issues[0];
        const path = issue?.path ?? '(event)';
        // Payload issues are paths inside `data`; envelope issues (eventId, observedAt, ...) are named as they are.
        const field = ['eventId', 'observedAt', 'correlationId', 'causationId', '(event)'].some((name) => path === name) || path.startsWith('actor') ? path : `data.${path}`;
        return KurrentCallError.badRequest(`events[${error.details.index}].${field}`, `${issue?.message ?? 'is invalid'} (${error.details.type})`, error.code);
      }
      case 'LEDGER_UNKNOWN_EVENT_TYPE':
        return KurrentCallError.badRequest(`events[${error.details.index}].type`, `unknown event type '${error.details.type}'`, error.code);
      case 'LEDGER_INVALID_STREAM':
        return KurrentCallError.badRequest('stream', error.details.reason, error.code);
      case 'LEDGER_EMPTY_APPEND':
        return KurrentCallError.badRequest('events', 'an append carries at least one event', error.code);
      case 'LEDGER_IDEMPOTENCY_CONFLICT':
        return KurrentCallError.badRequest('events.id', error.message, error.code);
      case 'LEDGER_WRONG_EXPECTED_VERSION': {
        // The trailers of KurrentDB's own answer: revisions, and its numbers for the symbolic expectations.
        const { stream, expected, actual } = error.details;
        const expectedRevision = typeof expected === 'number' ? expected - 1 : { any: -2, no_stream: -1, stream_exists: -4 }[expected];
        return new KurrentCallError(status.FAILED_PRECONDITION, error.message, {
          exception: 'wrong-expected-version',
          'fleet-ledger-code': error.code,
          'stream-name': stream,
          'expected-version': String(expectedRevision),
          ...(actual > 0 ? { 'actual-version': String(actual - 1) } : {}),
        });
      }
      case 'LEDGER_STALE_EPOCH':
        return new KurrentCallError(status.FAILED_PRECONDITION, error.message, { 'fleet-ledger-code': error.code, ...('shard' in error.details ? { shard: error.details.shard } : { saga: error.details.saga }), epoch: String(error.details.epoch) });
      case 'LEDGER_STORE_UNAVAILABLE':
      case 'LEDGER_COMMIT_UNKNOWN':
      case 'LEDGER_STORAGE_FULL':
      case 'LEDGER_CLOSED':
      case 'LEDGER_DATA_DIR_LOCKED':
      case 'LEDGER_EMBEDDED_START_FAILED':
      case 'LEDGER_POSITION_SIGNED':
        return new KurrentCallError(status.UNAVAILABLE, error.message, { 'fleet-ledger-code': error.code, retryable: String(error.retryable) });
      default: {
        const unknown: never = error;
        return new KurrentCallError(status.INTERNAL, String(unknown));
      }
    }
  }
  return new KurrentCallError(status.INTERNAL, 'internal error', { 'fleet-ledger-code': 'KURRENT_INTERNAL' });
}
