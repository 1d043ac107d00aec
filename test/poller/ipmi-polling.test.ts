/**
 * BMCs without Redfish are polled over IPMI (RMCP+, `ipmitool -I lanplus`) like any other: registered with
 * `bmc.protocol: 'ipmi'`, their credential bound to their address, checked for liveness, read for identity,
 * health and sensors, and a silent one recorded as a miss. Real peers: Debian's `ipmi_sim` (OpenIPMI) on loopback.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EventStore } from '../../src/ledger/index.js';
import { Poller } from '../../src/poller/index.js';
import type { PollOutcomeKind } from '../../events/index.js';
import { backends, freshDatabase } from '../support/backends.js';
import { systemTools } from '../support/system-tool.js';
import { startIpmiSim, type IpmiSim } from '../drivers/support/ipmi-sim.js';
import { until } from './support/until.js';

const ipmiTools = systemTools(['ipmi_sim', 'ipmitool'], 'apt-get install openipmi ipmitool');

describe.skipIf(!ipmiTools.runnable)(ipmiTools.title('the poller over IPMI against real ipmi_sim peers'), () => {
  let store: EventStore;
  let drop: () => Promise<void>;
  const sims: IpmiSim[] = [];

  beforeAll(async () => {
    ipmiTools.require();
    const db = await freshDatabase(backends()[0]!.adminUrl!);
    drop = db.drop;
    store = await EventStore.open({ connectionString: db.url, pollIntervalMs: 100 });
    for (const serial of ['IPMI-A', 'IPMI-B']) {
      sims.push(
        await startIpmiSim({
          sensors: [
            { number: 1, name: 'Inlet Temp', type: 0x01, unit: 1, m: 1, raw: 24 },
            { number: 2, name: 'FAN1', type: 0x04, unit: 18, m: 50, raw: 96 },
          ],
          fru: { manufacturer: 'FleetCorp', product: 'FL-1000', partNumber: 'P-42', serial },
        }),
      );
    }
  });
  afterAll(async () => {
    for (const sim of sims) await sim.stop().catch(() => undefined);
    await store?.close();
    await drop?.();
  });

  it('an IPMI-only BMC registered through the log is checked and read; one gone silent is recorded as missed', async () => {
    const outcomes = new Map<string, PollOutcomeKind[]>();
    const poller = new Poller({
      store,
      credentials: { get: () => ({ username: sims[0]!.username, password: sims[0]!.password, version: '1', endpoints: ['127.0.0.1'] }) },
      policy: { jitter: 0, requestTimeoutMs: 3_000, intervals: { health: 1, inventory: 1, firmware: 3600 }, flushIntervalMs: 200 },
      onOutcome: (nodeId, _work, outcome) => outcomes.set(nodeId, [...(outcomes.get(nodeId) ?? []), outcome]),
    });
    const controller = new AbortController();
    const following = poller.followIntents(controller.signal);
    for (const [index, sim] of sims.entries()) {
      await store.append(`node-ipmi-${index}`, [
        {
          type: 'NodeRegistered',
          data: { nodeId: `ipmi-${index}`, site: 'dc1', rack: 'r1', bmc: { protocol: 'ipmi', address: `127.0.0.1:${sim.port}`, credentialRef: 'ipmi-sim' }, expectedIntervalS: 1 },
          actor: { kind: 'operator', id: 'test' },
        },
      ]);
    }
    await until(() => poller.stats().targets === 2, 5_000, 'both registered');
    expect(poller.stats().targets).toBe(2);
    poller.start();
    // Waits for conditions, not for fixed times: each ends as soon as the real BMCs and the ledger have done it.
    await until(() => ['ipmi-0', 'ipmi-1'].every((nodeId) => (outcomes.get(nodeId) ?? []).includes('success')), 20_000, 'both IPMI BMCs contacted');
    const readInto = async (): Promise<boolean> => {
      const events = await store.readStream('node-ipmi-1');
      return events.some((event) => event.type === 'NodeInventoryObserved') && events.some((event) => event.type === 'SensorsObserved');
    };
    await until(readInto, 20_000, 'ipmi-1 read and its observations recorded');

    // What the IPMI driver read went into each node's stream: identity from FRU, sensors from the SDR.
    const stream = await store.readStream('node-ipmi-1');
    const inventory = stream.find((event) => event.type === 'NodeInventoryObserved');
    expect(inventory?.data).toMatchObject({ source: 'ipmi', system: { manufacturer: 'FleetCorp', serialNumber: 'IPMI-B' } });
    expect(stream.some((event) => event.type === 'SensorsObserved')).toBe(true);

    // ipmi-1 goes silent: its checks are misses from then on, while ipmi-0 goes on answering.
    await sims[1]!.stop();
    const before = (outcomes.get('ipmi-1') ?? []).length;
    const answeredBefore = (outcomes.get('ipmi-0') ?? []).length;
    await until(() => (outcomes.get('ipmi-1') ?? []).length >= before + 2 && (outcomes.get('ipmi-0') ?? []).slice(answeredBefore).includes('success'), 20_000, 'two checks of the silent BMC');
    const after = (outcomes.get('ipmi-1') ?? []).slice(before);
    expect(after.length).toBeGreaterThan(0);
    expect(after.every((outcome) => outcome !== 'success'), after.join(',')).toBe(true);
    expect((outcomes.get('ipmi-0') ?? []).slice(-3)).toContain('success');
    controller.abort();
    await poller.stop();
    await following.catch(() => undefined);
  }, 60_000);
});
