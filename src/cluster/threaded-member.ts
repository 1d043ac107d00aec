import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { Worker } from 'node:worker_threads';
import { startThread } from '../thread.js';
import { type ClusterMemberOptions, type ClusterStats, type HeldLease } from './cluster-member.js';
import type { FromKeeper, KeeperData, ToKeeper } from './lease-keeper-worker.js';
import { leaseAllowsRequest, leaseSlotWidth, readLeaseSlot, type LeaseInSlot, type PollerClusterView } from '../poller/index.js';
import { shardOf, type ShardConfig } from './shards.js';
import { assertNever } from '../../events/index.js';

const maxShards = 4096;
/** How long a clean stop waits for the shards to be drained and released (the visits of a shard are cut at once). */
const stopBoundMs = 10_000;

/** The keeper's thread. */
function keeperThread(workerData: KeeperData): Worker {
  return startThread(new URL('./lease-keeper-worker.ts', import.meta.url), workerData);
}

/**
 * A cluster membership whose leases are kept by a thread of its own (`lease-keeper-worker.ts`), the one `start` uses:
 * the same rules as `ClusterMember`, but renewals never wait for a busy main thread. The guard (`mayRequest`) reads the
 * lease from shared memory, so it is exact at the moment of the request: a lease the keeper lost or could not renew is
 * refused at once, before the main thread has read the message that says so.
 */
export class ThreadedClusterMember implements PollerClusterView {
  readonly processId: string;
  readonly #options: ClusterMemberOptions & { connectionString: string };
  readonly #slots: BigInt64Array;
  #worker: Worker | null = null;
  readonly #data: KeeperData;
  /** Messages for the keeper before it runs (shards learnt before `start`). */
  readonly #queued: ToKeeper[] = [];
  readonly #slotOf = new Map<string, number>();
  readonly #known = new Set<string>();
  #held: HeldLease[] = [];
  stats: ClusterStats;
  #ready: Promise<void> | null = null;
  #stopped: Promise<void> | null = null;
  #exited = false;
  #stoppedSignal: (() => void) | null = null;

  constructor(options: ClusterMemberOptions & { connectionString: string }) {
    this.#options = options;
    this.processId = options.processId ?? `${hostname()}:${process.pid}:${randomBytes(3).toString('hex')}`;
    this.stats = { processId: this.processId, held: 0, acquired: 0, takeovers: 0, released: 0, lost: 0, renewFailures: 0, drainsAbandoned: 0 };
    const buffer = new SharedArrayBuffer(maxShards * leaseSlotWidth * 8);
    this.#slots = new BigInt64Array(buffer);
    const data: KeeperData = {
      options: {
        connectionString: options.connectionString,
        processId: this.processId,
        ...(options.apiUrl !== undefined ? { apiUrl: options.apiUrl } : {}),
        ...(options.pinned !== undefined ? { pinned: options.pinned } : {}),
        ...(options.shards !== undefined ? { shards: options.shards } : {}),
        ...(options.leaseTtlMs !== undefined ? { leaseTtlMs: options.leaseTtlMs } : {}),
        ...(options.renewEveryMs !== undefined ? { renewEveryMs: options.renewEveryMs } : {}),
        ...(options.handoverGraceMs !== undefined ? { handoverGraceMs: options.handoverGraceMs } : {}),
      },
      buffer,
    };
    this.#data = data;
  }

  /**
   * Starts the keeper; resolves once it has made its first round (joined the cluster). Call it once whatever the
   * callbacks drive (the poller) exists: a lease acquired before would find nobody to poll its shard.
   */
  start(): Promise<void> {
    this.#ready ??= new Promise<void>((resolve, reject) => {
      const worker = keeperThread(this.#data);
      this.#worker = worker;
      worker.on('message', (message: FromKeeper) => this.#onMessage(message, resolve, reject));
      worker.on('error', (error) => {
        this.#options.log?.('the lease keeper thread failed: leases run out and polling stops', { error: String(error) });
        reject(error);
      });
      worker.on('exit', () => {
        this.#exited = true;
        reject(new Error('the lease keeper thread exited'));
      });
      for (const message of this.#queued.splice(0)) worker.postMessage(message);
    });
    return this.#ready;
  }

  #onMessage(message: FromKeeper, ready: () => void, failed: (error: Error) => void): void {
    switch (message.kind) {
      case 'ready':
        ready();
        return;
      case 'failed':
        failed(new Error(message.error));
        return;
      case 'acquired':
        this.#slotOf.set(message.shard, message.slot);
        this.#options.onAcquired?.(message.shard, message.lease);
        return;
      case 'release':
        void (this.#options.onRelease?.(message.shard) ?? Promise.resolve())
          .catch((error: unknown) => this.#options.log?.('draining a shard failed', { shard: message.shard, error: String(error) }))
          .finally(() => this.#post({ kind: 'drained', shard: message.shard }));
        return;
      case 'lost':
        this.#options.onLost?.(message.shard, message.reason);
        return;
      case 'log':
        this.#options.log?.(message.message, message.fields);
        return;
      case 'state':
        this.#held = message.held;
        this.stats = message.stats;
        return;
      case 'stopped':
        this.#stoppedSignal?.();
        return;
      default:
        assertNever(message, 'message from the lease keeper');
    }
  }

  #post(message: ToKeeper): void {
    if (!this.#worker) this.#queued.push(message);
    else if (!this.#exited) this.#worker.postMessage(message);
  }

  shardOf(site: string, nodeId: string): string {
    const shard = shardOf(site, nodeId, this.#options.shards);
    if (!this.#known.has(shard)) {
      this.#known.add(shard);
      this.#post({ kind: 'known', shard, site });
    }
    return shard;
  }

  #read(shard: string): LeaseInSlot | null {
    const slot = this.#slotOf.get(shard);
    return slot === undefined ? null : readLeaseSlot(this.#slots, slot);
  }

  /**
   * The shared memory the keeper mirrors leases into, and the slot of each shard acquired: what a poller on a thread
   * of its own reads (`readLeaseSlot`) to guard every request as exactly as `mayRequest` does here.
   */
  get leaseSlots(): SharedArrayBuffer {
    return this.#data.buffer;
  }

  /** The rule that maps a node to its shard (`--site-shards`), for a poller that computes shards on its own thread. */
  get shardConfig(): ShardConfig {
    return this.#options.shards ?? {};
  }

  slotOf(shard: string): number | undefined {
    return this.#slotOf.get(shard);
  }

  lease(shard: string, now = Date.now()): { shard: string; epoch: number } | null {
    const held = this.#read(shard);
    if (!held || held.draining || now < held.pollAfter || now >= held.validUntil) return null;
    return { shard, epoch: held.epoch };
  }

  mayRequest(shard: string, epoch: number): boolean {
    return leaseAllowsRequest(this.#read(shard), epoch, Date.now());
  }

  held(): HeldLease[] {
    return this.#held.map((lease) => ({ ...lease }));
  }

  fenced(shard: string, epoch: number): void {
    this.#post({ kind: 'fenced', shard, epoch });
  }

  /**
   * Drains and releases every shard (through `onRelease`), leaves the cluster, and ends the thread; within
   * `stopBoundMs`, past which what is not released is left to run out.
   */
  stop(): Promise<void> {
    this.#stopped ??= (async () => {
      const worker = this.#worker;
      if (!worker || this.#exited) return;
      // The keeper says when its leases are released and it has left; its thread is then ended here (the loader the
      // thread registered keeps it alive on its own: waiting for it to exit cost a 60 s stop).
      // Bounded: a shard whose visits do not end (a request to a BMC that neither answers nor lets go) would hold the
      // stop for as long. Past the bound the thread is ended with that lease unreleased, as after a crash: it runs
      // out (the others take the shard then), and until then this process's own clock already refuses its requests
      // (`DRIVER_FENCED`), as the keeper no longer renews it.
      const stopped = new Promise<boolean>((resolve) => {
        const timer = setTimeout(() => resolve(false), stopBoundMs);
        const done = (): void => {
          clearTimeout(timer);
          resolve(true);
        };
        this.#stoppedSignal = done;
        worker.once('exit', done);
      });
      this.#post({ kind: 'stop' });
      if (!(await stopped)) {
        this.#options.log?.('leases not all handed over in time: left to run out, as after a crash', { boundS: stopBoundMs / 1000, held: this.#held.map((lease) => lease.shard) });
      }
      await worker.terminate().catch(() => undefined);
    })();
    return this.#stopped;
  }
}
