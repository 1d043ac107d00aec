/**
 * Streams.Append, Streams.BatchAppend, Streams.Delete and Streams.Tombstone: a client's events appended to one stream
 * of the ledger with the client's expected revision, allowed by the authorization policy the HTTP API asks too
 * (`appendRefusal`: principal, type, stream, payload), recorded with the caller as actor. One refused or invalid event
 * refuses the whole append: nothing of it is stored.
 *
 * - A fleet stream (`node-...`, `rack-...`, the streams the ledger writes: `isFleetStream`) takes the catalogue's
 *   events, each validated by its schema, as JSON.
 * - Any other stream is an application's: any event type the catalogue does not define, JSON or binary, with any
 *   metadata, kept byte for byte as an `ApplicationEvent`; `$$<stream>` holds its metadata, and deletes and tombstones
 *   apply to it (`application-streams.ts`).
 * - A deadline is honoured: an append whose deadline passes before its batch is written is not written, and is
 *   answered DeadlineExceeded (BatchAppend: the deadline its options carry; Append: the call's).
 */
import { createRequire } from 'node:module';
import { status, type sendUnaryData, type ServerDuplexStream, type ServerReadableStream, type ServerUnaryCall } from '@grpc/grpc-js';
import { ApplicationEvent, isFleetStream, type ProposedEvent } from '../../events/index.js';
import { ApiError, appendActor, appendRefusal, writerRefusal, type Principal, type TokenTable } from '../api/index.js';
import { isLedgerError, type AppendResult, type EventStore, type ExpectedVersion } from '../ledger/index.js';
import { ApplicationStreams, metadataType, streamDeleted, tombstoneType } from './application-streams.js';
import { callerOf } from './kurrent-auth.js';
import { KurrentCallError, serviceError } from './kurrent-error.js';
import { proposedApplicationEvent, proposedEvent, storedBytes, streamNameBytes, uuidText } from './event-mapping.js';
import { code, shared, status as statusPb, streams, type AppendReq, type AppendResp, type BatchAppendReq, type BatchAppendResp } from './protocol.js';
import { ledgerStreamName, metastreamOf } from './stream-names.js';

type EmptyModule = typeof import('google-protobuf/google/protobuf/empty_pb.js');
type AnyModule = typeof import('google-protobuf/google/protobuf/any_pb.js');
type DeleteReq = import('@eventstore/db-client/generated/streams_pb.js').DeleteReq;
type DeleteResp = import('@eventstore/db-client/generated/streams_pb.js').DeleteResp;
type TombstoneReq = import('@eventstore/db-client/generated/streams_pb.js').TombstoneReq;
type TombstoneResp = import('@eventstore/db-client/generated/streams_pb.js').TombstoneResp;

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
  /** Metadata, deletes and tombstones of application streams (shared with the reads). */
  applicationStreams: ApplicationStreams;
  /** Aborted when the server stops: an Append still receiving its events is answered UNAVAILABLE, nothing stored. */
  stopping?: AbortSignal;
}

/** What an append came to: stored, or refused because the stream was not at the expected version. */
type AppendOutcome = { ok: true; result: AppendResult } | { ok: false; stream: string; expected: ExpectedVersion; actual: number };

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

function deadlineExceeded(): KurrentCallError {
  return new KurrentCallError(status.DEADLINE_EXCEEDED, 'the deadline passed before the append was written; nothing was stored', {
    exception: 'deadline-exceeded',
    'fleet-ledger-code': 'KURRENT_DEADLINE_EXCEEDED',
  });
}

/**
 * An abort signal for a deadline (a Date, or milliseconds since the epoch; Infinity or absent: none): it aborts with
 * DeadlineExceeded when the deadline passes, or with `cancelled` when the call is cancelled first. `dispose` clears the timer.
 */
function deadlineSignal(deadline: Date | number | undefined, cancelled?: { once(event: 'cancelled', listener: () => void): unknown }): { signal: AbortSignal; dispose: () => void } {
  const controller = new AbortController();
  const at = deadline instanceof Date ? deadline.getTime() : deadline;
  let timer: NodeJS.Timeout | undefined;
  if (at !== undefined && Number.isFinite(at)) {
    const left = at - Date.now();
    if (left <= 0) controller.abort(deadlineExceeded());
    // setTimeout takes at most 2^31 - 1 ms; a farther deadline cannot pass during an append.
    else if (left < 2 ** 31 - 1) timer = setTimeout(() => controller.abort(deadlineExceeded()), left);
  }
  cancelled?.once('cancelled', () => controller.abort(new KurrentCallError(status.CANCELLED, 'the call was cancelled; nothing was stored')));
  return { signal: controller.signal, dispose: () => clearTimeout(timer) };
}

function deleteExpectation(options: { hasRevision(): boolean; getRevision(): string; hasNoStream(): boolean; hasStreamExists(): boolean }): ExpectedVersion {
  return options.hasRevision() ? expectedVersionOf(options.getRevision()) : options.hasNoStream() ? 'no_stream' : options.hasStreamExists() ? 'stream_exists' : 'any';
}

export class AppendService {
  readonly #options: AppendServiceOptions;

  constructor(options: AppendServiceOptions) {
    this.#options = options;
  }

  get #streams(): ApplicationStreams {
    return this.#options.applicationStreams;
  }

  /** The refusal of the policy for a KurrentDB stream operation on an application stream (append, metadata, delete). */
  #applicationRefusal(principal: Principal | null, name: string, kurrentType: string): void {
    const refusal = appendRefusal({ principal, type: ApplicationEvent.type, stream: name, data: { type: kurrentType }, door: 'kurrent' });
    if (refusal) throw KurrentCallError.refused(refusal);
  }

  /**
   * Validates, authorises and appends; a wrong expected version is an outcome, every other refusal throws. `name` is
   * the stream's KurrentDB name (bytes).
   */
  async #appendEvents(principal: Principal | null, name: Buffer, expected: ExpectedVersion, messages: readonly Proposed[], signal: AbortSignal): Promise<AppendOutcome> {
    const meta = metastreamOf(name);
    if (meta) return this.#appendMetadata(principal, name, meta, expected, messages, signal);
    const text = name.toString('utf8');
    const stream = ledgerStreamName(name);
    const fleet = isFleetStream(text);
    const { catalogue } = this.#options.store;
    const events: ProposedEvent[] = messages.map((message, index) => {
      const type = message.getMetadataMap().get('type');
      // An application stream takes any type the catalogue does not define; a type it defines is the fleet's, judged
      // (and refused outside its stream) as the fleet's.
      const application = !fleet && type !== undefined && !catalogue.get(type);
      const event = application ? proposedApplicationEvent(message, index) : proposedEvent(message, index);
      // An unknown type is a bad request whoever sends it (the role rule speaks of types the catalogue has).
      if (!application && !catalogue.get(event.type)) throw KurrentCallError.badRequest(`events[${index}].type`, `unknown event type '${event.type}'`, 'LEDGER_UNKNOWN_EVENT_TYPE');
      const refusal = appendRefusal({ principal, type: event.type, stream: text, data: event.data, door: 'kurrent' });
      if (refusal) {
        refusal.message = `events[${index}]: ${refusal.message}`;
        throw KurrentCallError.refused(refusal);
      }
      // The policy refuses every append without credentials; this only tells the type checker so.
      if (principal === null) throw KurrentCallError.refused(new ApiError('API_UNAUTHORIZED', { reason: 'missing' }, 'appends need credentials'));
      return { ...event, actor: appendActor(principal, text, event.type, 'kurrent') };
    });
    const append = () => this.#store(stream, text, events, expected, signal);
    return fleet ? append() : this.#streams.append(stream, text, append);
  }

  async #store(stream: string, name: string, events: ProposedEvent[], expected: ExpectedVersion, signal: AbortSignal): Promise<AppendOutcome> {
    if (signal.aborted) throw signal.reason;
    try {
      return { ok: true, result: await this.#options.store.append(stream, events, { expectedVersion: expected, signal }) };
    } catch (error) {
      if (isLedgerError(error) && error.code === 'LEDGER_WRONG_EXPECTED_VERSION') return { ok: false, stream: name, expected, actual: error.details.actual };
      throw error;
    }
  }

  /** An append to `$$<stream>`: `$metadata` events (JSON objects) for an application stream the caller may write. */
  async #appendMetadata(principal: Principal | null, name: Buffer, of: Buffer, expected: ExpectedVersion, messages: readonly Proposed[], signal: AbortSignal): Promise<AppendOutcome> {
    const ofText = of.toString('utf8');
    this.#applicationRefusal(principal, ofText, metadataType);
    if (principal === null) throw KurrentCallError.refused(new ApiError('API_UNAUTHORIZED', { reason: 'missing' }, 'appends need credentials'));
    const events: ProposedEvent[] = messages.map((message, index) => {
      const event = proposedApplicationEvent(message, index);
      if (event.data.type !== metadataType) throw KurrentCallError.badRequest(`events[${index}].type`, `a metadata stream holds ${metadataType} events, not ${event.data.type}`);
      let value: unknown;
      try {
        value = JSON.parse(Buffer.from(message.getData_asU8()).toString('utf8'));
      } catch {
        value = undefined;
      }
      if (value === null || typeof value !== 'object' || Array.isArray(value)) throw KurrentCallError.badRequest(`events[${index}].data`, 'stream metadata is a JSON object');
      return { ...event, actor: appendActor(principal, ofText, ApplicationEvent.type, 'kurrent') };
    });
    const target = ledgerStreamName(of);
    if (!isFleetStream(ofText) && (await this.#streams.tombstoned(target))) throw streamDeleted(ofText);
    return this.#store(ledgerStreamName(name), name.toString('utf8'), events, expected, signal);
  }

  /** Streams.Append: the options first, then the events; one answer when the client has sent them all. */
  readonly append = (call: ServerReadableStream<AppendReq, AppendResp>, callback: sendUnaryData<AppendResp>): void => {
    const messages: AppendReq[] = [];
    let bytes = 0;
    let oversize = false;
    // The call's deadline (the client's `deadline` option): past it, nothing of the append is written.
    const deadline = deadlineSignal(call.getDeadline(), call);
    call.on('data', (message: AppendReq) => {
      const proposed = message.getProposedMessage();
      if (proposed) bytes += proposed.getData_asU8().length + proposed.getCustomMetadata_asU8().length;
      if (bytes > this.#options.maxAppendBytes) oversize = true;
      else if (!deadline.signal.aborted) messages.push(message);
    });
    call.on('error', () => undefined);
    // The server stopping while the client is still sending: the append is answered UNAVAILABLE (retryable), unstored.
    let answered = false;
    const stopping = this.#options.stopping;
    const onStop = (): void => {
      if (answered) return;
      answered = true;
      deadline.dispose();
      callback(serviceError(new KurrentCallError(status.UNAVAILABLE, 'the server is stopping; nothing of the append was stored', { 'fleet-ledger-code': 'KURRENT_STOPPING' })) as Parameters<sendUnaryData<AppendResp>>[0]);
    };
    if (stopping?.aborted) return onStop();
    stopping?.addEventListener('abort', onStop, { once: true });
    call.on('end', () => {
      if (answered) return;
      answered = true;
      stopping?.removeEventListener('abort', onStop);
      this.#appendCall(call, messages, oversize, deadline.signal)
        .then(
          (response) => callback(null, response),
          (error: unknown) => callback(serviceError(error) as Parameters<sendUnaryData<AppendResp>>[0]),
        )
        .finally(deadline.dispose);
    });
  };

  async #appendCall(call: ServerReadableStream<AppendReq, AppendResp>, messages: AppendReq[], oversize: boolean, signal: AbortSignal): Promise<AppendResp> {
    const principal = callerOf(call.metadata, this.#options.tokens, this.#options.tls);
    // Refused before its events are read, as the HTTP API refuses by route access before it reads a body.
    const writer = writerRefusal(principal);
    if (writer) throw KurrentCallError.refused(writer);
    if (oversize) throw tooLarge(this.#options.maxAppendBytes);
    if (signal.aborted) throw signal.reason;
    const options = messages[0]?.getOptions();
    if (!options) throw KurrentCallError.badRequest('options', 'must be the first message of an append');
    const name = streamNameBytes(options.getStreamIdentifier());
    const expected: ExpectedVersion = options.hasRevision() ? expectedVersionOf(options.getRevision()) : options.hasNoStream() ? 'no_stream' : options.hasStreamExists() ? 'stream_exists' : 'any';
    const proposed = messages.slice(1).map((message, index) => {
      const event = message.getProposedMessage();
      if (!event) throw KurrentCallError.badRequest(`events[${index}]`, 'is not a proposed message');
      return event;
    });
    const outcome = await this.#appendEvents(principal, name, expected, proposed, signal);
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
   * as a google.rpc.Status (code, message, and the detail the client reads: `WrongExpectedVersion`, `StreamDeleted`,
   * `AccessDenied`, `Timeout`, `MaximumAppendSizeExceeded`, `BadRequest`). Each append's deadline is its options'.
   */
  readonly batchAppend = (call: ServerDuplexStream<BatchAppendReq, BatchAppendResp>): void => {
    const pending = new Map<string, { options: NonNullable<ReturnType<BatchAppendReq['getOptions']>> | undefined; messages: Proposed[]; bytes: number; late: boolean }>();
    let principal: Principal | null;
    try {
      principal = callerOf(call.metadata, this.#options.tokens, this.#options.tls);
      const writer = writerRefusal(principal);
      if (writer) throw KurrentCallError.refused(writer);
    } catch (error) {
      call.emit('error', serviceError(error));
      return;
    }
    const deadlineOf = (options: NonNullable<ReturnType<BatchAppendReq['getOptions']>> | undefined): number | undefined => {
      const at = options?.getDeadline();
      return at ? at.getSeconds() * 1000 + Math.floor(at.getNanos() / 1e6) : undefined;
    };
    // Appends of one call run concurrently (the client multiplexes all its appenders over one call, and the store's
    // group commit is what makes them cheap together); each answer carries its correlation id.
    const inFlight = new Set<Promise<void>>();
    call.on('data', (request: BatchAppendReq) => {
      const correlation = request.getCorrelationId();
      const key = uuidText(correlation) ?? '';
      const entry = pending.get(key) ?? { options: undefined, messages: [], bytes: 0, late: false };
      if (request.hasOptions()) entry.options = request.getOptions();
      // Past its deadline, the rest of an append is only counted to its end (it will be answered Timeout).
      const at = deadlineOf(entry.options);
      if (at !== undefined && Date.now() >= at) entry.late = true;
      for (const message of request.getProposedMessagesList()) {
        entry.bytes += message.getData_asU8().length + message.getCustomMetadata_asU8().length;
        if (entry.bytes <= this.#options.maxAppendBytes && !entry.late) entry.messages.push(message);
      }
      if (entry.late) entry.messages = [];
      pending.set(key, entry);
      if (!request.getIsFinal()) return;
      pending.delete(key);
      const answered = (async () => {
        const response = new streams.BatchAppendResp();
        if (correlation) response.setCorrelationId(correlation);
        // The client reads the stream of every answer, errors included: it is set before anything can fail.
        response.setStreamIdentifier(entry.options?.getStreamIdentifier() ?? new shared.StreamIdentifier());
        const deadline = deadlineSignal(entry.late ? 0 : deadlineOf(entry.options));
        try {
          const options = entry.options;
          if (!options) throw KurrentCallError.badRequest('options', 'must come with the first request of an append');
          if (entry.bytes > this.#options.maxAppendBytes) throw tooLarge(this.#options.maxAppendBytes);
          if (deadline.signal.aborted) throw deadline.signal.reason;
          const name = streamNameBytes(options.getStreamIdentifier());
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
          const outcome = await this.#appendEvents(principal, name, expected, entry.messages, deadline.signal);
          if (outcome.ok) {
            const last = String(outcome.result.positions[outcome.result.positions.length - 1]);
            const success = new streams.BatchAppendResp.Success().setCurrentRevision(String(outcome.result.nextExpectedVersion - 1));
            success.setPosition(new shared.AllStreamPosition().setCommitPosition(last).setPreparePosition(last));
            response.setSuccess(success);
          } else {
            response.setError(wrongExpectedVersionStatus(outcome));
          }
        } catch (error) {
          response.setError(errorStatus(error, entry.options?.getStreamIdentifier()));
        } finally {
          deadline.dispose();
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

  /**
   * Streams.Delete: KurrentDB's soft delete, on an application stream. Its events stay in the log (and its proofs); a
   * `$metadata` event in `$$<stream>` truncates the stream before its next revision, so reads answer StreamNotFound and
   * an append later continues the stream, visible again. The stream's other metadata is kept.
   */
  readonly delete = (call: ServerUnaryCall<DeleteReq, DeleteResp>, callback: sendUnaryData<DeleteResp>): void => {
    const deadline = deadlineSignal(call.getDeadline(), call);
    this.#delete(call, deadline.signal)
      .then(
        (position) => {
          const response = new streams.DeleteResp();
          callback(null, position === null ? response.setNoPosition(new shared.Empty()) : response.setPosition(new streams.DeleteResp.Position().setCommitPosition(String(position)).setPreparePosition(String(position))));
        },
        (error: unknown) => callback(serviceError(error) as Parameters<sendUnaryData<DeleteResp>>[0]),
      )
      .finally(deadline.dispose);
  };

  async #delete(call: ServerUnaryCall<DeleteReq, DeleteResp>, signal: AbortSignal): Promise<number | null> {
    const principal = callerOf(call.metadata, this.#options.tokens, this.#options.tls);
    const options = call.request.getOptions();
    if (!options) throw KurrentCallError.badRequest('options', 'are missing');
    const name = streamNameBytes(options.getStreamIdentifier());
    const text = name.toString('utf8');
    this.#applicationRefusal(principal, text, metadataType);
    if (principal === null) throw KurrentCallError.refused(new ApiError('API_UNAUTHORIZED', { reason: 'missing' }, 'deletes need credentials'));
    const stream = ledgerStreamName(name);
    const expected = deleteExpectation(options);
    return this.#streams.exclusive(stream, async () => {
      if (await this.#streams.tombstoned(stream, true)) throw streamDeleted(text);
      const version = (await this.#options.store.streamVersion(stream)) ?? 0;
      const matches = expected === 'any' || (expected === 'no_stream' ? version === 0 : expected === 'stream_exists' ? version > 0 : version === expected);
      if (!matches) throw wrongExpectedVersion(text, expected, version);
      // Revisions below the next one are no longer read; everything else the metadata said stays in force.
      const current = (await this.#streams.metadata(name))?.value ?? {};
      const metadata = Buffer.from(JSON.stringify({ ...current, $tb: version }), 'utf8');
      const event: ProposedEvent = {
        type: ApplicationEvent.type,
        data: { type: metadataType, contentType: 'application/json', data: storedBytes(metadata), metadata: storedBytes(new Uint8Array(0)) },
        actor: appendActor(principal, text, ApplicationEvent.type, 'kurrent'),
      };
      if (signal.aborted) throw signal.reason;
      const result = await this.#options.store.append(this.#streams.metastream(name), [event], { signal });
      return result.positions[0] ?? null;
    });
  }

  /**
   * Streams.Tombstone: KurrentDB's hard delete, on an application stream. A `$streamDeleted` event is appended to the
   * stream (with the caller's expected revision); from then on its reads, appends and metadata writes answer
   * StreamDeleted. Its events stay in the log and its proofs.
   */
  readonly tombstone = (call: ServerUnaryCall<TombstoneReq, TombstoneResp>, callback: sendUnaryData<TombstoneResp>): void => {
    const deadline = deadlineSignal(call.getDeadline(), call);
    this.#tombstone(call, deadline.signal)
      .then(
        (position) => {
          const response = new streams.TombstoneResp();
          callback(null, response.setPosition(new streams.TombstoneResp.Position().setCommitPosition(String(position)).setPreparePosition(String(position))));
        },
        (error: unknown) => callback(serviceError(error) as Parameters<sendUnaryData<TombstoneResp>>[0]),
      )
      .finally(deadline.dispose);
  };

  async #tombstone(call: ServerUnaryCall<TombstoneReq, TombstoneResp>, signal: AbortSignal): Promise<number> {
    const principal = callerOf(call.metadata, this.#options.tokens, this.#options.tls);
    const options = call.request.getOptions();
    if (!options) throw KurrentCallError.badRequest('options', 'are missing');
    const name = streamNameBytes(options.getStreamIdentifier());
    const text = name.toString('utf8');
    this.#applicationRefusal(principal, text, tombstoneType);
    if (principal === null) throw KurrentCallError.refused(new ApiError('API_UNAUTHORIZED', { reason: 'missing' }, 'tombstones need credentials'));
    const stream = ledgerStreamName(name);
    const expected = deleteExpectation(options);
    return this.#streams.exclusive(stream, async () => {
      if (await this.#streams.tombstoned(stream, true)) throw streamDeleted(text);
      const event: ProposedEvent = {
        type: ApplicationEvent.type,
        data: { type: tombstoneType, contentType: 'application/octet-stream', data: storedBytes(new Uint8Array(0)), metadata: storedBytes(new Uint8Array(0)) },
        actor: appendActor(principal, text, ApplicationEvent.type, 'kurrent'),
      };
      const outcome = await this.#store(stream, text, [event], expected, signal);
      if (!outcome.ok) throw wrongExpectedVersion(text, expected, outcome.actual);
      return outcome.result.positions[0]!;
    });
  }
}

/** KurrentDB's wrong-expected-version answer in trailers (Delete, Tombstone): revisions, and its numbers for the symbols. */
function wrongExpectedVersion(stream: string, expected: ExpectedVersion, actualVersion: number): KurrentCallError {
  const expectedRevision = typeof expected === 'number' ? expected - 1 : { any: -2, no_stream: -1, stream_exists: -4 }[expected];
  return new KurrentCallError(status.FAILED_PRECONDITION, `${stream} is at ${actualVersion > 0 ? `revision ${actualVersion - 1}` : 'no stream'}, not the expected ${String(expected === 'any' || typeof expected !== 'number' ? expected : expected - 1)}`, {
    exception: 'wrong-expected-version',
    'fleet-ledger-code': 'LEDGER_WRONG_EXPECTED_VERSION',
    'stream-name': stream,
    'expected-version': String(expectedRevision),
    ...(actualVersion > 0 ? { 'actual-version': String(actualVersion - 1) } : {}),
  });
}

/** A google.rpc.Status with one detail packed as KurrentDB packs it (type URL `type.googleapis.com/<name>`). */
function statusWith(codeValue: number, message: string, detail: { name: string; bytes: Uint8Array }): import('@eventstore/db-client/generated/status_pb.js').Status {
  const result = new statusPb.Status().setCode(codeValue as never).setMessage(message);
  result.setDetails(new Any().setTypeUrl(`type.googleapis.com/${detail.name}`).setValue(detail.bytes));
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

/**
 * A refusal as a BatchAppend status. The 6.2 client reads the detail's type to choose its error (and fails on a status
 * without one), so every status carries one: `Unknown` for what has no detail of its own (the message says what).
 */
function errorStatus(error: unknown, stream: import('./protocol.js').StreamIdentifier | undefined) {
  const answer = serviceError(error);
  const exception = answer.metadata?.get('exception')[0];
  const message = answer.details ?? 'error';
  if (exception === 'access-denied') return statusWith(code.Code.PERMISSION_DENIED, message, { name: 'event_store.client.AccessDenied', bytes: new shared.AccessDenied().serializeBinary() });
  if (exception === 'stream-deleted') {
    const detail = new shared.StreamDeleted();
    if (stream) detail.setStreamIdentifier(stream);
    return statusWith(code.Code.FAILED_PRECONDITION, message, { name: 'event_store.client.StreamDeleted', bytes: detail.serializeBinary() });
  }
  if (exception === 'deadline-exceeded') return statusWith(code.Code.DEADLINE_EXCEEDED, message, { name: 'event_store.client.Timeout', bytes: new shared.Timeout().serializeBinary() });
  if (exception === 'maximum-append-size-exceeded') {
    const detail = new shared.MaximumAppendSizeExceeded().setMaxappendsize(Number(answer.metadata?.get('maximum-append-size')[0] ?? 0));
    return statusWith(code.Code.INVALID_ARGUMENT, message, { name: 'event_store.client.MaximumAppendSizeExceeded', bytes: detail.serializeBinary() });
  }
  if (answer.code === status.INVALID_ARGUMENT) return statusWith(code.Code.INVALID_ARGUMENT, message, { name: 'event_store.client.BadRequest', bytes: new shared.BadRequest().setMessage(message).serializeBinary() });
  return statusWith(answer.code ?? status.INTERNAL, message, { name: 'event_store.client.Unknown', bytes: new shared.Unknown().serializeBinary() });
}
