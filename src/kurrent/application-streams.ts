/**
 * KurrentDB's stream semantics over the ledger's append-only log, for application streams: stream metadata, soft
 * deletes and tombstones. Nothing is ever removed from the log (every event stays hash-chained and provable); what
 * changes is what a stream read returns.
 *
 * - Metadata: the stream `$$<stream>` holds `$metadata` events (JSON); the last one is in force. `$tb` (truncate
 *   before: revisions below it are not returned), `$maxCount` (only the last n), `$maxAge` (seconds: older events are
 *   not returned) apply to reads of the stream; `$acl` and every other member are kept and returned as written.
 * - Soft delete (`deleteStream`): a `$metadata` event setting `$tb` past the stream's last revision. Reads answer
 *   StreamNotFound; an append later continues the stream's revisions, visible again.
 * - Tombstone (`tombstoneStream`): a `$streamDeleted` event appended to the stream itself. Reads, appends and metadata
 *   writes answer StreamDeleted from then on.
 *
 * A tombstone is checked before each append and appends to a stream wait while its tombstone is written (in this
 * process), so no append lands after a tombstone written here. A second fleet-ledger process serving the face over the
 * same log checks the stream too, but an append it admitted may still commit right after a tombstone written here.
 */
import { status } from '@grpc/grpc-js';
import type { RecordedEvent } from '../../events/index.js';
import type { EventStore } from '../ledger/index.js';
import { bytesOf, isApplicationEvent } from './event-mapping.js';
import { KurrentCallError } from './kurrent-error.js';
import { ledgerStreamName } from './stream-names.js';

/** The event type of a tombstone and of a metadata event (KurrentDB's names). */
export const tombstoneType = '$streamDeleted';
export const metadataType = '$metadata';

/** What a stream's metadata says of its reads. */
export interface ReadRules {
  /** The first revision returned (`$tb`). */
  truncateBefore: number | null;
  maxCount: number | null;
  maxAgeSeconds: number | null;
}

const noRules: ReadRules = { truncateBefore: null, maxCount: null, maxAgeSeconds: null };

/** A shared/exclusive lock: appends share it, a tombstone takes it alone. */
class SharedLock {
  #holders = 0;
  #exclusive: Promise<void> | null = null;
  #drained: (() => void) | null = null;

  get idle(): boolean {
    return this.#holders === 0 && this.#exclusive === null;
  }

  async shared<T>(run: () => Promise<T>): Promise<T> {
    while (this.#exclusive) await this.#exclusive;
    this.#holders += 1;
    try {
      return await run();
    } finally {
      this.#holders -= 1;
      if (this.#holders === 0) this.#drained?.();
    }
  }

  async exclusive<T>(run: () => Promise<T>): Promise<T> {
    while (this.#exclusive) await this.#exclusive;
    let release!: () => void;
    this.#exclusive = new Promise<void>((resolve) => (release = resolve));
    try {
      if (this.#holders > 0) await new Promise<void>((resolve) => (this.#drained = resolve));
      this.#drained = null;
      return await run();
    } finally {
      this.#exclusive = null;
      release();
    }
  }
}

export function isTombstone(event: RecordedEvent): boolean {
  return isApplicationEvent(event) && event.data.type === tombstoneType;
}

export function streamDeleted(name: string): KurrentCallError {
  return new KurrentCallError(status.FAILED_PRECONDITION, `stream ${name} is deleted (tombstoned)`, {
    exception: 'stream-deleted',
    'stream-name': name,
    'fleet-ledger-code': 'KURRENT_STREAM_DELETED',
  });
}

export class ApplicationStreams {
  readonly #store: EventStore;
  readonly #locks = new Map<string, SharedLock>();
  /** Tombstone checks in flight, one per stream: appenders to one stream at once share one read. */
  readonly #checks = new Map<string, Promise<boolean>>();
  /**
   * Streams seen without a tombstone, and when: appends within `aliveForMs` of a check take its answer instead of
   * reading again (a flood of appends to one stream reads it once a second, not once an append). A tombstone written
   * here clears the stream's entry before any append is admitted again; one written by another process is seen here
   * within `aliveForMs`.
   */
  readonly #alive = new Map<string, number>();
  static readonly aliveForMs = 1000;

  constructor(store: EventStore) {
    this.#store = store;
  }

  /** Whether the stream (its ledger name) ends with a tombstone; `fresh`: read it now, whatever was seen before. */
  tombstoned(stream: string, fresh = false): Promise<boolean> {
    const seen = this.#alive.get(stream);
    if (!fresh && seen !== undefined && Date.now() - seen < ApplicationStreams.aliveForMs) return Promise.resolve(false);
    const inFlight = this.#checks.get(stream);
    if (inFlight && !fresh) return inFlight;
    const started = Date.now();
    const check = this.#store
      .readStream(stream, { direction: 'backward', limit: 1 })
      .then((events) => {
        const tombstoned = events.length > 0 && isTombstone(events[0]!);
        if (tombstoned) this.#alive.delete(stream);
        else {
          this.#alive.set(stream, started);
          // Bounded: the oldest entries go first (a Map keeps insertion order).
          if (this.#alive.size > 10_000) for (const key of [...this.#alive.keys()].slice(0, 1_000)) this.#alive.delete(key);
        }
        return tombstoned;
      })
      .finally(() => {
        if (this.#checks.get(stream) === check) this.#checks.delete(stream);
      });
    this.#checks.set(stream, check);
    return check;
  }

  #lock(stream: string): SharedLock {
    let lock = this.#locks.get(stream);
    if (!lock) {
      lock = new SharedLock();
      this.#locks.set(stream, lock);
    }
    return lock;
  }

  #release(stream: string, lock: SharedLock): void {
    if (lock.idle && this.#locks.get(stream) === lock) this.#locks.delete(stream);
  }

  /** Runs an append to `stream` (ledger name) unless it is tombstoned (StreamDeleted, naming `name`). */
  async append<T>(stream: string, name: string, run: () => Promise<T>): Promise<T> {
    const lock = this.#lock(stream);
    try {
      return await lock.shared(async () => {
        if (await this.tombstoned(stream)) throw streamDeleted(name);
        return run();
      });
    } finally {
      this.#release(stream, lock);
    }
  }

  /** Runs `run` with no append to `stream` under way or admitted meanwhile (a tombstone, a delete). */
  async exclusive<T>(stream: string, run: () => Promise<T>): Promise<T> {
    const lock = this.#lock(stream);
    try {
      return await lock.exclusive(async () => {
        // Appends admitted after this read the stream again: it may now end with a tombstone.
        this.#alive.delete(stream);
        try {
          return await run();
        } finally {
          this.#alive.delete(stream);
        }
      });
    } finally {
      this.#release(stream, lock);
    }
  }

  /** The ledger name of the metadata stream of the stream named `name` (KurrentDB name bytes). */
  metastream(name: Uint8Array): string {
    return ledgerStreamName(Buffer.concat([Buffer.from('$$'), name]));
  }

  /** The metadata in force for the stream named `name` (its last `$metadata` event's JSON object), with its event. */
  async metadata(name: Uint8Array): Promise<{ value: Record<string, unknown>; event: RecordedEvent } | null> {
    const [last] = await this.#store.readStream(this.metastream(name), { direction: 'backward', limit: 1 });
    if (!last || !isApplicationEvent(last)) return null;
    const data = last.data;
    if (data.type !== metadataType) return null;
    try {
      const value = JSON.parse(bytesOf(data.data).toString('utf8')) as unknown;
      return value !== null && typeof value === 'object' && !Array.isArray(value) ? { value: value as Record<string, unknown>, event: last } : null;
    } catch {
      return null;
    }
  }

  /** What the stream's metadata says of its reads. */
  async readRules(name: Uint8Array): Promise<ReadRules> {
    const metadata = await this.metadata(name);
    if (!metadata) return noRules;
    const count = (key: string): number | null => {
      const value = metadata.value[key];
      return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0 ? value : null;
    };
    return { truncateBefore: count('$tb'), maxCount: count('$maxCount'), maxAgeSeconds: count('$maxAge') };
  }
}
