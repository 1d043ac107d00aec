import { afterAll, beforeAll } from 'vitest';
import { EventStore } from '../../../src/ledger/index.js';
import { Poller, type PollerOptions } from '../../../src/poller/index.js';
import { parseScenario, startSimulator, type Simulator } from '../../../src/sim/index.js';
import { backends, freshDatabase } from '../../support/backends.js';

/**
 * One simulated Dell BMC answering at once, and a store on a fresh database, for the enclosing `describe`: started
 * before its tests, closed and dropped after them. Read `sim` and `store` inside the tests.
 */
export function withOneSimulatedBmc(name: string): { readonly sim: Simulator; readonly store: EventStore } {
  const held = {} as { sim: Simulator; store: EventStore; drop: () => Promise<void> };
  beforeAll(async () => {
    held.sim = await startSimulator({ scenario: parseScenario({ name, fleet: { bmcs: 1, mix: [{ fixture: 'dell' }] }, behaviour: { latencyScale: 0.01 } }), clockFactor: 1 });
    const db = await freshDatabase(backends()[0]!.adminUrl!);
    held.drop = db.drop;
    held.store = await EventStore.open({ connectionString: db.url });
  });
  afterAll(async () => {
    await held.sim?.close();
    await held.store?.close();
    await held.drop?.();
  });
  return {
    get sim() {
      return held.sim;
    },
    get store() {
      return held.store;
    },
  };
}

/**
 * A poller of the fixture's one BMC, started: plain http, no jitter, its heavy lanes every `intervals` seconds and its
 * liveness check every `expectedIntervalS`. Stop it in the test.
 */
export function pollOneBmc(
  fixture: { readonly sim: Simulator; readonly store: EventStore },
  options: { intervals: { health: number; inventory: number; firmware: number }; expectedIntervalS: number; onOutcome?: PollerOptions['onOutcome'] },
): Poller {
  const bmc = fixture.sim.bmcs[0]!;
  const poller = new Poller({
    store: fixture.store,
    credentials: { get: () => ({ username: bmc.username, password: bmc.password, version: '1', endpoints: [new URL(bmc.baseUrl).origin] }) },
    plainHttpSites: ['*'],
    policy: { jitter: 0, intervals: options.intervals },
    ...(options.onOutcome ? { onOutcome: options.onOutcome } : {}),
  });
  poller.addTarget({ nodeId: bmc.id, site: bmc.site, rack: bmc.rack, baseUrl: bmc.baseUrl, credentialRef: 'c', expectedIntervalS: options.expectedIntervalS });
  poller.start();
  return poller;
}
