/**
 * A fleet brought up is inventoried within minutes: a heavy read that fails before the work was ever read is tried
 * again soon (after `firstReadRetryS`, doubled at each failure), not at the work's next interval (four hours for
 * firmware); a firmware inventory never read gets the visit's whole deadline; and a BMC whose firmware inventory is
 * slower than the deadline gets a longer deadline at each timeout, up to the visit's own, instead of timing out at
 * every try. A work read once waits its full interval again.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import { DriverError } from '../../src/drivers/index.js';
import { Poller, type Credential, type PollTarget, type PollWork, type Visitor, type VisitOptions, type VisitResult } from '../../src/poller/index.js';
import { useFreshStore } from '../support/fresh-store.js';
import { ManualClock } from '../support/manual-clock.js';

/** A BMC whose firmware inventory takes `firmwareMs`: a visit reading it times out when its deadline is shorter. */
class SlowFirmwareVisitor implements Visitor {
  readonly heavy: Array<{ at: number; works: readonly PollWork[]; firmwareTimeoutMs: number; ok: boolean }> = [];
  constructor(
    private readonly clock: ManualClock,
    private readonly firmwareMs: number,
  ) {}
  async visit(_target: PollTarget, _credential: Credential, works: readonly PollWork[], options: VisitOptions): Promise<VisitResult> {
    if (works.length === 1 && works[0] === 'liveness') return { ok: true, latencyMs: 1, observations: [] };
    const ok = !works.includes('firmware') || options.firmwareTimeoutMs >= this.firmwareMs;
    this.heavy.push({ at: this.clock.now(), works, firmwareTimeoutMs: options.firmwareTimeoutMs, ok });
    await this.clock.sleep(5);
    return ok ? { ok: true, latencyMs: 5, observations: [] } : { ok: false, latencyMs: options.firmwareTimeoutMs, observations: [], error: new DriverError('DRIVER_TIMEOUT', 'firmware inventory: deadline passed', {}) };
  }
}

describe('the first heavy read of a node', () => {
  const freshStore = useFreshStore();
  // The poller runs on a manual clock: its seconds pass in milliseconds, the same on a busy machine as on a quiet one.
  let clock = new ManualClock();
  beforeEach(() => {
    clock = new ManualClock(Date.now());
  });

  it('a first read that failed is tried again soon, after doubling waits, until read; then it waits its interval', async () => {
    let failures = 2;
    const visitor = new SlowFirmwareVisitor(clock, 0);
    const visit = visitor.visit.bind(visitor);
    visitor.visit = async (target, credential, works, options) => {
      if (works.length > 1 && failures > 0) {
        failures -= 1;
        visitor.heavy.push({ at: clock.now(), works, firmwareTimeoutMs: options.firmwareTimeoutMs, ok: false });
        return { ok: false, latencyMs: 5, observations: [], error: new DriverError('DRIVER_TIMEOUT', 'deadline passed', {}) };
      }
      return visit(target, credential, works, options);
    };
    const poller = new Poller({
      clock: clock.now,
      timers: clock,
      store: freshStore(),
      visitor,
      credentials: { get: () => ({ username: 'u', password: 'p', version: '1', endpoints: ['*'] }) },
      plainHttpSites: ['dc1'],
      policy: { jitter: 0, intervals: { health: 3600, inventory: 3600, firmware: 3600 }, firstReadSpreadS: 0, firstReadRetryS: 0.2 },
    });
    poller.addTarget({ nodeId: 'n1', site: 'dc1', rack: 'r1', baseUrl: 'http://n1', credentialRef: 'c', sessionLimit: 2, expectedIntervalS: 0.1 });
    const started = clock.now();
    poller.start();
    await clock.advance(2_000);
    await clock.settle(poller.stop());
    // Two failures, then read; nothing after (interval 1 h).
    expect(visitor.heavy.map((visit) => visit.ok)).toEqual([false, false, true]);
    // The waits: 0.2 s after the first failure, 0.4 s after the second (plus the liveness tick that picks it up).
    const [first, second, third] = visitor.heavy.map((visit) => visit.at - started);
    expect(second! - first!).toBeGreaterThanOrEqual(190);
    expect(second! - first!).toBeLessThan(600);
    expect(third! - second!).toBeGreaterThanOrEqual(390);
    expect(third! - second!).toBeLessThan(900);
  });

  it("a firmware inventory never read gets the visit's deadline; once read, a timeout doubles the BMC's firmware deadline up to the visit's", async () => {
    const visitor = new SlowFirmwareVisitor(clock, 350);
    const poller = new Poller({
      clock: clock.now,
      timers: clock,
      store: freshStore(),
      visitor,
      credentials: { get: () => ({ username: 'u', password: 'p', version: '1', endpoints: ['*'] }) },
      plainHttpSites: ['dc1'],
      policy: { jitter: 0, intervals: { health: 0.3, inventory: 0.3, firmware: 0.3 }, firstReadSpreadS: 0, firmwareTimeoutMs: 100, visitDeadlineMs: 1_000 },
    });
    poller.addTarget({ nodeId: 'gb1', site: 'dc1', rack: 'r1', baseUrl: 'http://gb1', credentialRef: 'c', sessionLimit: 2, expectedIntervalS: 0.1 });
    poller.start();
    await clock.advance(2_000);
    await clock.settle(poller.stop());
    // The first read with the visit's 1,000 ms reads the 350 ms inventory at once; the next ones start from the
    // default 100 ms, which times out, then 200 (timing out), then 400 ms, kept from then on.
    const deadlines = visitor.heavy.map((visit) => [visit.firmwareTimeoutMs, visit.ok]);
    expect(deadlines.slice(0, 4)).toEqual([
      [1_000, true],
      [100, false],
      [200, false],
      [400, true],
    ]);
    expect(deadlines.length).toBeGreaterThan(4);
    expect(deadlines.slice(4).every(([deadline, ok]) => deadline === 400 && ok === true)).toBe(true);
  });

  it('a work read once waits its full interval after a failure, as after a success', async () => {
    let failing = false;
    const visitor = new SlowFirmwareVisitor(clock, 0);
    const visit = visitor.visit.bind(visitor);
    visitor.visit = async (target, credential, works, options) => (failing && works.length > 1 ? { ok: false, latencyMs: 5, observations: [], error: new DriverError('DRIVER_TIMEOUT', 'deadline passed', {}) } : visit(target, credential, works, options));
    const poller = new Poller({
      clock: clock.now,
      timers: clock,
      store: freshStore(),
      visitor,
      credentials: { get: () => ({ username: 'u', password: 'p', version: '1', endpoints: ['*'] }) },
      plainHttpSites: ['dc1'],
      policy: { jitter: 0, intervals: { health: 0.5, inventory: 0.5, firmware: 0.5 }, firstReadSpreadS: 0, firstReadRetryS: 0.05 },
    });
    poller.addTarget({ nodeId: 'n1', site: 'dc1', rack: 'r1', baseUrl: 'http://n1', credentialRef: 'c', sessionLimit: 2, expectedIntervalS: 0.05 });
    poller.start();
    await clock.advance(300);
    failing = true;
    const heavyBefore = visitor.heavy.length;
    await clock.advance(1_300);
    await clock.settle(poller.stop());
    expect(heavyBefore).toBe(1);
    // Read once, then failing: tries every 0.5 s (two or three in 1.3 s), never every 0.05 s.
    const failedTries = poller.stats().outcomes.timeout;
    expect(failedTries).toBeGreaterThanOrEqual(2 * 3);
    expect(failedTries).toBeLessThanOrEqual(4 * 3);
  });
});
