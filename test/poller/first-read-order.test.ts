/**
 * While first reads wait for a slot (a fleet brought up, more nodes due than `maxConcurrentReads`), the kind of BMC whose
 * first reads take longest goes first: a slow model's last reads do not start last and end long after the rest. The
 * kind is what the BMC's service root says, asked by the liveness check until it is known; read times are learned from
 * the first reads that succeeded, and a kind not read yet counts as slowest.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import { Poller, type Credential, type PollTarget, type PollWork, type Visitor, type VisitOptions, type VisitResult } from '../../src/poller/index.js';
import { modelOfRoot } from '../../src/poller/redfish-visitor.js';
import { useFreshStore } from '../support/fresh-store.js';
import { ManualClock } from '../support/manual-clock.js';

/** BMCs whose address names their kind: a `slow` one's first read takes 120 ms, a `quick` one's 5 ms. */
class TwoKindsVisitor implements Visitor {
  readonly reads: string[] = [];
  constructor(private readonly clock: ManualClock) {}
  readonly described = new Map<string, number>();
  async visit(target: PollTarget, _credential: Credential, works: readonly PollWork[], options: VisitOptions): Promise<VisitResult> {
    const kind = target.baseUrl.includes('slow') ? 'slow' : 'quick';
    if (works.length === 1 && works[0] === 'liveness') {
      if (!options.describe) return { ok: true, latencyMs: 1, observations: [] };
      this.described.set(target.nodeId, (this.described.get(target.nodeId) ?? 0) + 1);
      return { ok: true, latencyMs: 1, observations: [], model: kind };
    }
    this.reads.push(target.nodeId);
    const ms = kind === 'slow' ? 120 : 5;
    await this.clock.sleep(ms);
    return { ok: true, latencyMs: ms, observations: [] };
  }
}

describe('the order of first reads', () => {
  const freshStore = useFreshStore();
  // The poller runs on a manual clock: its seconds pass in milliseconds, the same on a busy machine as on a quiet one.
  let clock = new ManualClock();
  beforeEach(() => {
    clock = new ManualClock(Date.now());
  });

  it('first reads of the kind that takes longest start first, once a quicker kind is known; the root is asked until the kind is known', async () => {
    const visitor = new TwoKindsVisitor(clock);
    const poller = new Poller({
      clock: clock.now,
      timers: clock,
      store: freshStore(),
      visitor,
      credentials: { get: () => ({ username: 'u', password: 'p', version: '1', endpoints: ['*'] }) },
      plainHttpSites: ['dc1'],
      policy: { jitter: 0, intervals: { health: 3600, inventory: 3600, firmware: 3600 }, firstReadSpreadS: 0, maxConcurrentReads: 1 },
    });
    // Added alternating: by due time alone, the reads would alternate too.
    for (let i = 0; i < 6; i += 1) {
      for (const kind of ['quick', 'slow']) poller.addTarget({ nodeId: `${kind}-${i}`, site: 'dc1', rack: 'r1', baseUrl: `http://${kind}-${i}`, credentialRef: 'c', sessionLimit: 2, expectedIntervalS: 0.05 });
    }
    poller.start();
    for (let spent = 0; visitor.reads.length < 12 && spent < 10_000; spent += 20) await clock.advance(20);
    await clock.advance(200);
    await clock.settle(poller.stop());
    const order = visitor.reads.map((nodeId) => nodeId.split('-')[0]);
    expect(order).toHaveLength(12);
    // Before any read ended both kinds were unknown (slowest): the first two reads may be of either kind. From then on
    // every slow read starts before the quick ones left.
    const rest = order.slice(2);
    expect(rest.lastIndexOf('slow')).toBeLessThan(rest.indexOf('quick') === -1 ? Number.POSITIVE_INFINITY : rest.indexOf('quick'));
    // Each BMC was asked what it is once: at its first check, never after it answered.
    expect([...visitor.described.values()]).toEqual(Array(12).fill(1));
  });

  it("a BMC's kind is its root's vendor, product, Redfish version and OEM namespaces; anything but an object says nothing", () => {
    expect(modelOfRoot({ Vendor: 'NVIDIA', Product: 'GB200 NVL', RedfishVersion: '1.17.0', Oem: {} })).toBe('NVIDIA|GB200 NVL|1.17.0|');
    expect(modelOfRoot({ RedfishVersion: '1.11.0', Oem: { Supermicro: {} } })).toBe('||1.11.0|Supermicro');
    // Same product, another Redfish version (the GH200 and the NVLink switch tray share "P3809"): another kind.
    expect(modelOfRoot({ Vendor: 'NVIDIA', Product: 'P3809', RedfishVersion: '1.9.0' })).not.toBe(modelOfRoot({ Vendor: 'NVIDIA', Product: 'P3809', RedfishVersion: '1.17.0' }));
    expect(modelOfRoot('<html>')).toBeUndefined();
    expect(modelOfRoot([])).toBeUndefined();
    expect(modelOfRoot(null)).toBeUndefined();
  });
});
