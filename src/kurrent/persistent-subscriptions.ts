/**
 * KurrentDB's persistent subscriptions (consumer groups) over the ledger: the PersistentSubscriptions service. A group
 * reads one stream (or `$all`, filtered) and hands each event to one of its connected consumers, which acknowledges it
 * (ack), or asks for it again (nack retry), skips it, or parks it; an event not acknowledged within the message timeout
 * is handed out again, and past `maxRetryCount` retries it is parked. Parked events are delivered again on request
 * (ReplayParked).
 *
 * What is kept in PostgreSQL (`kurrent_persistent_subscriptions`, `kurrent_parked_messages`, migration 0009): each
 * group's settings, its checkpoint (the revision or position below which every event was acknowledged, written after
 * `minCheckpointCount` acknowledgements, after `checkpointAfter`, and when its last consumer leaves) and its parked
 * events. A group's in-flight state lives in the serving process: a group whose consumers all left, a restart of the
 * subsystem or of the server resumes from the checkpoint, so an event may be delivered again (at least once, as in
 * KurrentDB). One process serves a group: consumers of one group connected to two fleet-ledger processes would each
 * be handed every event (their checkpoints agree, being the same row, but deliveries are not shared).
 *
 * Authorization is the log's: connecting to a group reads events, in the caller's view of the log (payloads or
 * envelopes); creating, updating, deleting and replaying groups takes a role that writes (operator, admin).
 */
import { randomUUID } from 'node:crypto';
import { Metadata, status, type sendUnaryData, type ServerDuplexStream, type ServerUnaryCall } from '@grpc/grpc-js';
import { sql } from 'kysely';
import type { RecordedEvent } from '../../events/index.js';
import { ApiError, writerRefusal, type AnonymousReads, type Principal, type TokenTable } from '../api/index.js';
import type { EventStore } from '../ledger/index.js';
import { callerOf, readerView } from './kurrent-auth.js';
import { KurrentCallError, serviceError } from './kurrent-error.js';
import { fillRecord, streamNameBytes, uuidText } from './event-mapping.js';
import { persistent, shared } from './protocol.js';
import { filterFrom, type FilterMessage } from './read-service.js';
import { kurrentStreamText, ledgerStreamName } from './stream-names.js';

type Persistent = typeof persistent;
type CreateReq = InstanceType<Persistent['CreateReq']>;
type UpdateReq = InstanceType<Persistent['UpdateReq']>;
type DeleteReq = InstanceType<Persistent['DeleteReq']>;
type ReadReq = InstanceType<Persistent['ReadReq']>;
type ReadResp = InstanceType<Persistent['ReadResp']>;
type GetInfoReq = InstanceType<Persistent['GetInfoReq']>;
type ReplayParkedReq = InstanceType<Persistent['ReplayParkedReq']>;
type ListReq = InstanceType<Persistent['ListReq']>;
type SubscriptionInfo = InstanceType<Persistent['SubscriptionInfo']>;
type Settings = InstanceType<Persistent['CreateReq']['Settings']> | InstanceType<Persistent['UpdateReq']['Settings']>;

const allSource = '$all';
/** KurrentDB's "end" as the deprecated stream revision setting (the largest UInt64). */
const revisionEnd = '18446744073709551615';

/** A group's settings as the client gave them (what GetInfo and List answer). */
interface GroupSettings {
  resolveLinks: boolean;
  extraStatistics: boolean;
  maxRetryCount: number;
  minCheckpointCount: number;
  maxCheckpointCount: number;
  maxSubscriberCount: number;
  liveBufferSize: number;
  readBatchSize: number;
  historyBufferSize: number;
  messageTimeoutMs: number;
  checkpointAfterMs: number;
  consumerStrategy: string;
  /** `0` (start), `-1` (end), a revision; for `$all` `C:<commit>/P:<prepare>`, `C:0/P:0`, `C:-1/P:-1`. */
  startFrom: string;
}

/** A filter of a group on `$all`, as stored. */
interface StoredFilter {
  on: 'stream' | 'type';
  prefixes: string[];
  regex: string;
}

interface GroupRow {
  source: string;
  group_name: string;
  settings: GroupSettings;
  filter: StoredFilter | null;
  checkpoint: string | number | null;
  start_at: string | number;
}

function strategyName(settings: Settings): string {
  // CreateReq.Settings carries the strategy's name too (newer clients); UpdateReq.Settings only the enumeration.
  const named = 'getConsumerStrategy' in settings ? (settings as { getConsumerStrategy(): string }).getConsumerStrategy() : '';
  if (named) return named;
  switch (settings.getNamedConsumerStrategy()) {
    case persistent.CreateReq.ConsumerStrategy.DISPATCHTOSINGLE:
      return 'DispatchToSingle';
    case persistent.CreateReq.ConsumerStrategy.PINNED:
      return 'Pinned';
    default:
      return 'RoundRobin';
  }
}

function settingsOf(settings: Settings | undefined, startFrom: string): GroupSettings {
  if (!settings) throw KurrentCallError.badRequest('settings', 'are missing');
  const ms = (hasMs: boolean, msValue: number, ticks: string): number => (hasMs ? msValue : Math.round(Number(ticks || '0') / 10_000));
  return {
    resolveLinks: settings.getResolveLinks(),
    extraStatistics: settings.getExtraStatistics(),
    maxRetryCount: settings.getMaxRetryCount(),
    minCheckpointCount: settings.getMinCheckpointCount(),
    maxCheckpointCount: settings.getMaxCheckpointCount(),
    maxSubscriberCount: settings.getMaxSubscriberCount(),
    liveBufferSize: settings.getLiveBufferSize(),
    readBatchSize: settings.getReadBatchSize(),
    historyBufferSize: settings.getHistoryBufferSize(),
    messageTimeoutMs: ms(settings.hasMessageTimeoutMs(), settings.getMessageTimeoutMs(), settings.getMessageTimeoutTicks()),
    checkpointAfterMs: ms(settings.hasCheckpointAfterMs(), settings.getCheckpointAfterMs(), settings.getCheckpointAfterTicks()),
    consumerStrategy: strategyName(settings),
    startFrom,
  };
}

/** Where a group starts, from a create or update request: a stream's revision, or a position of `$all`. */
interface StartOptions {
  hasAll(): boolean;
  getAll(): { hasStart(): boolean; hasEnd(): boolean; getPosition(): { getCommitPosition(): string; getPreparePosition(): string } | undefined } | undefined;
  hasStream(): boolean;
  getStream(): { hasStart(): boolean; hasEnd(): boolean; getRevision(): string } | undefined;
}

function startFromOf(options: StartOptions, settings: Settings | undefined): string {
  if (options.hasAll()) {
    const all = options.getAll()!;
    if (all.hasStart()) return 'C:0/P:0';
    if (all.hasEnd()) return 'C:-1/P:-1';
    const position = all.getPosition();
    return position ? `C:${position.getCommitPosition()}/P:${position.getPreparePosition()}` : 'C:-1/P:-1';
  }
  if (options.hasStream()) {
    const stream = options.getStream()!;
    if (stream.hasStart()) return '0';
    if (stream.hasEnd()) return '-1';
    return stream.getRevision();
  }
  const revision = settings?.getRevision() ?? revisionEnd;
  return revision === revisionEnd ? '-1' : revision;
}

function filterOfRow(filter: StoredFilter | null): ReturnType<typeof filterFrom> | null {
  if (!filter) return null;
  const expression = { getPrefixList: () => filter.prefixes, getRegex: () => filter.regex };
  const message: FilterMessage = {
    hasStreamIdentifier: () => filter.on === 'stream',
    getStreamIdentifier: () => (filter.on === 'stream' ? expression : undefined),
    getEventType: () => (filter.on === 'type' ? expression : undefined),
  };
  return filterFrom(message);
}

function notFound(source: string, group: string): KurrentCallError {
  const stream = source === allSource ? allSource : kurrentStreamText(source);
  return new KurrentCallError(status.NOT_FOUND, `Subscription group ${group} on stream ${stream} does not exist.`, {
    exception: 'persistent-subscription-does-not-exist',
    'stream-name': stream,
    'group-name': group,
    'fleet-ledger-code': 'KURRENT_SUBSCRIPTION_NOT_FOUND',
  });
}

function exists(source: string, group: string): KurrentCallError {
  const stream = source === allSource ? allSource : kurrentStreamText(source);
  return new KurrentCallError(status.ALREADY_EXISTS, `Subscription group ${group} on stream ${stream} exists.`, {
    exception: 'persistent-subscription-exists',
    'stream-name': stream,
    'group-name': group,
    'fleet-ledger-code': 'KURRENT_SUBSCRIPTION_EXISTS',
  });
}

/** The source named by a request's options: a stream (its ledger name) or `$all`. */
function sourceOf(options: { hasAll(): boolean; getStreamIdentifier(): import('./protocol.js').StreamIdentifier | undefined } | undefined): string {
  if (!options) throw KurrentCallError.badRequest('options', 'are missing');
  if (options.hasAll()) return allSource;
  return ledgerStreamName(streamNameBytes(options.getStreamIdentifier()));
}

/** One event handed out: to whom, how many times before, and when it is due back. */
interface InFlight {
  event: RecordedEvent;
  retryCount: number;
  connection: Connection;
  timer: NodeJS.Timeout | null;
}

/** A message waiting to be handed out (first delivery, a retry, a replayed parked event). */
interface Queued {
  event: RecordedEvent;
  retryCount: number;
}

class Connection {
  readonly id = randomUUID();
  inFlight = 0;
  totalItems = 0;
  readonly latencies: number[] = [];
  readonly started = Date.now();
  constructor(
    readonly call: ServerDuplexStream<ReadReq, ReadResp>,
    readonly principal: Principal | null,
    readonly view: 'payloads' | 'envelopes',
    readonly bufferSize: number,
    readonly structuredIds: boolean,
    readonly name: string,
    readonly from: string,
  ) {}

  get freeSlots(): number {
    return Math.max(0, this.bufferSize - this.inFlight);
  }
}

/** A group being served: its consumers, what it read, what is out, its checkpoint. */
class Group {
  readonly connections: Connection[] = [];
  readonly #inFlight = new Map<string, InFlight>();
  readonly #retries: Queued[] = [];
  readonly #ready: Queued[] = [];
  /** Cursors (stream version or log position) read and not yet processed, for the checkpoint. */
  readonly #open = new Set<number>();
  #lastRead: number | null = null;
  #processedSinceCheckpoint = 0;
  #checkpointTimer: NodeJS.Timeout | null = null;
  #writingCheckpoint: Promise<void> = Promise.resolve();
  #next = 0;
  #readerWake: (() => void) | null = null;
  readonly #stop = new AbortController();
  totalItems = 0;
  lastKnown: number | null = null;
  checkpoint: number | null;
  #started: Promise<void> | null = null;

  constructor(
    readonly service: PersistentSubscriptions,
    readonly row: GroupRow,
  ) {
    this.checkpoint = row.checkpoint === null ? null : Number(row.checkpoint);
  }

  get source(): string {
    return this.row.source;
  }

  get settings(): GroupSettings {
    return this.row.settings;
  }

  get outstanding(): number {
    return this.#inFlight.size;
  }

  get retryBufferCount(): number {
    return this.#retries.length;
  }

  get readBufferCount(): number {
    return this.#ready.length;
  }

  /** The cursor of an event: its revision's version for a stream, its position for `$all`. */
  #cursor(event: RecordedEvent): number {
    return this.source === allSource ? event.position : event.streamVersion;
  }

  start(): void {
    this.#started ??= this.#read().catch((error: unknown) => this.drop(error));
  }

  /** Reads the source from after the checkpoint (or where the group starts) into the ready queue, as room allows. */
  async #read(): Promise<void> {
    const { store } = this.service;
    const signal = this.#stop.signal;
    await this.#loadReplays();
    const stream = this.source === allSource ? null : this.source;
    const filter = filterOfRow(this.row.filter);
    const from = this.checkpoint !== null ? this.checkpoint + (stream ? 2 : 1) : Number(this.row.start_at);
    const take = async (event: RecordedEvent): Promise<void> => {
      while (this.#ready.length >= Math.max(1, this.settings.readBatchSize, this.settings.liveBufferSize) && !signal.aborted) {
        await new Promise<void>((resolve) => (this.#readerWake = resolve));
      }
      if (signal.aborted) return;
      const cursor = this.#cursor(event);
      this.#lastRead = cursor;
      this.lastKnown = cursor;
      if (filter && !filter.matches(event)) return;
      this.#open.add(cursor);
      this.#ready.push({ event, retryCount: 0 });
      this.pump();
    };
    if (stream) {
      // The stream itself up to the head read now, then the log after that head, as a stream subscription reads.
      const head = (await store.head()).position;
      let version = from;
      for (;;) {
        if (signal.aborted) return;
        const page = await store.readStream(stream, { fromVersion: version, limit: Math.max(1, this.settings.readBatchSize || 20) });
        for (const event of page) {
          await take(event);
          version = event.streamVersion + 1;
        }
        if (page.length === 0) break;
      }
      await store.follow(
        { fromPosition: head + 1, pool: 'feeds', streamPrefix: stream, batchSize: 500 },
        async (batch) => {
          for (const event of batch.events) if (event.stream === stream && event.streamVersion >= version) {
            await take(event);
            version = event.streamVersion + 1;
          }
        },
        signal,
      );
    } else {
      await store.follow({ fromPosition: from, pool: 'feeds', batchSize: 500 }, async (batch) => {
        for (const event of batch.events) await take(event);
        // An $all group knows how far it has looked even when its filter took nothing.
        if (batch.events.length === 0) this.lastKnown = batch.checkpoint;
      }, signal);
    }
  }

  /** Parked events asked back (ReplayParked): queued ahead of new ones, removed from the parked list. */
  async #loadReplays(): Promise<void> {
    const rows = await sql<{ position: string | number }>`
      DELETE FROM kurrent_parked_messages WHERE source = ${this.source} AND group_name = ${this.row.group_name} AND replay
      RETURNING position`.execute(this.service.store.db);
    const positions = rows.rows.map((row) => Number(row.position)).sort((a, b) => a - b);
    for (const position of positions) {
      const [event] = await this.service.store.readAll({ fromPosition: position, toPosition: position, limit: 1 });
      if (event) this.#retries.push({ event, retryCount: 0 });
    }
    if (positions.length > 0) this.pump();
  }

  replayRequested(): void {
    void this.#loadReplays().catch(() => undefined);
  }

  /** Hands out messages while a consumer has room: retries and replays first, then what was read. */
  pump(): void {
    for (;;) {
      const candidates = this.connections.filter((connection) => connection.freeSlots > 0);
      if (candidates.length === 0) return;
      const message = this.#retries.shift() ?? this.#ready.shift();
      if (!message) return;
      if (this.#ready.length === 0) this.#readerWake?.();
      const strategy = this.settings.consumerStrategy;
      let connection: Connection;
      if (strategy === 'DispatchToSingle') connection = candidates[0]!;
      else if (strategy === 'Pinned') {
        let hash = 0;
        for (const char of message.event.stream) hash = (hash * 31 + char.charCodeAt(0)) | 0;
        connection = candidates[Math.abs(hash) % candidates.length]!;
      } else connection = candidates[this.#next++ % candidates.length]!;
      this.#send(connection, message);
    }
  }

  #send(connection: Connection, message: Queued): void {
    const { event, retryCount } = message;
    const record = fillRecord(new persistent.ReadResp.ReadEvent.RecordedEvent(), event, connection.structuredIds, connection.view);
    const read = new persistent.ReadResp.ReadEvent().setEvent(record).setCommitPosition(String(event.position));
    read.setRetryCount(retryCount);
    const timeout = this.settings.messageTimeoutMs;
    const entry: InFlight = { event, retryCount, connection, timer: null };
    if (timeout > 0) entry.timer = setTimeout(() => this.#expire(event.eventId), timeout);
    this.#inFlight.set(event.eventId, entry);
    connection.inFlight += 1;
    connection.totalItems += 1;
    this.totalItems += 1;
    connection.call.write(new persistent.ReadResp().setEvent(read));
  }

  #takeBack(id: string): InFlight | null {
    const entry = this.#inFlight.get(id);
    if (!entry) return null;
    this.#inFlight.delete(id);
    if (entry.timer) clearTimeout(entry.timer);
    entry.connection.inFlight -= 1;
    entry.connection.latencies.push(Date.now());
    return entry;
  }

  /** Not acknowledged in time: again, or parked past the retries. */
  #expire(id: string): void {
    const entry = this.#takeBack(id);
    if (entry) this.#retry(entry, 'message timeout');
    this.pump();
  }

  #retry(entry: { event: RecordedEvent; retryCount: number }, reason: string): void {
    if (entry.retryCount >= this.settings.maxRetryCount) void this.#park(entry.event, `${reason}; retried ${entry.retryCount} times`);
    else this.#retries.push({ event: entry.event, retryCount: entry.retryCount + 1 });
  }

  ack(ids: string[]): void {
    for (const id of ids) {
      const entry = this.#takeBack(id);
      if (entry) this.#processed(entry.event);
    }
    this.pump();
  }

  nack(ids: string[], action: number, reason: string, connection: Connection): void {
    const { Action } = persistent.ReadReq.Nack;
    for (const id of ids) {
      const entry = this.#takeBack(id);
      if (!entry) continue;
      if (action === Action.PARK) void this.#park(entry.event, reason);
      else if (action === Action.SKIP) this.#processed(entry.event);
      else if (action === Action.STOP) {
        this.#retries.unshift({ event: entry.event, retryCount: entry.retryCount });
        this.close(connection);
      } else this.#retry(entry, reason || 'nack');
    }
    this.pump();
  }

  async #park(event: RecordedEvent, reason: string): Promise<void> {
    await sql`
      INSERT INTO kurrent_parked_messages (source, group_name, position, reason) VALUES (${this.source}, ${this.row.group_name}, ${event.position}, ${reason})
      ON CONFLICT (source, group_name, position) DO UPDATE SET reason = EXCLUDED.reason, replay = false, parked_at = now()`.execute(this.service.store.db);
    this.#processed(event);
  }

  /** One event is done with (acknowledged, skipped or parked): the checkpoint may move. */
  #processed(event: RecordedEvent): void {
    this.#open.delete(this.#cursor(event));
    this.#processedSinceCheckpoint += 1;
    const { minCheckpointCount, maxCheckpointCount, checkpointAfterMs } = this.settings;
    if (this.#processedSinceCheckpoint >= Math.max(1, maxCheckpointCount)) this.writeCheckpoint();
    else if (this.#processedSinceCheckpoint >= Math.max(1, minCheckpointCount)) this.#checkpointTimer ??= setTimeout(() => this.writeCheckpoint(), Math.max(0, checkpointAfterMs));
  }

  /** Writes the checkpoint: the cursor before the oldest event not yet done with (or the last read). */
  writeCheckpoint(): Promise<void> {
    if (this.#checkpointTimer) clearTimeout(this.#checkpointTimer);
    this.#checkpointTimer = null;
    const lowestOpen = this.#open.size > 0 ? Math.min(...this.#open) : null;
    const through = lowestOpen !== null ? lowestOpen - 1 : this.#lastRead;
    if (through === null) return this.#writingCheckpoint;
    // A stream's checkpoint is a revision (version - 1), $all's a position.
    const value = this.source === allSource ? through : through - 1;
    if (value < 0 || (this.checkpoint !== null && value <= this.checkpoint)) return this.#writingCheckpoint;
    this.checkpoint = value;
    this.#processedSinceCheckpoint = 0;
    this.#writingCheckpoint = this.#writingCheckpoint
      .then(() =>
        sql`UPDATE kurrent_persistent_subscriptions SET checkpoint = GREATEST(coalesce(checkpoint, -1), ${value}), updated_at = now() WHERE source = ${this.source} AND group_name = ${this.row.group_name}`.execute(
          this.service.store.db,
        ),
      )
      .then(
        () => undefined,
        () => undefined,
      );
    return this.#writingCheckpoint;
  }

  add(connection: Connection): void {
    this.connections.push(connection);
    this.start();
    this.pump();
  }

  /** A consumer left: what it held goes to the others (or back to the group when it starts again). */
  close(connection: Connection): void {
    const index = this.connections.indexOf(connection);
    if (index < 0) return;
    this.connections.splice(index, 1);
    for (const [id, entry] of [...this.#inFlight]) {
      if (entry.connection !== connection) continue;
      this.#takeBack(id);
      this.#retries.unshift({ event: entry.event, retryCount: entry.retryCount });
    }
    connection.call.end();
    if (this.connections.length === 0) this.service.idle(this);
    else this.pump();
  }

  /** Stops the group: its consumers' calls end with `error` (or cleanly), its checkpoint is written. */
  async drop(error?: unknown): Promise<void> {
    this.#stop.abort();
    this.#readerWake?.();
    for (const entry of this.#inFlight.values()) if (entry.timer) clearTimeout(entry.timer);
    for (const connection of this.connections.splice(0)) {
      if (error) connection.call.emit('error', serviceError(error));
      else connection.call.end();
    }
    await this.writeCheckpoint();
  }
}

export interface PersistentSubscriptionsOptions {
  store: EventStore;
  tokens: TokenTable;
  tls: boolean;
  anonymousReads: AnonymousReads;
  stopping: AbortSignal;
}

export class PersistentSubscriptions {
  readonly #options: PersistentSubscriptionsOptions;
  /** The groups with consumers, by `source\0group`. */
  readonly #running = new Map<string, Group>();

  constructor(options: PersistentSubscriptionsOptions) {
    this.#options = options;
    options.stopping.addEventListener('abort', () => void this.#stopAll(new KurrentCallError(status.UNAVAILABLE, 'the server is stopping')));
  }

  get store(): EventStore {
    return this.#options.store;
  }

  #key(source: string, group: string): string {
    return `${source}\u0000${group}`;
  }

  idle(group: Group): void {
    if (this.#running.get(this.#key(group.source, group.row.group_name)) === group) this.#running.delete(this.#key(group.source, group.row.group_name));
    void group.drop();
  }

  async #stopAll(error?: unknown): Promise<void> {
    const groups = [...this.#running.values()];
    this.#running.clear();
    await Promise.all(groups.map((group) => group.drop(error)));
  }

  #principal(call: { metadata: Metadata }): Principal | null {
    return callerOf(call.metadata, this.#options.tokens, this.#options.tls);
  }

  /** Managing groups takes a role that writes; reading them (info, list, consuming) the log's read view. */
  #manager(call: { metadata: Metadata }): Principal {
    const principal = this.#principal(call);
    const refusal = writerRefusal(principal);
    if (refusal) throw KurrentCallError.refused(refusal);
    if (principal!.role === 'agent') {
      throw KurrentCallError.refused(new ApiError('API_FORBIDDEN', { role: principal!.role, allowed: ['operator', 'admin'] }, 'agents report their observations only; consumer groups are managed by operators and admins'));
    }
    return principal!;
  }

  #reader(call: { metadata: Metadata }): { principal: Principal | null; view: 'payloads' | 'envelopes' } {
    const principal = this.#principal(call);
    return { principal, view: readerView(principal, this.#options.anonymousReads) };
  }

  /** Where a group starts reading: a stream's version, or a log position; "end" is the end as it is now. */
  async #startAt(source: string, startFrom: string): Promise<number> {
    if (source !== allSource) return startFrom === '-1' ? ((await this.store.streamVersion(source)) ?? 0) + 1 : Number(startFrom) + 1;
    const commit = Number(/^C:(-?\d+)\/P:/.exec(startFrom)?.[1] ?? -1);
    return commit < 0 ? (await this.store.head()).position + 1 : Math.max(1, commit);
  }

  async #row(source: string, group: string): Promise<GroupRow | null> {
    const result = await sql<GroupRow>`SELECT source, group_name, settings, filter, checkpoint, start_at FROM kurrent_persistent_subscriptions WHERE source = ${source} AND group_name = ${group}`.execute(this.store.db);
    return result.rows[0] ?? null;
  }

  #unary<Req, Resp>(handler: (call: ServerUnaryCall<Req, Resp>) => Promise<Resp>) {
    return (call: ServerUnaryCall<Req, Resp>, callback: sendUnaryData<Resp>): void => {
      handler(call).then(
        (response) => callback(null, response),
        (error: unknown) => callback(serviceError(error) as Parameters<sendUnaryData<Resp>>[0]),
      );
    };
  }

  readonly create = this.#unary<CreateReq, InstanceType<Persistent['CreateResp']>>(async (call) => {
    this.#manager(call);
    const options = call.request.getOptions();
    if (!options) throw KurrentCallError.badRequest('options', 'are missing');
    const group = options.getGroupName();
    if (!group) throw KurrentCallError.badRequest('group_name', 'is empty');
    let source: string;
    let filter: StoredFilter | null = null;
    if (options.hasAll()) {
      source = allSource;
      const all = options.getAll()!;
      if (all.hasFilter()) {
        const given = all.getFilter()!;
        const on = given.hasStreamIdentifier() ? 'stream' : 'type';
        const expression = on === 'stream' ? given.getStreamIdentifier() : given.getEventType();
        filter = { on, prefixes: expression?.getPrefixList() ?? [], regex: expression?.getRegex() ?? '' };
        filterOfRow(filter);
      }
    } else source = ledgerStreamName(streamNameBytes(options.hasStream() ? options.getStream()!.getStreamIdentifier() : options.getStreamIdentifier()));
    const settings = settingsOf(options.getSettings(), startFromOf(options, options.getSettings()));
    const startAt = await this.#startAt(source, settings.startFrom);
    const inserted = await sql`
      INSERT INTO kurrent_persistent_subscriptions (source, group_name, settings, filter, start_at)
      VALUES (${source}, ${group}, ${JSON.stringify(settings)}::jsonb, ${filter ? JSON.stringify(filter) : null}::jsonb, ${startAt})
      ON CONFLICT (source, group_name) DO NOTHING`.execute(this.store.db);
    if (Number(inserted.numAffectedRows ?? 0) === 0) throw exists(source, group);
    return new persistent.CreateResp();
  });

  readonly update = this.#unary<UpdateReq, InstanceType<Persistent['UpdateResp']>>(async (call) => {
    this.#manager(call);
    const options = call.request.getOptions();
    if (!options) throw KurrentCallError.badRequest('options', 'are missing');
    const group = options.getGroupName();
    const source = options.hasAll() ? allSource : ledgerStreamName(streamNameBytes(options.hasStream() ? options.getStream()!.getStreamIdentifier() : options.getStreamIdentifier()));
    const settings = settingsOf(options.getSettings(), startFromOf(options, options.getSettings()));
    const startAt = await this.#startAt(source, settings.startFrom);
    // A new start resolves again; an unchanged one keeps where the group was created to start.
    const updated = await sql`
      UPDATE kurrent_persistent_subscriptions SET settings = ${JSON.stringify(settings)}::jsonb, updated_at = now(),
        start_at = CASE WHEN settings->>'startFrom' = ${settings.startFrom} THEN start_at ELSE ${startAt} END
      WHERE source = ${source} AND group_name = ${group}`.execute(this.store.db);
    if (Number(updated.numAffectedRows ?? 0) === 0) throw notFound(source, group);
    // The group's consumers are dropped (KurrentDB does the same): they reconnect to the new settings.
    const running = this.#running.get(this.#key(source, group));
    if (running) {
      this.#running.delete(this.#key(source, group));
      await running.drop(new KurrentCallError(status.UNAVAILABLE, 'the subscription group was updated', { exception: 'persistent-subscription-dropped', 'stream-name': source, 'group-name': group }));
    }
    return new persistent.UpdateResp();
  });

  readonly delete = this.#unary<DeleteReq, InstanceType<Persistent['DeleteResp']>>(async (call) => {
    this.#manager(call);
    const options = call.request.getOptions();
    const source = sourceOf(options);
    const group = options!.getGroupName();
    const running = this.#running.get(this.#key(source, group));
    if (running) {
      this.#running.delete(this.#key(source, group));
      await running.drop(new KurrentCallError(status.UNAVAILABLE, 'the subscription group was deleted', { exception: 'persistent-subscription-dropped', 'stream-name': source, 'group-name': group }));
    }
    const deleted = await sql`DELETE FROM kurrent_persistent_subscriptions WHERE source = ${source} AND group_name = ${group}`.execute(this.store.db);
    if (Number(deleted.numAffectedRows ?? 0) === 0) throw notFound(source, group);
    return new persistent.DeleteResp();
  });

  readonly replayParked = this.#unary<ReplayParkedReq, InstanceType<Persistent['ReplayParkedResp']>>(async (call) => {
    this.#manager(call);
    const options = call.request.getOptions();
    const source = sourceOf(options);
    const group = options!.getGroupName();
    if (!(await this.#row(source, group))) throw notFound(source, group);
    const limit = options!.hasStopAt() ? Number(options!.getStopAt()) : null;
    await sql`
      UPDATE kurrent_parked_messages SET replay = true WHERE (source, group_name, position) IN (
        SELECT source, group_name, position FROM kurrent_parked_messages WHERE source = ${source} AND group_name = ${group} AND NOT replay ORDER BY position
        ${limit === null ? sql`` : sql`LIMIT ${limit}`})`.execute(this.store.db);
    this.#running.get(this.#key(source, group))?.replayRequested();
    return new persistent.ReplayParkedResp();
  });

  readonly restartSubsystem = this.#unary<InstanceType<typeof shared.Empty>, InstanceType<typeof shared.Empty>>(async (call) => {
    this.#manager(call);
    await this.#stopAll(new KurrentCallError(status.UNAVAILABLE, 'the persistent subscription subsystem restarted', { exception: 'persistent-subscription-dropped' }));
    return new shared.Empty();
  });

  async #info(row: GroupRow): Promise<SubscriptionInfo> {
    const running = this.#running.get(this.#key(row.source, row.group_name));
    const { settings } = row;
    const all = row.source === allSource;
    const parked = await sql<{ count: string }>`SELECT count(*)::text AS count FROM kurrent_parked_messages WHERE source = ${row.source} AND group_name = ${row.group_name} AND NOT replay`.execute(this.store.db);
    const checkpoint = running?.checkpoint ?? (row.checkpoint === null ? null : Number(row.checkpoint));
    // The last event of the source the group knows of: what its reader saw, else what the source holds now.
    let known = running?.lastKnown ?? null;
    if (known === null) known = all ? (await this.store.head()).position || null : await this.store.streamVersion(row.source);
    const asText = (value: number | null, isPosition: boolean): string => (value === null ? '' : isPosition ? `C:${value}/P:${value}` : String(value));
    const info = new persistent.SubscriptionInfo()
      .setEventSource(all ? allSource : kurrentStreamText(row.source))
      .setGroupName(row.group_name)
      .setStatus(running ? 'Live' : 'Idle')
      .setAveragePerSecond(0)
      .setTotalItems(String(running?.totalItems ?? 0))
      .setCountSinceLastMeasurement('0')
      .setLastCheckpointedEventPosition(asText(checkpoint, all))
      .setLastKnownEventPosition(asText(known === null ? null : all ? known : known - 1, all))
      .setResolveLinkTos(settings.resolveLinks)
      .setStartFrom(settings.startFrom)
      .setMessageTimeoutMilliseconds(settings.messageTimeoutMs)
      .setExtraStatistics(settings.extraStatistics)
      .setMaxRetryCount(settings.maxRetryCount)
      .setLiveBufferSize(settings.liveBufferSize)
      .setBufferSize(settings.historyBufferSize)
      .setReadBatchSize(settings.readBatchSize)
      .setCheckPointAfterMilliseconds(settings.checkpointAfterMs)
      .setMinCheckPointCount(settings.minCheckpointCount)
      .setMaxCheckPointCount(settings.maxCheckpointCount)
      .setReadBufferCount(running?.readBufferCount ?? 0)
      .setLiveBufferCount('0')
      .setRetryBufferCount(running?.retryBufferCount ?? 0)
      .setTotalInFlightMessages(running?.outstanding ?? 0)
      .setOutstandingMessagesCount(running?.outstanding ?? 0)
      .setNamedConsumerStrategy(settings.consumerStrategy)
      .setMaxSubscriberCount(settings.maxSubscriberCount)
      .setParkedMessageCount(parked.rows[0]?.count ?? '0');
    info.setConnectionsList(
      (running?.connections ?? []).map((connection) => {
        const seconds = Math.max(1, (Date.now() - connection.started) / 1000);
        const entry = new persistent.SubscriptionInfo.ConnectionInfo()
          .setFrom(connection.from)
          .setUsername(connection.principal?.id ?? '$anonymous')
          .setAverageItemsPerSecond(Math.round(connection.totalItems / seconds))
          .setTotalItems(String(connection.totalItems))
          .setCountSinceLastMeasurement('0')
          .setAvailableSlots(connection.freeSlots)
          .setInFlightMessages(connection.inFlight)
          .setConnectionName(connection.name);
        if (settings.extraStatistics) {
          // KurrentDB's latency quintiles (milliseconds from hand-out to answer); this face records answers' times only.
          entry.setObservedMeasurementsList(['Mean', 'Median', 'Fastest', 'Quintile 1', 'Quintile 2', 'Quintile 3', 'Quintile 4', 'Quintile 5', '90%', '95%', '99%', '99.5%', '99.9%', 'Highest'].map((key) => new persistent.SubscriptionInfo.Measurement().setKey(key).setValue('0')));
        }
        return entry;
      }),
    );
    return info;
  }

  readonly getInfo = this.#unary<GetInfoReq, InstanceType<Persistent['GetInfoResp']>>(async (call) => {
    this.#reader(call);
    const options = call.request.getOptions();
    const source = sourceOf(options);
    const row = await this.#row(source, options!.getGroupName());
    if (!row) throw notFound(source, options!.getGroupName());
    return new persistent.GetInfoResp().setSubscriptionInfo(await this.#info(row));
  });

  readonly list = this.#unary<ListReq, InstanceType<Persistent['ListResp']>>(async (call) => {
    this.#reader(call);
    const options = call.request.getOptions();
    let source: string | null = null;
    if (options?.hasListForStream()) {
      const forStream = options.getListForStream()!;
      source = forStream.hasAll() ? allSource : ledgerStreamName(streamNameBytes(forStream.getStream()));
    }
    const rows = await sql<GroupRow>`
      SELECT source, group_name, settings, filter, checkpoint, start_at FROM kurrent_persistent_subscriptions ${source === null ? sql`` : sql`WHERE source = ${source}`} ORDER BY created_at, group_name`.execute(this.store.db);
    if (source !== null && rows.rows.length === 0) throw notFound(source, '');
    const response = new persistent.ListResp();
    response.setSubscriptionsList(await Promise.all(rows.rows.map((row) => this.#info(row))));
    return response;
  });

  /** PersistentSubscriptions.Read: the options, then acks and nacks; events and a confirmation back. */
  readonly read = (call: ServerDuplexStream<ReadReq, ReadResp>): void => {
    let connection: Connection | null = null;
    let group: Group | null = null;
    const fail = (error: unknown): void => {
      call.emit('error', serviceError(error));
    };
    const onMessage = async (request: ReadReq): Promise<void> => {
      if (request.hasOptions()) {
        if (connection) throw KurrentCallError.badRequest('options', 'come once, first');
        const { principal, view } = this.#reader(call);
        const options = request.getOptions()!;
        const source = options.hasAll() ? allSource : ledgerStreamName(streamNameBytes(options.getStreamIdentifier()));
        const name = options.getGroupName();
        const row = await this.#row(source, name);
        if (!row) throw notFound(source, name);
        const key = this.#key(source, name);
        group = this.#running.get(key) ?? null;
        if (!group) {
          group = new Group(this, row);
          this.#running.set(key, group);
        }
        const max = group.settings.maxSubscriberCount;
        if (max > 0 && group.connections.length >= max) {
          throw new KurrentCallError(status.FAILED_PRECONDITION, `Subscription group ${name} on stream ${source === allSource ? allSource : kurrentStreamText(source)} has reached its maximum of ${max} subscribers.`, {
            exception: 'maximum-subscribers-reached',
            'stream-name': source === allSource ? allSource : kurrentStreamText(source),
            'group-name': name,
          });
        }
        const connectionName = call.metadata.get('connection-name')[0];
        connection = new Connection(call, principal, view, Math.max(1, options.getBufferSize() || 10), options.getUuidOption()?.hasStructured() ?? false, typeof connectionName === 'string' ? connectionName : '', call.getPeer());
        call.write(new persistent.ReadResp().setSubscriptionConfirmation(new persistent.ReadResp.SubscriptionConfirmation().setSubscriptionId(`${source === allSource ? allSource : kurrentStreamText(source)}::${name}`)));
        group.add(connection);
        return;
      }
      if (!connection || !group) throw KurrentCallError.badRequest('options', 'must come first');
      const ids = (list: Array<import('./protocol.js').UUID>): string[] => list.map((id) => uuidText(id) ?? '').filter((id) => id.length > 0);
      if (request.hasAck()) group.ack(ids(request.getAck()!.getIdsList()));
      else if (request.hasNack()) {
        const nack = request.getNack()!;
        group.nack(ids(nack.getIdsList()), nack.getAction(), nack.getReason(), connection);
      }
    };
    // Messages are handled in order: an ack never overtakes the options it belongs to.
    let chain = Promise.resolve();
    call.on('data', (request: ReadReq) => {
      chain = chain.then(() => onMessage(request)).catch(fail);
    });
    const leave = (): void => {
      if (connection && group) group.close(connection);
    };
    call.on('end', leave);
    call.on('cancelled', leave);
    call.on('close', leave);
    call.on('error', () => undefined);
  };
}
