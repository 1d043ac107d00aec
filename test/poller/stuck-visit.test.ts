/**
 * A visit that never settles (stuck where none of its deadlines reaches: a defect in a driver or a library) must not
 * take its BMC out of polling. Left waiting, the poller would keep the target's check (or read) in flight for good: the
 * node would be polled no more, with no miss recorded to show it, and a node never contacted would stay so. Past its
 * bound (`visitBoundMs`: every deadline the visit was given, plus a margin) the visit is recorded as a timeout, its slot
 * is given back, and the BMC is polled again on schedule.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import type { PollOutcomeKind } from '../../events/index.js';
import { Poller, visitBoundMs, defaultPollPolicy, type PollWork, type Visitor, type VisitResult } from '../../src/poller/index.js';
import { useFreshStore } from '../support/fresh-store.js';
import { ManualClock } from '../support/manual-clock.js';

const never = new Promise<VisitResult>(() => undefined);

describe('a visit that never settles', () => {
  const freshStore = useFreshStore();
  // The poller runs on a manual clock: its seconds pass in milliseconds, the same on a busy machine as on a quiet one.
  let clock = new ManualClock();
  beforeEach(() => {
    clock = new ManualClock(Date.now());
  });

  const run = async (visitor: Visitor, policy: ConstructorParameters<typeof Poller>[0]['policy'], sessionLimit: number, ms: number) => {
    const outcomes: Array<{ work: PollWork; outcome: PollOutcomeKind; at: number }> = [];
    const poller = new Poller({
      clock: clock.now,
      timers: clock,
      store: freshStore(),
      visitor,
      credentials: { get: () => ({ username: 'u', password: 'p', version: '1', endpoints: ['*'] }) },
      plainHttpSites: ['dc1'],
      policy,
      onOutcome: (_nodeId, work, outcome, _latency, at) => outcomes.push({ work, outcome, at }),
    });
    poller.addTarget({ nodeId: 'n1', site: 'dc1', rack: 'r1', baseUrl: 'http://n1', credentialRef: 'c', sessionLimit, expectedIntervalS: 0.3 });
    const started = clock.now();
    poller.start();
    await clock.advance(ms);
    const stats = poller.stats();
    await clock.settle(poller.stop(0));
    return { outcomes: outcomes.map((o) => ({ ...o, at: o.at - started })), stats };
  };

  it("a liveness check stuck past its bound is recorded as a timeout, and the node is checked again and contacted", async () => {
    const policy = { requestTimeoutMs: 100, maxRetries: 0, jitter: 0 };
    const bound = visitBoundMs({ ...defaultPollPolicy, ...policy }, ['liveness']);
    expect(bound).toBe(700); // 2 x 100 ms for the one attempt, a margin of 5 x 100 ms
    let checks = 0;
    const visitor: Visitor = {
      visit: (_target, _credential, works) => {
        if (works.length > 1 || works[0] !== 'liveness') return Promise.resolve({ ok: true, latencyMs: 1, observations: [] });
        checks += 1;
        return checks === 1 ? never : Promise.resolve({ ok: true, latencyMs: 1, observations: [] });
      },
    };
    const { outcomes, stats } = await run(visitor, { ...policy, intervals: { health: 3600, inventory: 3600, firmware: 3600 } }, 2, 2_000);
    const liveness = outcomes.filter((o) => o.work === 'liveness');
    expect(liveness[0]!.outcome).toBe('timeout');
    expect(liveness[0]!.at).toBeGreaterThanOrEqual(bound - 20);
    expect(liveness[0]!.at).toBeLessThan(bound + 300);
    // Checked again at its interval (0.3 s) and answered: contacted, not silent.
    expect(liveness.slice(1).length).toBeGreaterThanOrEqual(2);
    expect(liveness.slice(1).every((o) => o.outcome === 'success')).toBe(true);
    expect(stats.visitsAbandoned).toBe(1);
  });

  it('a heavy read stuck past its bound is recorded as a timeout for its works: the read is tried again and the liveness checks it held back resume', async () => {
    const policy = { requestTimeoutMs: 100, visitDeadlineMs: 300, maxRetries: 0, jitter: 0, firstReadSpreadS: 0, firstReadRetryS: 0.2, intervals: { health: 3600, inventory: 3600, firmware: 3600 } };
    const bound = visitBoundMs({ ...defaultPollPolicy, ...policy }, ['health', 'inventory', 'firmware']);
    expect(bound).toBe(300 + 2_000 + 500);
    let reads = 0;
    const visitor: Visitor = {
      visit: (_target, _credential, works) => {
        if (works.length === 1 && works[0] === 'liveness') return Promise.resolve({ ok: true, latencyMs: 1, observations: [] });
        reads += 1;
        return reads === 1 ? never : Promise.resolve({ ok: true, latencyMs: 1, observations: [] });
      },
    };
    // One session on this BMC: while the read is in flight its liveness check waits for it.
    const { outcomes, stats } = await run(visitor, policy, 1, bound + 1_500);
    const heavy = outcomes.filter((o) => o.work !== 'liveness');
    const stuck = heavy.filter((o) => o.outcome === 'timeout');
    expect(stuck.map((o) => o.work).sort()).toEqual(['firmware', 'health', 'inventory']);
    const abandonedAt = stuck[0]!.at;
    // Read again once the first-read retry wait (0.2 s) has passed: every work read.
    expect(heavy.filter((o) => o.outcome === 'success' && o.at > abandonedAt).map((o) => o.work).sort()).toEqual(['firmware', 'health', 'inventory']);
    // No check ran while the stuck read held the one session; they resume after it.
    const checks = outcomes.filter((o) => o.work === 'liveness');
    expect(checks.filter((o) => o.at > 100 && o.at < abandonedAt - 50)).toEqual([]);
    expect(checks.filter((o) => o.at > abandonedAt && o.outcome === 'success').length).toBeGreaterThanOrEqual(2);
    expect(stats.visitsAbandoned).toBe(1);
  });
});
