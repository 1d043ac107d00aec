/**
 * Push through the poller thread `fleet-ledger start --push` runs: a node registered in the log gets its stream, its
 * pushed events are recorded, and the thread's report carries the push figures the metrics read.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EventStore } from '../../src/ledger/index.js';
import { ThreadedPoller } from '../../src/poller/index.js';
import { parseScenario, startSimulator, type Simulator } from '../../src/sim/index.js';
import { backends, freshDatabase } from '../support/backends.js';
import { testPushPolicy } from './support/push-fleet.js';
import { until } from './support/until.js';

describe('push in the poller thread', { timeout: 60_000 }, () => {
  let sim: Simulator;
  let store: EventStore;
  let drop: () => Promise<void>;
  let url: string;
  beforeAll(async () => {
    sim = await startSimulator({ scenario: parseScenario({ name: 'push-thread', fleet: { bmcs: 1, mix: [{ fixture: 'nvidia_gb200' }] }, behaviour: { latencyScale: 0 } }), behaviour: { eventHeartbeatMs: 100 } });
    const db = await freshDatabase(backends()[0]!.adminUrl!);
    ({ url, drop } = db);
    store = await EventStore.open({ connectionString: url });
  });
  afterAll(async () => {
    await sim?.close();
    await store?.close();
    await drop?.();
  });

  it('a registered node gets its stream, its events are recorded as pushed, and the thread reports them', async () => {
    const bmc = sim.bmcs[0]!;
    await store.append(`node-${bmc.id}`, [{ type: 'NodeRegistered', data: { nodeId: bmc.id, site: bmc.site, rack: bmc.rack, bmc: { protocol: 'redfish', address: bmc.baseUrl, credentialRef: bmc.id, sessionLimit: bmc.sessionLimit }, expectedIntervalS: 1 }, actor: { kind: 'operator', id: 'push-test' } }]);
    const poller = new ThreadedPoller({
      connectionString: url,
      credentials: { get: () => ({ username: bmc.username, password: bmc.password, version: '1', endpoints: [new URL(bmc.baseUrl).origin] }) },
      credentialRefs: () => [bmc.id],
      policy: { jitter: 0, flushIntervalMs: 100, intervals: { health: 3600, inventory: 3600, firmware: 3600 } },
      plainHttpSites: ['*'],
      push: { ...testPushPolicy, auditIntervalS: 30 },
    });
    await poller.ready();
    const follow = new AbortController();
    const following = poller.followIntents(follow.signal).catch(() => undefined);
    poller.start();
    try {
      const recorded = async (type: string): Promise<number> => (await store.readStream(`node-${bmc.id}`)).filter((event) => event.type === type).length;
      await until(async () => (await recorded('PushStreamOpened')) === 1, 20_000, 'a stream opened');
      sim.injectFault({ kind: 'health', target: { bmc: bmc.id }, health: 'Critical' });
      await until(async () => (await recorded('RedfishEventObserved')) === 1, 10_000, 'the event recorded');
      await until(() => poller.stats().push?.eventsRecorded === 1 && poller.stats().push?.streamsOpen === 1, 5_000, 'the thread reports push');
    } finally {
      follow.abort();
      await poller.stop();
      await following;
    }
  });
});
