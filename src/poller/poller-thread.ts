/**
 * The thread a `ThreadedPoller` polls on: a `Poller` with an event loop and a connection pool of its own, so nothing
 * the API's thread does (reading a 40 MB EBOM, a hundred megabyte bodies, a burst of queries) delays a liveness
 * check by a millisecond. One `POST /v1/ebom` of 60 MB once held the shared loop 50 s: 727 checks timed out and 62
 * healthy nodes were called dark. Commands and answers travel as messages; a lease is read from the keeper's shared
 * memory before every request, exactly as on the thread that keeps it.
 */
import type { PollerOptions } from './poller-options.js';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { parentPort, workerData } from 'node:worker_threads';
import type { PollOutcomeKind } from '../../events/index.js';
import { leaseAllowsRequest, readLeaseSlot } from './lease-slots.js';
import { shardOf, type ShardConfig } from './shard-of.js';
import { EventStore } from '../ledger/index.js';
import type { Credential, PollWork } from './poll-target.js';
import type { PollPolicy } from './poll-policy.js';
import { Poller, type PollerCluster, type PollerStats } from './poller.js';

export interface PollerThreadData {
  connectionString: string;
  poolSize: number;
  policy?: Partial<PollPolicy>;
  plainHttpSites?: readonly string[];
  siteTls?: PollerOptions['siteTls'];
  push?: PollerOptions['push'];
  /** The credentials known when the thread starts, by reference (later ones arrive as `credentials` messages). */
  credentials: Record<string, Credential>;
  /** Cluster mode: the member's id and shard rule, and the shared memory its keeper mirrors leases into. */
  cluster: { processId: string; shards: ShardConfig; leaseSlots: SharedArrayBuffer } | null;
  /** Post every outcome (batched, with `state`): for benchmarks and tests. */
  reportOutcomes: boolean;
}

/** The poll loop's delay (how late its timers fire), since the last reset: the measure of its isolation. */
export interface LoopDelay {
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  samples: number;
}

export type OutcomeRow = [nodeId: string, work: PollWork, outcome: PollOutcomeKind, latencyMs: number, at: number];

export type ToPollerThread =
  | { kind: 'credentials'; table: Record<string, Credential | null> }
  | { kind: 'follow'; fromPosition: number }
  | { kind: 'unfollow' }
  | { kind: 'start' }
  | { kind: 'activate'; shard: string; epoch: number; pollAfter: number; slot: number }
  | { kind: 'deactivate'; id: number; shard: string }
  | { kind: 'reset-loop-delay' }
  | { kind: 'stop'; graceMs: number };

export type FromPollerThread =
  | { kind: 'ready' }
  | { kind: 'failed'; error: string }
  | { kind: 'log'; level: 'info' | 'warn'; message: string; fields?: Record<string, unknown> }
  | { kind: 'state'; stats: PollerStats; activeShards: Array<{ shard: string; epoch: number; targets: number }>; loopDelay: LoopDelay; outcomes: OutcomeRow[] }
  | { kind: 'known'; shard: string; site: string; nodeId: string }
  | { kind: 'fenced'; shard: string; epoch: number }
  | { kind: 'credential-wanted'; credentialRef: string }
  | { kind: 'deactivated'; id: number }
  | { kind: 'followed' }
  | { kind: 'stopped' };

const port = parentPort!;
const post = (message: FromPollerThread): void => port.postMessage(message);
const data = workerData as PollerThreadData;

const credentials = new Map(Object.entries(data.credentials));
const wanted = new Set<string>();
const slotOf = new Map<string, number>();
const knownShards = new Set<string>();
const slots = data.cluster ? new BigInt64Array(data.cluster.leaseSlots) : null;

/** The membership as this thread sees it: shard rule local, leases read from shared memory, the rest as messages. */
const cluster: PollerCluster | undefined = data.cluster
  ? {
      processId: data.cluster.processId,
      shardOf(site, nodeId) {
        const shard = shardOf(site, nodeId, data.cluster!.shards);
        if (!knownShards.has(shard)) {
          knownShards.add(shard);
          post({ kind: 'known', shard, site, nodeId });
        }
        return shard;
      },
      mayRequest(shard, epoch) {
        const slot = slotOf.get(shard);
        return slot !== undefined && leaseAllowsRequest(readLeaseSlot(slots!, slot), epoch, Date.now());
      },
      fenced(shard, epoch) {
        post({ kind: 'fenced', shard, epoch });
      },
    }
  : undefined;

/** The key a version of a reference travels under between the host and the thread (a NUL never occurs in a reference). */
export function versionedCredentialKey(credentialRef: string, version: string): string {
  return `${credentialRef}\u0000${version}`;
}

const outcomes: OutcomeRow[] = [];
const delay = monitorEventLoopDelay({ resolution: 10 });
delay.enable();

let store: EventStore | null = null;
let poller: Poller | null = null;
let following: AbortController | null = null;
let follow: Promise<void> = Promise.resolve();

const starting = (async () => {
  try {
    // The process that started this thread migrated the schema already.
    store = await EventStore.open({ connectionString: data.connectionString, poolSize: data.poolSize, migrate: false });
    poller = new Poller({
      store,
      credentials: {
        get(credentialRef) {
          const credential = credentials.get(credentialRef);
          // Asked for once: the host sends it (or that there is none) at its next round, and the visit after uses it.
          if (credential === undefined && !wanted.has(credentialRef)) {
            wanted.add(credentialRef);
            post({ kind: 'credential-wanted', credentialRef });
          }
          return credential ?? undefined;
        },
        // One version of a reference (the one in force on a node), asked of the host the same way, keyed apart.
        getVersion(credentialRef, version) {
          const key = versionedCredentialKey(credentialRef, version);
          const credential = credentials.get(key);
          if (credential === undefined && !wanted.has(key)) {
            wanted.add(key);
            post({ kind: 'credential-wanted', credentialRef: key });
          }
          return credential ?? undefined;
        },
      },
      ...(data.policy ? { policy: data.policy } : {}),
      ...(data.plainHttpSites ? { plainHttpSites: data.plainHttpSites } : {}),
      ...(data.siteTls ? { siteTls: data.siteTls } : {}),
      ...(data.push ? { push: data.push } : {}),
      log: (message, fields) => post({ kind: 'log', level: 'warn', message, ...(fields ? { fields } : {}) }),
      ...(cluster ? { cluster } : {}),
      ...(data.reportOutcomes ? { onOutcome: (nodeId, work, outcome, latencyMs, at) => void outcomes.push([nodeId, work, outcome, latencyMs, at]) } : {}),
    });
    post({ kind: 'ready' });
  } catch (error) {
    post({ kind: 'failed', error: error instanceof Error ? error.message : String(error) });
  }
})();

function loopDelay(): LoopDelay {
  const ms = (ns: number): number => Math.round(ns / 1e4) / 100;
  return { p50Ms: ms(delay.percentile(50)), p99Ms: ms(delay.percentile(99)), maxMs: ms(delay.max), samples: delay.count };
}

function postState(): void {
  if (!poller) return;
  post({ kind: 'state', stats: poller.stats(), activeShards: poller.activeShards(), loopDelay: loopDelay(), outcomes: outcomes.splice(0) });
}
const state = setInterval(postState, 1000);

async function handle(message: ToPollerThread): Promise<void> {
  await starting;
  if (!poller) return;
  switch (message.kind) {
    case 'credentials':
      for (const [credentialRef, credential] of Object.entries(message.table)) {
        wanted.delete(credentialRef);
        if (credential) credentials.set(credentialRef, credential);
        else credentials.delete(credentialRef);
      }
      return;
    case 'follow':
      following?.abort();
      following = new AbortController();
      follow = poller.followIntents(following.signal, message.fromPosition).catch((error: unknown) => post({ kind: 'log', level: 'warn', message: 'following intents failed', fields: { error: String(error) } }));
      return;
    case 'unfollow':
      following?.abort();
      await follow;
      post({ kind: 'followed' });
      return;
    case 'start':
      poller.start();
      return;
    case 'activate': {
      slotOf.set(message.shard, message.slot);
      const targets = poller.activateShard(message.shard, message.epoch, message.pollAfter);
      post({ kind: 'log', level: 'info', message: `polling shard ${message.shard} (epoch ${message.epoch}, ${targets} BMCs)`, fields: { shard: message.shard, epoch: message.epoch, targets } });
      return;
    }
    case 'deactivate':
      await poller.deactivateShard(message.shard).catch((error: unknown) => post({ kind: 'log', level: 'warn', message: 'draining a shard failed', fields: { shard: message.shard, error: String(error) } }));
      post({ kind: 'deactivated', id: message.id });
      return;
    case 'reset-loop-delay':
      delay.reset();
      return;
    case 'stop':
      clearInterval(state);
      following?.abort();
      await follow;
      await poller.stop(message.graceMs);
      postState();
      await store?.close().catch(() => undefined);
      delay.disable();
      post({ kind: 'stopped' });
      port.close();
      return;
    default: {
      const never: never = message;
      throw new Error(`unknown poller command ${JSON.stringify(never)}`);
    }
  }
}

port.on('message', (message: ToPollerThread) => {
  handle(message).catch((error: unknown) => post({ kind: 'log', level: 'warn', message: `poller command ${message.kind} failed`, fields: { error: String(error) } }));
});
