/**
 * A BMC that announces `$expand` but cannot build an expanded answer within the deadline would time out at every read
 * the same way, and never be inventoried. After the first timeout of an expanded request, the poller reads that BMC
 * member by member (`expand: false`). Any other timeout (a slow firmware inventory, a dark BMC) changes nothing.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import { DriverError } from '../../src/drivers/index.js';
import { Poller, type Visitor, type VisitOptions, type VisitResult } from '../../src/poller/index.js';
import { useFreshStore } from '../support/fresh-store.js';
import { ManualClock } from '../support/manual-clock.js';

describe('reading without $expand after an expanded request timed out', () => {
  const freshStore = useFreshStore();
  // The poller runs on a manual clock: its seconds pass in milliseconds, the same on a busy machine as on a quiet one.
  let clock = new ManualClock();
  beforeEach(() => {
    clock = new ManualClock(Date.now());
  });

  /** The options of every heavy read, the first of which times out on `firstFailureUrl`. */
  const readsAfterTimeoutOf = async (firstFailureUrl: string): Promise<{ expand: Array<boolean | undefined>; logged: string[] }> => {
    const expand: Array<boolean | undefined> = [];
    const logged: string[] = [];
    const visitor: Visitor = {
      visit: (_target, _credential, works, options: VisitOptions): Promise<VisitResult> => {
        if (works.length === 1 && works[0] === 'liveness') return Promise.resolve({ ok: true, latencyMs: 1, observations: [] });
        expand.push(options.expand);
        if (expand.length === 1) {
          const error = new DriverError('DRIVER_TIMEOUT', `GET ${firstFailureUrl} passed its deadline`, { method: 'GET', url: firstFailureUrl });
          return Promise.resolve({ ok: false, latencyMs: 100, observations: [], error });
        }
        return Promise.resolve({ ok: true, latencyMs: 1, observations: [] });
      },
    };
    const poller = new Poller({
      clock: clock.now,
      timers: clock,
      store: freshStore(),
      visitor,
      credentials: { get: () => ({ username: 'u', password: 'p', version: '1', endpoints: ['*'] }) },
      plainHttpSites: ['dc1'],
      policy: { requestTimeoutMs: 100, maxRetries: 0, jitter: 0, firstReadSpreadS: 0, firstReadRetryS: 0.2, intervals: { health: 0.4, inventory: 0.4, firmware: 0.4 } },
      log: (message) => logged.push(message),
    });
    poller.addTarget({ nodeId: 'n1', site: 'dc1', rack: 'r1', baseUrl: 'http://n1', credentialRef: 'c', sessionLimit: 2, expectedIntervalS: 0.3 });
    poller.start();
    await clock.advance(1_500);
    await clock.settle(poller.stop(0));
    return { expand, logged };
  };

  it('a timeout of an expanded collection request makes every later read of that BMC plain, and says so once', async () => {
    const { expand, logged } = await readsAfterTimeoutOf('http://n1/redfish/v1/UpdateService/FirmwareInventory?$expand=.($levels=1)');
    expect(expand[0]).toBeUndefined(); // the first read: expanded where the BMC announces it
    expect(expand.length).toBeGreaterThanOrEqual(3);
    expect(expand.slice(1).every((value) => value === false)).toBe(true);
    expect(logged.filter((line) => line.includes('read member by member'))).toHaveLength(1);
  });

  it('a timeout of a plain request leaves expansion on', async () => {
    const { expand, logged } = await readsAfterTimeoutOf('http://n1/redfish/v1/UpdateService/FirmwareInventory');
    expect(expand.length).toBeGreaterThanOrEqual(3);
    expect(expand.every((value) => value === undefined)).toBe(true);
    expect(logged.filter((line) => line.includes('read member by member'))).toEqual([]);
  });
});
