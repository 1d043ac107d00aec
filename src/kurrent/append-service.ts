/**
 * Streams.Append and Streams.BatchAppend: a client's events appended to one stream of the ledger with the
 * client's expected revision, each event validated by the catalogue and allowed by the authorization policy the HTTP
 * API asks too (`appendRefusal`: principal, type, stream, payload), recorded with the caller as actor. One refused or
 * invalid event refuses the whole append: nothing of it is stored.
 */
import { createRequire } from 'node:module';
import { status, type sendUnaryData, type ServerDuplexStream, type ServerReadableStream } from '@grpc/grpc-js';
import type { ProposedEvent } from '../../events/index.js';
import { ApiError, appendActor, appendRefusal, writerRefusal, type Principal, type TokenTable } from '../api/index.js';
import { isLedgerError, type AppendResult, type EventStore, type ExpectedVersion } from '../ledger/index.js';
import { callerOf } from './kurrent-auth.js';
import { KurrentCallError, serviceError } from './kurrent-error.js';
import { proposedEvent, streamNameOf, uuidText } from './event-mapping.js';
import { code, shared, status as statusPb, streams, type AppendReq, type AppendResp, type BatchAppendReq, type BatchAppendResp } from './protocol.js';

type EmptyModule = typeof import('google-protobuf/google/protobuf/empty_pb.js');
type AnyModule = typeof import('google-protobuf/google/protobuf/any_pb.js');

// BatchAppend's messages use google.protobuf.Empty and a google.rpc.Status whose detail is a google.protobuf.Any.
const load = createRequire(import.meta.url);
const { Empty } = load('google-protobuf/google/protobuf/empty_pb.js') as EmptyModule;
const { Any } = load('google-protobuf/google/protobuf/any_pb.js') as AnyModule;

export interface AppendServiceOptions {
  store: EventStore;
  tokens: TokenTable;
  /** Whether the face serves TLS: on plaintext, credentials are refused (`callerOf`). */
  tls: boolean;
  /** Bytes of data and metadata in one append (KurrentDB's `MaxAppendSize`). */
  maxAppendBytes: number;
}

/** What an append came to: stored, or refused because the stream was not at the expected version. */
type AppendOutcome = { ok: true; result: AppendResult } | { ok: false; expected: ExpectedVersion; actual: number };

interface Proposed {
  getMetadataMap(): { get(key: string): string | undefined };
  getData_asU8(): Uint8Array;
  getCustomMetadata_asU8(): Uint8Array;
  getId(): import('./protocol.js').UUID | undefined;
}

/** KurrentDB's expected revision as the ledger's expected version (revisions count from 0, versions from 1). */
function expectedVersionOf(revision: string): number {
  if (!/^\d{1,16}$/.test(revision) || !Number.isSafeInteger(Number(revision))) throw KurrentCallError.badRequest('options.revision', `'${revision}' is not a revision`);
  return Number(revision) + 1;
}

function tooLarge(limit: number): KurrentCallError {
  return new KurrentCallError(status.INVALID_ARGUMENT, `the append is larger than ${limit} bytes`, {
    exception: 'maximum-append-size-exceeded',
    'maximum-append-size': String(limit),
    'fleet-ledger-code': 'KURRENT_APPEND_TOO_LARGE',
  });
}

export class AppendService {
  readonly #options: AppendServiceOptions;

  constructor(options: AppendServiceOptions) {
    this.#options = options;
  }

  /** Validates, authorises and appends; a wrong expected version is an outcome, every other refusal throws. */
  async #appendEvents(principal: Principal | null, stream: string, expected: ExpectedVersion, messages: readonly Proposed[]): Promise<AppendOutcome> {
    const events: ProposedEvent[] = messages.map((message, index) => {
      const event = proposedEvent(message, index);
      // An unknown type is a bad request whoever sends it (the role rule speaks of types the catalogue has).
      if (!this.#options.store.catalogue.get(event.type)) throw KurrentCallError.badRequest(`events[${index}].type`, `unknown event type '${event.type}'`, 'LEDGER_UNKNOWN_EVENT_TYPE');
      const refusal = appendRefusal({ principal, type: event.type, stream, data: event.data });
      if (refusal) {
        refusal.message = `events[${index}]: ${refusal.message}`;
        throw KurrentCallError.refused(refusal);
      }
      // The policy refuses every append without credentials; this only tells the type checker so.
      if (principal === null) throw KurrentCallError.refused(new ApiError('API_UNAUTHORIZED', { reason: 'missing' }, 'appends need credentials'));
      return { ...event, actor: appendActor(principal, stream, event.type, 'kurrent') };
    });
    try {
      return { ok: true, result: await this.#options.store.append(stream, events, { expectedVersion: expected }) };
    } catch (error) {
      if (isLedgerError(error) && error.code === 'LEDGER_WRONG_EXPECTED_VERSION') return { ok: false, expected, actual: error.details.actual };
      throw error;
    }
  }

  /** Streams.Append: the options first, then the events; one answer when the client has sent them all. */
  readonly append = (call: ServerReadableStream<AppendReq, AppendResp>, callback: sendUnaryData<AppendResp>): void => {
    const messages: AppendReq[] = [];
    let bytes = 0;
    let oversize = false;
    call.on('data', (message: AppendReq) => {
      const proposed = message.getProposedMessage();
      if (proposed) bytes += proposed.getData_asU8().length + proposed.getCustomMetadata_asU8().length;
      if (bytes > this.#options.maxAppendBytes) oversize = true;
      else messages.push(message);
    });
    call.on('error', () => undefined);
    call.on('end', () => {
      this.#appendCall(call, messages, oversize).then(
        (response) => callback(null, response),
        (error: unknown) => callback(serviceError(error) as Parameters<sendUnaryData<AppendResp>>[0]),
      );
    });
  };

  async #appendCall(call: ServerReadableStream<AppendReq, AppendResp>, messages: AppendReq[], oversize: boolean): Promise<AppendResp> {
    const principal = callerOf(call.metadata, this.#options.tokens, this.#options.tls);
    // Refused before its events are read, as the HTTP API refuses by route access before it reads a body.
    const writer = writerRefusal(principal);
    if (writer) throw KurrentCallError.refused(writer);
    if (oversize) throw tooLarge(this.#options.maxAppendBytes);
    const options = messages[0]?.getOptions();
    if (!options) throw KurrentCallError.badRequest('options', 'must be the first message of an append');
    const stream = streamNameOf(options.getStreamIdentifier());
    const expected: ExpectedVersion = options.hasRevision() ? expectedVersionOf(options.getRevision()) : options.hasNoStream() ? 'no_stream' : options.hasStreamExists() ? 'stream_exists' : 'any';
    const proposed = messages.slice(1).map((message, index) => {
      const event = message.getProposedMessage();
      if (!event) throw KurrentCallError.badRequest(`events[${index}]`, 'is not a proposed message');
      return event;
    });
    const outcome = await this.#appendEvents(principal, stream, expected, proposed);
    const response = new streams.AppendResp();
    if (outcome.ok) {
      const last = String(outcome.result.positions[outcome.result.positions.length - 1]);
      const success = new streams.AppendResp.Success().setCurrentRevision(String(outcome.result.nextExpectedVersion - 1));
      success.setPosition(new streams.AppendResp.Position().setCommitPosition(last).setPreparePosition(last));
      return response.setSuccess(success);
    }
    const wrong = new streams.AppendResp.WrongExpectedVersion();
    if (outcome.actual > 0) wrong.setCurrentRevision(String(outcome.actual - 1));
    else wrong.setCurrentNoStream(new shared.Empty());
    if (typeof outcome.expected === 'number') wrong.setExpectedRevision(String(outcome.expected - 1));
    else if (outcome.expected === 'no_stream') wrong.setExpectedNoStream(new shared.Empty());
    else if (outcome.expected === 'stream_exists') wrong.setExpectedStreamExists(new shared.Empty());
    else wrong.setExpectedAny(new shared.Empty());
    return response.setWrongExpectedVersion(wrong);
  }

  /**
   * Streams.BatchAppend: requests that share a correlation id make one append (its options come with the first,
   * `is_final` closes it); each append is answered on the same call with its correlation id, its result or its error
   * as a google.rpc.Status (code, message, and for a wrong expected version the `WrongExpectedVersion` detail).
   */
  readonly batchAppend = (call: ServerDuplexStream<BatchAppendReq, BatchAppendResp>): void => {
    const pending = new Map<string, { options: NonNullable<ReturnType<BatchAppendReq['getOptions']>> | undefined; messages: Proposed[]; bytes: number }>();
    let principal: Principal | null;
    try {
      principal = callerOf(call.metadata, this.#options.tokens, this.#options.tls);
      const writer = writerRefusal(principal);
      if (writer) throw KurrentCallError.refused(writer);
    } catch (error) {
      call.emit('error', serviceError(error));
      return;
    }
    // Appends of one call run concurrently (the client multiplexes all its appenders over one call, and the store's
    // group commit is what makes them cheap together); each answer carries its correlation id.
    const inFlight = new Set<Promise<void>>();
    call.on('data', (request: BatchAppendReq) => {
      const correlation = request.getCorrelationId();
      const key = uuidText(correlation) ?? '';
      const entry = pending.get(key) ?? { options: undefined, messages: [], bytes: 0 };
      if (request.hasOptions()) entry.options = request.getOptions();
      for (const message of request.getProposedMessagesList()) {
        entry.bytes += message.getData_asU8().length + message.getCustomMetadata_asU8().length;
        if (entry.bytes <= this.#options.maxAppendBytes) entry.messages.push(message);
      }
      pending.set(key, entry);
      if (!request.getIsFinal()) return;
      pending.delete(key);
      const answered = (async () => {
        const response = new streams.BatchAppendResp();
        if (correlation) response.setCorrelationId(correlation);
        // The client reads the stream of every answer, errors included: it is set before anything can fail.
        response.setStreamIdentifier(entry.options?.getStreamIdentifier() ?? new shared.StreamIdentifier());
        try {
          const options = entry.options;
          if (!options) throw KurrentCallError.badRequest('options', 'must come with the first request of an append');
          if (entry.bytes > this.#options.maxAppendBytes) throw tooLarge(this.#options.maxAppendBytes);
          const stream = streamNameOf(options.getStreamIdentifier());
          let expected: ExpectedVersion = 'any';
          if (options.hasStreamPosition()) {
            expected = expectedVersionOf(options.getStreamPosition());
            response.setStreamPosition(options.getStreamPosition());
          } else if (options.hasNoStream()) {
            expected = 'no_stream';
            response.setNoStream(new Empty());
          } else if (options.hasStreamExists()) {
            expected = 'stream_exists';
            response.setStreamExists(new Empty());
          } else response.setAny(new Empty());
          const outcome = await this.#appendEvents(principal, stream, expected, entry.messages);
          if (outcome.ok) {
            const last = String(outcome.result.positions[outcome.result.positions.length - 1]);
            const success = new streams.BatchAppendResp.Success().setCurrentRevision(String(outcome.result.nextExpectedVersion - 1));
            success.setPosition(new shared.AllStreamPosition().setCommitPosition(last).setPreparePosition(last));
            response.setSuccess(success);
          } else {
            response.setError(wrongExpectedVersionStatus(outcome));
          }
        } catch (error) {
          response.setError(errorStatus(error));
        }
        call.write(response);
      })();
      inFlight.add(answered);
      void answered.finally(() => inFlight.delete(answered));
    });
    call.on('error', () => undefined);
    call.on('end', () => {
      void Promise.all([...inFlight]).then(() => call.end());
    });
  };
}

/** A google.rpc.Status with one detail packed as KurrentDB packs it (type URL `type.googleapis.com/<name>`). */
function statusWith(codeValue: number, message: string, detail?: { name: string; bytes: Uint8Array }): import('@eventstore/db-client/generated/status_pb.js').Status {
  const result = new statusPb.Status().setCode(codeValue as never).setMessage(message);
  if (detail) result.setDetails(new Any().setTypeUrl(`type.googleapis.com/${detail.name}`).setValue(detail.bytes));
  return result;
}

function wrongExpectedVersionStatus(outcome: { expected: ExpectedVersion; actual: number }) {
  const wrong = new shared.WrongExpectedVersion();
  if (outcome.actual > 0) wrong.setCurrentStreamRevision(String(outcome.actual - 1));
  else wrong.setCurrentNoStream(new Empty());
  if (typeof outcome.expected === 'number') wrong.setExpectedStreamPosition(String(outcome.expected - 1));
  else if (outcome.expected === 'no_stream') wrong.setExpectedNoStream(new Empty());
  else if (outcome.expected === 'stream_exists') wrong.setExpectedStreamExists(new Empty());
  else wrong.setExpectedAny(new Empty());
  return statusWith(code.Code.FAILED_PRECONDITION, 'wrong expected version', { name: 'event_store.client.WrongExpectedVersion', bytes: wrong.serializeBinary() });
}

function errorStatus(error: unknown) {
  const answer = serviceError(error);
  const exception = answer.metadata?.get('exception')[0];
  if (exception === 'access-denied') {
    return statusWith(code.Code.PERMISSION_DENIED, answer.details ?? 'access denied', { name: 'event_store.client.AccessDenied', bytes: new shared.AccessDenied().serializeBinary() });
  }
  if (exception === 'maximum-append-size-exceeded') {
    const detail = new shared.MaximumAppendSizeExceeded().setMaxappendsize(Number(answer.metadata?.get('maximum-append-size')[0] ?? 0));
    return statusWith(code.Code.INVALID_ARGUMENT, answer.details ?? 'too large', { name: 'event_store.client.MaximumAppendSizeExceeded', bytes: detail.serializeBinary() });
  }
  if (answer.code === status.INVALID_ARGUMENT) {
    return statusWith(code.Code.INVALID_ARGUMENT, answer.details ?? 'bad request', { name: 'event_store.client.BadRequest', bytes: new shared.BadRequest().setMessage(answer.details ?? '').serializeBinary() });
  }
  return statusWith(answer.code ?? status.INTERNAL, answer.details ?? 'error');
}
