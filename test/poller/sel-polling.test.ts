/**
 * The poller's health lane reads the system event log of every BMC that exposes one: its entries are recorded as
 * `SelEntriesObserved` when first seen, and a later read that finds the same entries appends nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EventStore } from '../../src/ledger/index.js';
import { Poller } from '../../src/poller/index.js';
import { parseScenario, startSimulator, type Simulator } from '../../src/sim/index.js';
import { backends, freshDatabase } from '../support/backends.js';
import { until } from './support/until.js';

describe('system event logs through the poller', () => {
  let sim: Simulator;
  let store: EventStore;
  let drop: () => Promise<void>;
  beforeAll(async () => {
    sim = await startSimulator({ scenario: parseScenario({ name: 'sel', fleet: { bmcs: 1, mix: [{ fixture: 'dell' }] }, behaviour: { latencyScale: 0.01 } }), clockFactor: 1 });
    const db = await freshDatabase(backends()[0]!.adminUrl!);
    drop = db.drop;
    store = await EventStore.open({ connectionString: db.url });
  });
  afterAll(async () => {
    await sim?.close();
    await store?.close();
    await drop?.();
  });

  it('a BMC\'s SEL entries are recorded once by the health lane, however often it reads them', async () => {
    const bmc = sim.bmcs[0]!;
    let healthReads = 0;
    const poller = new Poller({
      store,
      credentials: { get: () => ({ username: bmc.username, password: bmc.password, version: '1', endpoints: [new URL(bmc.baseUrl).origin] }) },
      plainHttpSites: ['*'],
      policy: { jitter: 0, intervals: { health: 0.3, inventory: 3600, firmware: 3600 } },
      onOutcome: (_nodeId, work, outcome) => {
        if (work === 'health' && outcome === 'success') healthReads += 1;
      },
    });
    poller.addTarget({ nodeId: bmc.id, site: bmc.site, rack: bmc.rack, baseUrl: bmc.baseUrl, credentialRef: 'c', expectedIntervalS: 0.3 });
    poller.start();
    await until(() => healthReads >= 4, 20_000, 'four health reads');
    await poller.stop();
    const events = await store.readStream(`node-${bmc.id}`);
    const sel = events.filter((event) => event.type === 'SelEntriesObserved');
    expect(sel).toHaveLength(1);
    expect((sel[0]!.data as { entries: unknown[] }).entries.length).toBeGreaterThan(0);
  });
});
