/**
 * The thread that keeps a process's poll leases (`ThreadedClusterMember`): heartbeats, renewals, acquisitions and
 * releases run here, on an event loop of their own, so a main thread busy polling thousands of BMCs (or applying a
 * burst of events) never lets a lease run out by answering late. What is held is mirrored into shared memory, which
 * the poller's guard reads before every request; the rest travels as messages.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { ClusterMember, type ClusterMemberOptions, type HeldLease } from './cluster-member.js';
import { assertNever } from '../../events/index.js';

export type ToKeeper = { kind: 'known'; shard: string; site: string } | { kind: 'drained'; shard: string } | { kind: 'fenced'; shard: string; epoch: number } | { kind: 'stop' };
export type FromKeeper =
  | { kind: 'ready' }
  | { kind: 'acquired'; shard: string; lease: HeldLease; slot: number }
  | { kind: 'release'; shard: string }
  | { kind: 'lost'; shard: string; reason: string }
  | { kind: 'log'; message: string; fields?: Record<string, unknown> }
  | { kind: 'state'; held: HeldLease[]; stats: ClusterMember['stats'] }
  | { kind: 'failed'; error: string }
  | { kind: 'stopped' };

export interface KeeperData {
  options: Pick<ClusterMemberOptions, 'connectionString' | 'processId' | 'apiUrl' | 'pinned' | 'shards' | 'leaseTtlMs' | 'renewEveryMs' | 'handoverGraceMs'>;
  buffer: SharedArrayBuffer;
}

const port = parentPort!;
const post = (message: FromKeeper): void => port.postMessage(message);
const { options, buffer } = workerData as KeeperData;
const slots = new BigInt64Array(buffer);
const slotOf = new Map<string, number>();
const maxSlots = slots.length / 4;
const waitingForDrain = new Map<string, () => void>();

const member = new ClusterMember({
  ...options,
  shared: {
    slots,
    slotOf: (shard) => {
      let slot = slotOf.get(shard);
      if (slot === undefined) {
        if (slotOf.size >= maxSlots) throw new Error(`more than ${maxSlots} shards`);
        slot = slotOf.size;
        slotOf.set(shard, slot);
      }
      return slot;
    },
  },
  log: (message, fields) => post({ kind: 'log', message, ...(fields ? { fields } : {}) }),
  onAcquired: (shard, lease) => post({ kind: 'acquired', shard, lease, slot: slotOf.get(shard)! }),
  onRelease: (shard) =>
    new Promise<void>((resolve) => {
      waitingForDrain.set(shard, resolve);
      post({ kind: 'release', shard });
    }),
  onLost: (shard, reason) => {
    waitingForDrain.get(shard)?.();
    waitingForDrain.delete(shard);
    post({ kind: 'lost', shard, reason });
  },
});

const state = setInterval(() => post({ kind: 'state', held: member.held(), stats: { ...member.stats } }), 1000);

port.on('message', (message: ToKeeper) => {
  switch (message.kind) {
    case 'known':
      member.knowShard(message.shard, message.site);
      return;
    case 'drained':
      waitingForDrain.get(message.shard)?.();
      waitingForDrain.delete(message.shard);
      return;
    case 'fenced':
      member.fenced(message.shard, message.epoch);
      return;
    case 'stop':
      clearInterval(state);
      void member.stop().finally(() => {
        post({ kind: 'state', held: member.held(), stats: { ...member.stats } });
        post({ kind: 'stopped' });
        port.close();
      });
      return;
    default:
      assertNever(message, 'message to the lease keeper');
  }
});

member.start().then(
  () => post({ kind: 'ready' }),
  (error: unknown) => post({ kind: 'failed', error: String(error) }),
);
