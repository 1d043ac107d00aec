/**
 * Streams.Read: reads of one stream or of `$all`, forwards or backwards, and catch-up-then-live subscriptions
 * to either, with the server-side filters of `subscribeToAll` (event type or stream name, by prefixes or a regex)
 * and their checkpoints.
 *
 * Guarantees: a subscription delivers every matching event once, in log order (it follows the store, which never
 * skips an event committed late, see `EventStore.follow`); a checkpoint is sent only after every event at or below
 * it was written to the call, so a client that resumes after its last checkpoint (or last event, whichever is
 * later) misses and repeats nothing. A slow reader of `$all` holds two pages in memory (the next is read while the
 * current one is written), a subscriber one: its pages are read after the call drained.
 */
import { randomUUID } from 'node:crypto';
import { status, type ServerWritableStream } from '@grpc/grpc-js';
import { isFleetStream, type RecordedEvent } from '../../events/index.js';
import type { AnonymousReads, TokenTable } from '../api/index.js';
import type { EventStore } from '../ledger/index.js';
import { streamDeleted, type ApplicationStreams } from './application-streams.js';
import { callerOf, readerView } from './kurrent-auth.js';
import { KurrentCallError, serviceError } from './kurrent-error.js';
import { bytesOf, isApplicationEvent, kurrentTypeOf, readEventMessage, recordFields, resolvedLinkMessage, streamIdentifier, streamNameBytes } from './event-mapping.js';
import { encodedReadEvent, type EncodedReadResp } from './read-wire.js';
import { streams, type ReadReq, type ReadResp } from './protocol.js';
import { kurrentStreamText, ledgerStreamName, metastreamOf } from './stream-names.js';

/** Events read from the store at once, by reads and subscriptions alike. */
const pageSize = 500;
/** The longest regex a filter may carry (it runs against every event the subscription passes). */
const maxRegexLength = 500;
/**
 * A quantified group holding a quantifier itself (`(a+)+`, `(\w*)*`, `(x?)+`): the shape of catastrophic
 * backtracking. A regex runs on the server's one thread, so such a filter would stall every other caller.
 */
const nestedQuantifier = /\((?:[^()\\]|\\.)*[+*?}](?:[^()\\]|\\.)*\)\s*[+*{]/;

type ReadOptions = NonNullable<ReturnType<ReadReq['getOptions']>>;
type EventFilter = (event: RecordedEvent) => boolean;

export interface ReadServiceOptions {
  store: EventStore;
  tokens: TokenTable;
  /** Whether the face serves TLS: on plaintext, credentials are refused (`callerOf`). */
  tls: boolean;
  /** What a caller without credentials reads: nothing (the default) or envelopes (the operator opted in). */
  anonymousReads: AnonymousReads;
  /** Aborted when the server stops: open reads and subscriptions end. */
  stopping: AbortSignal;
  /** Subscriptions open at once; one more is refused with RESOURCE_EXHAUSTED. */
  maxSubscriptions: number;
  /** Metadata and tombstones of application streams (shared with the appends). */
  applicationStreams: ApplicationStreams;
}

/** What the Read call writes: a message google-protobuf serializes, or an event already encoded (`read-wire.ts`). */
type ReadAnswer = ReadResp | EncodedReadResp;

/** Writes one answer, waiting for the call to drain when its buffer is full (or for the call to end). */
async function send(call: ServerWritableStream<ReadReq, ReadAnswer>, message: ReadAnswer, signal: AbortSignal): Promise<void> {
  if (signal.aborted) return;
  if (call.write(message)) return;
  await new Promise<void>((resolve) => {
    const done = (): void => {
      call.off('drain', done);
      signal.removeEventListener('abort', done);
      resolve();
    };
    call.on('drain', done);
    signal.addEventListener('abort', done);
  });
}

/**
 * Pages from `start`, each next page read while the caller writes the one before (the database's time hidden behind
 * the call's): a slow reader holds two pages. `after` names where the next page starts, or null after the last.
 */
async function* readAhead<T>(start: number, pageAt: (at: number) => Promise<T[]>, after: (page: T[], at: number) => number | null, signal: AbortSignal): AsyncGenerator<T[]> {
  let at: number | null = start;
  let pending: Promise<T[]> | null = pageAt(start);
  try {
    while (pending && at !== null && !signal.aborted) {
      const page: T[] = await pending;
      const next = after(page, at);
      pending = next === null ? null : pageAt(next);
      at = next;
      yield page;
    }
  } finally {
    // A read ahead that the caller no longer wants (it stopped early, or the call ended) fails unobserved, never unhandled.
    pending?.catch(() => undefined);
  }
}

function positionOf(value: string, field: string): number {
  if (!/^\d{1,16}$/.test(value) || !Number.isSafeInteger(Number(value))) throw KurrentCallError.badRequest(field, `'${value}' is not a position or revision the ledger has`);
  return Number(value);
}

/** A filter as both services carry it: on stream names or event types, by prefixes or a regex. */
export interface FilterMessage {
  hasStreamIdentifier(): boolean;
  getStreamIdentifier(): { getPrefixList(): string[]; getRegex(): string } | undefined;
  getEventType(): { getPrefixList(): string[]; getRegex(): string } | undefined;
}

/** The filter of a read or subscription, as a predicate (and a stream prefix the store can apply in SQL). */
export function filterOf(options: ReadOptions): { matches: EventFilter; streamPrefix?: string } {
  return options.hasFilter() ? filterFrom(options.getFilter()!) : { matches: () => true };
}

export function filterFrom(filter: FilterMessage): { matches: EventFilter; streamPrefix?: string } {
  const byStream = filter.hasStreamIdentifier();
  const expression = byStream ? filter.getStreamIdentifier() : filter.getEventType();
  if (!expression) throw KurrentCallError.badRequest('filter', 'names neither stream_identifier nor event_type');
  // Filters see what the client sees: KurrentDB stream names and an application's own event types.
  const subject = (event: RecordedEvent): string => (byStream ? kurrentStreamText(event.stream) : kurrentTypeOf(event));
  const prefixes = expression.getPrefixList();
  const source = expression.getRegex();
  let regex: RegExp | null = null;
  if (source.length > 0) {
    if (source.length > maxRegexLength) throw KurrentCallError.badRequest('filter.regex', `is longer than ${maxRegexLength} characters`);
    if (nestedQuantifier.test(source.replace(/\(\?(?:[:=!]|<[=!]?)/g, '('))) {
      throw KurrentCallError.badRequest('filter.regex', 'repeats a group that repeats itself (nested quantifiers backtrack catastrophically); write it without');
    }
    try {
      regex = new RegExp(source);
    } catch (error) {
      throw KurrentCallError.badRequest('filter.regex', error instanceof Error ? error.message : String(error));
    }
  }
  const matches: EventFilter = (event) => {
    const text = subject(event);
    if (prefixes.length > 0 && !prefixes.some((prefix) => text.startsWith(prefix))) return false;
    return regex === null || regex.test(text);
  };
  // The store applies a stream prefix in SQL only where every stream it names is a fleet stream (stored as named).
  return byStream && prefixes.length === 1 && regex === null && isFleetStream(prefixes[0]!) ? { matches, streamPrefix: prefixes[0]! } : { matches };
}

export class ReadService {
  readonly #options: ReadServiceOptions;
  #subscriptions = 0;

  constructor(options: ReadServiceOptions) {
    this.#options = options;
  }

  /** The `read` handler: never throws; an error ends the call with its status and trailers. */
  readonly read = (call: ServerWritableStream<ReadReq, ReadAnswer>): void => {
    const abort = new AbortController();
    const stop = (): void => abort.abort();
    call.on('cancelled', stop);
    call.on('close', stop);
    this.#options.stopping.addEventListener('abort', stop);
    const { stopping } = this.#options;
    this.#serve(call, abort.signal)
      .then(
        () => {
          // A subscription (or a long read) cut short by the server's stop is an error the client can retry on.
          if (stopping.aborted) call.emit('error', serviceError(new KurrentCallError(status.UNAVAILABLE, 'the server is stopping')));
          else if (!abort.signal.aborted) call.end();
        },
        (error: unknown) => {
          if (!abort.signal.aborted || stopping.aborted) call.emit('error', serviceError(error));
        },
      )
      .finally(() => stopping.removeEventListener('abort', stop));
  };

  async #serve(call: ServerWritableStream<ReadReq, ReadAnswer>, signal: AbortSignal): Promise<void> {
    // The policy's view, as the HTTP API's: analysts (and anonymous callers, when the server opted in) get envelopes.
    const view = readerView(callerOf(call.metadata, this.#options.tokens, this.#options.tls), this.#options.anonymousReads);
    const options = call.request.getOptions();
    if (!options) throw KurrentCallError.badRequest('options', 'are missing');
    const structuredIds = options.getUuidOption()?.hasStructured() ?? false;
    const resolveLinks = options.getResolveLinks();
    const write = async (event: RecordedEvent): Promise<void> => {
      // A link (`$>`, data `<revision>@<stream>`) read with resolveLinkTos comes as its target, the link beside it.
      if (resolveLinks && view === 'payloads' && isApplicationEvent(event) && kurrentTypeOf(event) === '$>') {
        const target = await this.#linkTarget(event);
        return send(call, resolvedLinkMessage(readEventMessage(event, structuredIds, view), target && readEventMessage(target, structuredIds, view)), signal);
      }
      return send(call, encodedReadEvent(recordFields(event, view), structuredIds), signal);
    };
    const filter = filterOf(options);
    const backwards = options.getReadDirection() === streams.ReadReq.Options.ReadDirection.BACKWARDS;
    if (options.hasSubscription()) {
      if (backwards) throw KurrentCallError.badRequest('read_direction', 'a subscription reads forwards');
      // Each follows the log on its own; a bound keeps a flood of them from starving the readers already there.
      if (this.#subscriptions >= this.#options.maxSubscriptions) {
        throw new KurrentCallError(status.RESOURCE_EXHAUSTED, `${this.#options.maxSubscriptions} subscriptions are open on this server; retry later`, { 'fleet-ledger-code': 'KURRENT_TOO_MANY_SUBSCRIPTIONS' });
      }
      this.#subscriptions += 1;
      try {
        return await this.#subscribe(call, options, filter, write, signal);
      } finally {
        this.#subscriptions -= 1;
      }
    }
    const count = options.hasCount() ? Math.min(Number(BigInt(options.getCount())), Number.MAX_SAFE_INTEGER) : Number.MAX_SAFE_INTEGER;
    if (options.hasStream()) return this.#readStream(call, options.getStream()!, backwards, count, write, signal);
    if (options.hasAll()) return this.#readAll(options.getAll()!, backwards, count, filter.matches, write, signal);
    throw KurrentCallError.badRequest('options', 'name neither a stream nor $all');
  }

  async #subscribe(
    call: ServerWritableStream<ReadReq, ReadAnswer>,
    options: ReadOptions,
    filter: { matches: EventFilter; streamPrefix?: string },
    write: (event: RecordedEvent) => Promise<void>,
    signal: AbortSignal,
  ): Promise<void> {
    // Confirmed once its starting point is fixed: an event appended after the client saw the confirmation is
    // delivered even to a subscription from the end.
    const confirm = () => send(call, new streams.ReadResp().setConfirmation(new streams.ReadResp.SubscriptionConfirmation().setSubscriptionId(randomUUID())), signal);
    if (options.hasStream()) return this.#subscribeToStream(call, options.getStream()!, confirm, write, signal);
    // KurrentDB's checkpoint interval: its search window (the client's `maxSearchWindow`, 32 by default) times the
    // client's multiplier (`checkpointInterval`).
    const filterOptions = options.hasFilter() ? options.getFilter()! : null;
    const checkpointEvery = filterOptions ? (filterOptions.hasMax() ? filterOptions.getMax() : 32) * Math.max(1, filterOptions.getCheckpointintervalmultiplier()) : null;
    if (options.hasAll()) return this.#subscribeToAll(call, options.getAll()!, filter, checkpointEvery, confirm, write, signal);
    throw KurrentCallError.badRequest('options', 'name neither a stream nor $all');
  }

  /** The event a link (`<revision>@<stream>`) points to, or null when there is none. */
  async #linkTarget(link: RecordedEvent): Promise<RecordedEvent | null> {
    if (!isApplicationEvent(link)) return null;
    const text = bytesOf(link.data.data).toString('utf8');
    const match = /^(\d{1,15})@(.+)$/s.exec(text);
    if (!match) return null;
    try {
      const [target] = await this.#options.store.readStream(ledgerStreamName(Buffer.from(match[2]!, 'utf8')), { fromVersion: Number(match[1]) + 1, limit: 1 });
      return target ?? null;
    } catch {
      return null;
    }
  }

  /**
   * What of a stream a read may return: its version, the first version returned and the oldest time returned. For an
   * application stream its metadata decides (`$tb`, `$maxCount`, `$maxAge`), and a tombstone refuses the read.
   */
  async #visible(name: Buffer, stream: string): Promise<{ version: number | null; first: number; notBefore: number | null }> {
    const version = await this.#options.store.streamVersion(stream);
    const text = name.toString('utf8');
    if (isFleetStream(text) || metastreamOf(name) !== null) return { version, first: 1, notBefore: null };
    const { applicationStreams } = this.#options;
    if (version !== null && (await applicationStreams.tombstoned(stream))) throw streamDeleted(text);
    const rules = await applicationStreams.readRules(name);
    let first = 1;
    if (rules.truncateBefore !== null) first = Math.max(first, rules.truncateBefore + 1);
    if (rules.maxCount !== null && version !== null) first = Math.max(first, version - rules.maxCount + 1);
    return { version, first, notBefore: rules.maxAgeSeconds === null ? null : Date.now() - rules.maxAgeSeconds * 1000 };
  }

  async #readStream(
    call: ServerWritableStream<ReadReq, ReadAnswer>,
    from: NonNullable<ReturnType<ReadOptions['getStream']>>,
    backwards: boolean,
    count: number,
    write: (event: RecordedEvent) => Promise<void>,
    signal: AbortSignal,
  ): Promise<void> {
    const { store } = this.#options;
    const name = streamNameBytes(from.getStreamIdentifier());
    const stream = ledgerStreamName(name);
    const { version, first, notBefore } = await this.#visible(name, stream);
    // A stream with no events, or none left before its truncation (a soft delete), is not found.
    if (version === null || first > version) {
      await send(call, new streams.ReadResp().setStreamNotFound(new streams.ReadResp.StreamNotFound().setStreamIdentifier(streamIdentifier(stream))), signal);
      return;
    }
    // Versions count from 1; revisions from 0.
    let next = from.hasRevision() ? positionOf(from.getRevision(), 'stream.revision') + 1 : from.hasEnd() ? (backwards ? version : version + 1) : 1;
    if (!backwards) next = Math.max(next, first);
    let left = count;
    while (left > 0 && !signal.aborted && next >= first) {
      const page = await store.readStream(stream, { fromVersion: next, direction: backwards ? 'backward' : 'forward', limit: Math.min(left, pageSize) });
      for (const event of page) {
        if (event.streamVersion < first) return;
        if (notBefore !== null && event.recordedAt.getTime() < notBefore) continue;
        await write(event);
        left -= 1;
        if (left === 0) return;
      }
      if (page.length < pageSize) return;
      next = page[page.length - 1]!.streamVersion + (backwards ? -1 : 1);
    }
  }

  async #readAll(
    from: NonNullable<ReturnType<ReadOptions['getAll']>>,
    backwards: boolean,
    count: number,
    matches: EventFilter,
    write: (event: RecordedEvent) => Promise<void>,
    signal: AbortSignal,
  ): Promise<void> {
    const { store } = this.#options;
    const head = (await store.head()).position;
    let left = count;
    // Forwards from a position includes the event at it; positions are dense from 1. Backwards from a position returns
    // the events before it (KurrentDB's $all reads backwards from a commit point).
    const start = backwards
      ? from.hasPosition() ? Math.min(head, positionOf(from.getPosition()!.getCommitPosition(), 'all.position.commit_position') - 1) : from.hasStart() ? 0 : head
      : from.hasPosition() ? Math.max(1, positionOf(from.getPosition()!.getCommitPosition(), 'all.position.commit_position')) : from.hasEnd() ? head + 1 : 1;
    const pageAt = (at: number): Promise<RecordedEvent[]> =>
      backwards
        ? store.readAll({ fromPosition: Math.max(1, at - pageSize + 1), toPosition: at, limit: pageSize }).then((page) => page.reverse())
        : store.readAll({ fromPosition: at, toPosition: head, limit: pageSize });
    const after = (page: RecordedEvent[], at: number): number | null => {
      if (backwards) return at - pageSize >= 1 ? at - pageSize : null;
      return page.length < pageSize ? null : page[page.length - 1]!.position + 1;
    };
    if (backwards ? start < 1 : start > head) return;
    for await (const page of readAhead(start, pageAt, after, signal)) {
      for (const event of page) {
        if (left === 0) return;
        if (!matches(event)) continue;
        await write(event);
        left -= 1;
      }
      if (left === 0) return;
    }
  }

  /**
   * Follows the log from `fromPosition`, writing matching events. `caughtUp`: whether CaughtUp was already sent (else it
   * is sent once, when the follower first reaches the head). With `checkpointEvery` (a filtered subscription), a
   * checkpoint goes after every that many events examined, matching or not (KurrentDB's search window times the
   * client's multiplier), once when the follower catches up (where the live part begins), and when the head is reached
   * past events the filter skipped: a consumer resumes after the later of its last event and its last checkpoint, and
   * never reads those again.
   */
  async #follow(
    call: ServerWritableStream<ReadReq, ReadAnswer>,
    fromPosition: number,
    filter: { matches: EventFilter; streamPrefix?: string },
    checkpointEvery: number | null,
    caughtUp: boolean,
    write: (event: RecordedEvent) => Promise<void>,
    signal: AbortSignal,
  ): Promise<void> {
    let examined = 0;
    // The highest position the consumer knows it has seen past: its last event or its last checkpoint.
    let known = fromPosition - 1;
    const checkpoint = async (position: number, keepCount = false): Promise<void> => {
      const text = String(position);
      await send(call, new streams.ReadResp().setCheckpoint(new streams.ReadResp.Checkpoint().setCommitPosition(text).setPreparePosition(text)), signal);
      known = position;
      if (!keepCount) examined = 0;
    };
    await this.#options.store.follow(
      { fromPosition, pool: 'feeds', reportEmptyBatches: checkpointEvery !== null, batchSize: pageSize, ...(filter.streamPrefix ? { streamPrefix: filter.streamPrefix } : {}) },
      async (batch) => {
        for (const event of batch.events) {
          if (filter.matches(event)) {
            await write(event);
            known = event.position;
          }
          examined += 1;
          if (checkpointEvery !== null && examined >= checkpointEvery) await checkpoint(event.position);
        }
        const atHead = batch.events.length < pageSize;
        // Caught up: a checkpoint there (where the live part begins), then at the head only past skipped events.
        if (checkpointEvery !== null && atHead && (!caughtUp || batch.checkpoint > known)) await checkpoint(batch.checkpoint, !caughtUp);
        if (!caughtUp && atHead) {
          caughtUp = true;
          await send(call, new streams.ReadResp().setCaughtUp(new streams.ReadResp.CaughtUp()), signal);
        }
      },
      signal,
    );
  }

  async #subscribeToAll(
    call: ServerWritableStream<ReadReq, ReadAnswer>,
    from: NonNullable<ReturnType<ReadOptions['getAll']>>,
    filter: { matches: EventFilter; streamPrefix?: string },
    checkpointEvery: number | null,
    confirm: () => Promise<void>,
    write: (event: RecordedEvent) => Promise<void>,
    signal: AbortSignal,
  ): Promise<void> {
    // A subscription from a position starts after it: the client resumes from the last position it processed.
    const head = (await this.#options.store.head()).position;
    const fromPosition = from.hasPosition() ? positionOf(from.getPosition()!.getCommitPosition(), 'all.position.commit_position') + 1 : from.hasEnd() ? head + 1 : 1;
    await confirm();
    // Nothing to catch up on: caught up at once.
    const caughtUp = fromPosition > head;
    if (caughtUp) await send(call, new streams.ReadResp().setCaughtUp(new streams.ReadResp.CaughtUp()), signal);
    await this.#follow(call, fromPosition, filter, checkpointEvery, caughtUp, write, signal);
  }

  async #subscribeToStream(
    call: ServerWritableStream<ReadReq, ReadAnswer>,
    from: NonNullable<ReturnType<ReadOptions['getStream']>>,
    confirm: () => Promise<void>,
    write: (event: RecordedEvent) => Promise<void>,
    signal: AbortSignal,
  ): Promise<void> {
    const { store } = this.#options;
    const name = streamNameBytes(from.getStreamIdentifier());
    const stream = ledgerStreamName(name);
    // Every event of the stream at or below this head is read from the stream itself; the live part follows the
    // log after it, and the versions already delivered are skipped, so the seam neither loses nor repeats.
    const head = (await store.head()).position;
    const { first } = await this.#visible(name, stream);
    let delivered = from.hasRevision() ? positionOf(from.getRevision(), 'stream.revision') + 1 : from.hasEnd() ? ((await store.streamVersion(stream)) ?? 0) : 0;
    delivered = Math.max(delivered, first - 1);
    await confirm();
    for (;;) {
      if (signal.aborted) return;
      const page = await store.readStream(stream, { fromVersion: delivered + 1, limit: pageSize });
      for (const event of page) {
        await write(event);
        delivered = event.streamVersion;
      }
      if (page.length < pageSize) break;
    }
    await send(call, new streams.ReadResp().setCaughtUp(new streams.ReadResp.CaughtUp()), signal);
    const matches: EventFilter = (event) => event.stream === stream && event.streamVersion > delivered;
    await this.#follow(
      call,
      head + 1,
      {
        matches: (event) => {
          if (!matches(event)) return false;
          delivered = event.streamVersion;
          return true;
        },
        streamPrefix: stream,
      },
      null,
      true,
      write,
      signal,
    );
  }
}
