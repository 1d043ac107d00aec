/**
 * One persistent subscription group being served: its consumers' connections, the events in flight to them, the
 * retries, parking and the checkpoint (see `persistent-subscriptions.ts` for the whole service).
 */
import { randomUUID } from 'node:crypto';
import { type ServerDuplexStream } from '@grpc/grpc-js';
import { sql } from 'kysely';
import type { RecordedEvent } from '../../events/index.js';
import type { Principal } from '../api/index.js';
import { serviceError } from './kurrent-error.js';
import { fillRecord } from './event-mapping.js';
import { persistent } from './protocol.js';
import { allSource, filterOfRow, type GroupRow, type GroupSettings, type ReadReq, type ReadResp } from './persistent-settings.js';
import type { PersistentSubscriptions } from './persistent-subscriptions.js';

export interface InFlight {
  event: RecordedEvent;
  retryCount: number;
  connection: Connection;
  timer: NodeJS.Timeout | null;
}

/** A message waiting to be handed out (first delivery, a retry, a replayed parked event). */
export interface Queued {
  event: RecordedEvent;
  retryCount: number;
}

export class Connection {
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
export class Group {
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

