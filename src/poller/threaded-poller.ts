/**
 * The poller on a thread of its own (`poller-thread.ts`), the way `fleet-ledger start` runs it: the same `Poller`,
 * its guarantees unchanged (one visit per BMC at a time, a failing BMC gets less traffic, every outcome recorded, no
 * request without its lease), but its timers fire on an event loop that request parsing never holds. Nothing a
 * caller of the API sends can make a liveness check late (issue 39; `npm run bench:isolation` measures it).
 *
 * What stays on the calling thread: the credentials (sent to the thread by reference: the table known at start,
 * then every change within `credentialRoundMs`, and a reference the thread asks for at the next round) and the
 * cluster membership (its keeper thread mirrors leases into shared memory, which the poller's thread reads before
 * every request). `stats()` and `activeShards()` answer from the thread's last report (at most a second old).
 *
 * A thread that ends unexpectedly is started again (after 1 s, doubling to at most 30 s) with what it was told:
 * followed intents (from the start of the log: the targets are rebuilt), active shards, running.
 */
import type { PollerOptions } from './poller-options.js';
import type { Worker } from 'node:worker_threads';
import { pollOutcomeKinds, type PollOutcomeKind } from '../../events/index.js';
import type { PollerClusterView } from './lease-slots.js';
import { startThread } from '../thread.js';
import type { CredentialProvider, Credential, PollWork } from './poll-target.js';
import type { PollPolicy } from './poll-policy.js';
import { failureBucketNames, type FailureBucket, type PollerStats } from './poller.js';
import type { FromPollerThread, LoopDelay, PollerThreadData, ToPollerThread } from './poller-thread.js';

export interface ThreadedPollerOptions {
  connectionString: string;
  /** Connections of the thread's own pool (default 8). */
  poolSize?: number;
  credentials: CredentialProvider;
  /** The references whose credentials are sent ahead (every BMC known now); any other is sent once asked for. */
  credentialRefs: () => Iterable<string>;
  policy?: Partial<PollPolicy>;
  plainHttpSites?: readonly string[];
  /** How each site's HTTPS BMCs are trusted (`PollerOptions.siteTls`). */
  siteTls?: PollerOptions['siteTls'];
  /** Audited SSE streams where BMCs offer them (`PollerOptions.push`, `docs/push.md`). */
  push?: PollerOptions['push'];
  log?: (message: string, fields?: Record<string, unknown>) => void;
  /** What is news rather than trouble (a shard's BMCs taken up); none: said through `log`. */
  info?: (message: string, fields?: Record<string, unknown>) => void;
  /** Cluster mode: the member whose leases the poller works under (its keeper's shared memory is read directly). */
  cluster?: PollerClusterView;
  /** Every recorded outcome, up to a second late (benchmarks, tests). */
  onOutcome?: (nodeId: string, work: PollWork, outcome: PollOutcomeKind, latencyMs: number, at: number) => void;
}

/** How often credentials are compared with what the thread was sent (the simulator's own cache lasts 5 s). */
const credentialRoundMs = 2_000;
/** How long `stop` waits beyond its grace for the thread to flush and close before it is ended. */
const stopMarginMs = 15_000;

function emptyStats(): PollerStats {
  const outcomes = Object.fromEntries(pollOutcomeKinds.map((kind) => [kind, 0])) as Record<PollOutcomeKind, number>;
  return {
    targets: 0,
    visits: 0,
    visitsInFlight: 0,
    latched: 0,
    circuitOpen: 0,
    outcomes,
    observationsAppended: 0,
    outcomeBytesAppended: 0,
    pendingOutcomes: 0,
    outcomesDropped: 0,
    appendsFenced: 0,
    visitsAbandoned: 0,
    unrecordedLatches: 0,
    sinceContactMaxMs: 0,
    failureBuckets: Object.fromEntries(failureBucketNames.map((name) => [name, 0])) as Record<FailureBucket, number>,
    sessionLimitedTargets: 0,
    credentialRefusedTargets: 0,
    fencedTargets: 0,
    fencedChecks: 0,
    worstTargets: [],
  };
}

export class ThreadedPoller {
  readonly #options: ThreadedPollerOptions;
  #worker: Worker | null = null;
  #stats: PollerStats = emptyStats();
  #activeShards: Array<{ shard: string; epoch: number; targets: number }> = [];
  #loopDelay: LoopDelay = { p50Ms: 0, p99Ms: 0, maxMs: 0, samples: 0 };
  /** What the thread was sent, by credential reference (as JSON, to send only what changed). */
  readonly #sent = new Map<string, string>();
  readonly #wanted = new Set<string>();
  #credentialTimer: NodeJS.Timeout | null = null;
  /** What a replacement thread is told again. */
  readonly #active = new Map<string, ToPollerThread & { kind: 'activate' }>();
  #following: number | null = null;
  #running = false;
  readonly #deactivations = new Map<number, () => void>();
  #nextId = 1;
  #stopping: Promise<void> | null = null;
  #stoppedSignal: (() => void) | null = null;
  #restarts = 0;
  #ready: Promise<void>;

  constructor(options: ThreadedPollerOptions) {
    this.#options = options;
    this.#ready = this.#spawn();
    // Whoever awaits `ready()` hears of a failed start; nobody awaiting it must not make it an unhandled rejection.
    this.#ready.catch(() => undefined);
  }

  /** Resolves once the thread has its store open (commands sent before wait there for it). */
  ready(): Promise<void> {
    return this.#ready;
  }

  #table(refs: Iterable<string>): Record<string, Credential | null> {
    const changed: Record<string, Credential | null> = {};
    for (const ref of refs) {
      // A key with a NUL is one version of a reference (`versionedCredentialKey`), asked for by the thread.
      const at = ref.indexOf('\u0000');
      const credential = (at < 0 ? this.#options.credentials.get(ref) : this.#options.credentials.getVersion?.(ref.slice(0, at), ref.slice(at + 1))) ?? null;
      const text = JSON.stringify(credential);
      if (this.#sent.get(ref) === text) continue;
      this.#sent.set(ref, text);
      changed[ref] = credential;
    }
    return changed;
  }

  #spawn(): Promise<void> {
    this.#sent.clear();
    const credentials = Object.fromEntries(Object.entries(this.#table(this.#options.credentialRefs())).filter((entry): entry is [string, Credential] => entry[1] !== null));
    const cluster = this.#options.cluster;
    const data: PollerThreadData = {
      connectionString: this.#options.connectionString,
      poolSize: this.#options.poolSize ?? 8,
      ...(this.#options.policy ? { policy: this.#options.policy } : {}),
      ...(this.#options.plainHttpSites ? { plainHttpSites: this.#options.plainHttpSites } : {}),
      ...(this.#options.siteTls ? { siteTls: this.#options.siteTls } : {}),
      ...(this.#options.push ? { push: this.#options.push } : {}),
      credentials,
      cluster: cluster ? { processId: cluster.processId, shards: cluster.shardConfig, leaseSlots: cluster.leaseSlots } : null,
      reportOutcomes: this.#options.onOutcome !== undefined,
    };
    const worker = startThread(new URL('./poller-thread.ts', import.meta.url), data);
    this.#worker = worker;
    this.#credentialTimer ??= setInterval(() => this.#credentialRound(), credentialRoundMs);
    return new Promise<void>((resolve, reject) => {
      worker.on('message', (message: FromPollerThread) => this.#onMessage(message, resolve, reject));
      worker.on('error', (error) => this.#options.log?.('the poller thread failed', { error: String(error) }));
      worker.on('exit', (code) => {
        if (this.#worker !== worker) return;
        this.#worker = null;
        reject(new Error(`the poller thread exited (${code})`));
        for (const [id, done] of this.#deactivations) {
          this.#deactivations.delete(id);
          done();
        }
        if (this.#stopping) {
          this.#stoppedSignal?.();
          return;
        }
        // Liveness checks stop while no thread polls: a replacement is started at once, then with growing waits.
        const waitMs = Math.min(30_000, 1000 * 2 ** this.#restarts);
        this.#restarts += 1;
        this.#options.log?.('the poller thread ended unexpectedly; starting it again', { code, waitS: waitMs / 1000 });
        setTimeout(() => void this.#respawn(), waitMs).unref();
      });
    });
  }

  async #respawn(): Promise<void> {
    if (this.#stopping) return;
    this.#ready = this.#spawn();
    if (this.#following !== null) this.#post({ kind: 'follow', fromPosition: 1 });
    for (const activate of this.#active.values()) this.#post(activate);
    if (this.#running) this.#post({ kind: 'start' });
    await this.#ready.then(
      () => (this.#restarts = 0),
      () => undefined,
    );
  }

  #onMessage(message: FromPollerThread, ready: () => void, failed: (error: Error) => void): void {
    switch (message.kind) {
      case 'ready':
        ready();
        return;
      case 'failed':
        failed(new Error(`the poller did not start: ${message.error}`));
        return;
      case 'log':
        (message.level === 'info' ? (this.#options.info ?? this.#options.log) : this.#options.log)?.(message.message, message.fields);
        return;
      case 'state':
        this.#stats = message.stats;
        this.#activeShards = message.activeShards;
        this.#loopDelay = message.loopDelay;
        for (const [nodeId, work, outcome, latencyMs, at] of message.outcomes) this.#options.onOutcome?.(nodeId, work, outcome, latencyMs, at);
        return;
      case 'known':
        this.#options.cluster?.shardOf(message.site, message.nodeId);
        return;
      case 'fenced':
        this.#options.cluster?.fenced(message.shard, message.epoch);
        return;
      case 'credential-wanted':
        this.#wanted.add(message.credentialRef);
        return;
      case 'deactivated':
        this.#deactivations.get(message.id)?.();
        this.#deactivations.delete(message.id);
        return;
      case 'followed':
        return;
      case 'stopped':
        this.#stoppedSignal?.();
        return;
      default: {
        const never: never = message;
        throw new Error(`unknown message from the poller thread ${JSON.stringify(never)}`);
      }
    }
  }

  #credentialRound(): void {
    const refs = new Set([...this.#options.credentialRefs(), ...this.#wanted]);
    // A reference asked for is answered even when there is nothing for it (null), so the thread stops waiting.
    for (const ref of this.#wanted) this.#sent.delete(ref);
    this.#wanted.clear();
    const table = this.#table(refs);
    if (Object.keys(table).length > 0) this.#post({ kind: 'credentials', table });
  }

  #post(message: ToPollerThread): void {
    this.#worker?.postMessage(message);
  }

  /** Keeps the targets in step with the log from `fromPosition` (on the thread); resolves when `signal` aborts. */
  followIntents(signal: AbortSignal, fromPosition = 1): Promise<void> {
    this.#following = fromPosition;
    this.#post({ kind: 'follow', fromPosition });
    return new Promise<void>((resolve) => {
      const end = (): void => {
        this.#following = null;
        this.#post({ kind: 'unfollow' });
        resolve();
      };
      if (signal.aborted) end();
      else signal.addEventListener('abort', end, { once: true });
    });
  }

  start(): void {
    this.#running = true;
    this.#post({ kind: 'start' });
  }

  /** Cluster mode: polls the shard's BMCs under its lease (the thread logs how many). Returns at once. */
  activateShard(shard: string, epoch: number, pollAfter: number): void {
    const slot = this.#options.cluster?.slotOf(shard);
    if (slot === undefined) {
      this.#options.log?.('a shard was activated that its member does not hold: not polled', { shard, epoch });
      return;
    }
    const message = { kind: 'activate' as const, shard, epoch, pollAfter, slot };
    this.#active.set(shard, message);
    this.#post(message);
  }

  /** Cluster mode: stops visiting the shard's BMCs; resolves when nothing more is sent or written under its lease. */
  deactivateShard(shard: string): Promise<void> {
    this.#active.delete(shard);
    if (!this.#worker) return Promise.resolve();
    const id = this.#nextId++;
    return new Promise<void>((resolve) => {
      this.#deactivations.set(id, resolve);
      this.#post({ kind: 'deactivate', id, shard });
    });
  }

  stats(): PollerStats {
    return this.#stats;
  }

  activeShards(): Array<{ shard: string; epoch: number; targets: number }> {
    return this.#activeShards.map((active) => ({ ...active }));
  }

  /** How late the poll loop's timers fired since the last `resetLoopDelay` (at most a second old). */
  loopDelay(): LoopDelay {
    return { ...this.#loopDelay };
  }

  resetLoopDelay(): void {
    this.#post({ kind: 'reset-loop-delay' });
  }

  /** Stops polling, waits up to `graceMs` for visits in flight, flushes what was recorded, and ends the thread. */
  stop(graceMs = 5000): Promise<void> {
    this.#stopping ??= (async () => {
      if (this.#credentialTimer) clearInterval(this.#credentialTimer);
      const worker = this.#worker;
      if (!worker) return;
      const stopped = new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, graceMs + stopMarginMs);
        this.#stoppedSignal = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      this.#post({ kind: 'stop', graceMs });
      await stopped;
      await worker.terminate().catch(() => undefined);
    })();
    return this.#stopping;
  }
}
