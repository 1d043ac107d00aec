/**
 * PDUs registered with SNMP endpoints are polled like any BMC: registered with `bmc.protocol: 'snmp'` (address
 * `host[:port]`, polled as `snmp://host:port`), the community taken from the credential bound to that address,
 * checked for liveness with one GET, walked through the SNMP driver for health and inventory (`NetworkDeviceObserved`,
 * recorded as the driver produced it), and a silent one recorded as missed. Real peers: Net-SNMP `snmpd` on loopback.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { NetworkDeviceObservedData, PollOutcomeKind } from '../../events/index.js';
import { EventStore } from '../../src/ledger/index.js';
import { Poller, SnmpVisitor, type PollWork } from '../../src/poller/index.js';
import { backends, freshDatabase } from '../support/backends.js';
import { systemTools } from '../support/system-tool.js';
import { startSnmpd, type Snmpd } from '../drivers/support/snmpd.js';
import { until } from './support/until.js';

const snmpTools = systemTools(['snmpd'], 'apt-get install snmpd');

describe.skipIf(!snmpTools.runnable)(snmpTools.title('the poller over SNMP against real snmpd agents'), () => {
  let store: EventStore;
  let drop: () => Promise<void>;
  const agents: Snmpd[] = [];

  beforeAll(async () => {
    snmpTools.require();
    const db = await freshDatabase(backends()[0]!.adminUrl!);
    drop = db.drop;
    store = await EventStore.open({ connectionString: db.url, pollIntervalMs: 100 });
    for (const name of ['pdu-a', 'pdu-b']) {
      agents.push(
        await startSnmpd({
          sysName: name,
          sysLocation: 'dc1 rack r1',
          sysContact: 'fleet-ops@example.com',
          sysDescr: 'APC Web/SNMP Management Card (MB:v4.1.0 PF:v6.8.2)',
          sysObjectId: '.1.3.6.1.4.1.318.1.3.4.5',
          outlets: [
            { index: 1, name: `${name} outlet 1`, state: 1 },
            { index: 2, name: `${name} outlet 2`, state: 2 },
          ],
        }),
      );
    }
  });
  afterAll(async () => {
    for (const agent of agents) await agent.stop().catch(() => undefined);
    await store?.close();
    await drop?.();
  });

  it('the visitor: liveness is one GET that answers; a walk yields the driver\'s observation; a silent agent is a timeout', async () => {
    const agent = agents[0]!;
    const visitor = new SnmpVisitor();
    const target = { nodeId: 'pdu-v', site: 'dc1', rack: 'r1', protocol: 'snmp' as const, baseUrl: `snmp://127.0.0.1:${agent.port}`, credentialRef: 'c', expectedIntervalS: 1 };
    const credential = { username: '', password: agent.community, version: '1', endpoints: ['127.0.0.1'] };
    const options = { requestTimeoutMs: 2_000, firmwareTimeoutMs: 2_000, visitDeadlineMs: 10_000, sessionLimit: 1 };
    expect(await visitor.visit(target, credential, ['liveness'], options)).toMatchObject({ ok: true, observations: [] });
    const read = await visitor.visit(target, credential, ['health', 'inventory'], options);
    expect(read.ok).toBe(true);
    expect(read.observations.map((o) => o.type)).toEqual(['NetworkDeviceObserved']);
    expect(read.observations[0]!.data).toMatchObject({ source: 'snmp', dialect: 'apc-rpdu', sysName: 'pdu-a', outlets: [{ index: 1, state: 'on' }, { index: 2, state: 'off' }] });
    // A wrong community is not answered at all (SNMP v2c): a timeout within the request deadline, not a hang.
    const started = Date.now();
    const wrong = await visitor.visit(target, { ...credential, password: 'not-the-community' }, ['liveness'], { ...options, requestTimeoutMs: 400 });
    expect(wrong.ok).toBe(false);
    expect(wrong.error).toMatchObject({ code: 'DRIVER_TIMEOUT' });
    expect(Date.now() - started).toBeLessThan(2_000);
  });

  it('a PDU registered through the log is checked and walked; one gone silent is recorded as missed, the other goes on', async () => {
    const outcomes = new Map<string, Array<[PollWork, PollOutcomeKind]>>();
    const poller = new Poller({
      store,
      credentials: { get: () => ({ username: '', password: agents[0]!.community, version: '1', endpoints: ['127.0.0.1'] }) },
      policy: { jitter: 0, requestTimeoutMs: 1_000, intervals: { health: 1, inventory: 1, firmware: 3600 }, flushIntervalMs: 200 },
      onOutcome: (nodeId, work, outcome) => outcomes.set(nodeId, [...(outcomes.get(nodeId) ?? []), [work, outcome]]),
    });
    const controller = new AbortController();
    const following = poller.followIntents(controller.signal);
    for (const [index, agent] of agents.entries()) {
      await store.append(`node-pdu-${index}`, [
        {
          type: 'NodeRegistered',
          data: { nodeId: `pdu-${index}`, site: 'dc1', rack: 'r1', bmc: { protocol: 'snmp', address: `127.0.0.1:${agent.port}`, credentialRef: 'pdu-community' }, expectedIntervalS: 1 },
          actor: { kind: 'operator', id: 'test' },
        },
      ]);
    }
    await until(() => poller.stats().targets === 2, 5_000, 'both PDUs become poll targets');
    poller.start();
    const livenessOf = (nodeId: string): PollOutcomeKind[] => (outcomes.get(nodeId) ?? []).filter(([work]) => work === 'liveness').map(([, outcome]) => outcome);
    const walked = async (nodeId: string): Promise<boolean> => (await store.readStream(`node-${nodeId}`)).some((event) => event.type === 'NetworkDeviceObserved');
    const walksOf = (nodeId: string): number => (outcomes.get(nodeId) ?? []).filter(([work, outcome]) => work === 'health' && outcome === 'success').length;
    await until(async () => livenessOf('pdu-0').includes('success') && livenessOf('pdu-1').includes('success') && (await walked('pdu-0')) && (await walked('pdu-1')), 15_000, 'both PDUs checked and walked');
    await until(() => walksOf('pdu-1') >= 3, 15_000, 'pdu-1 walked three times');

    // What the SNMP driver read went into the PDU's stream as it produced it, by the SNMP driver.
    const stream = await store.readStream('node-pdu-1');
    const observed = stream.find((event) => event.type === 'NetworkDeviceObserved')!;
    expect(observed.actor).toEqual({ kind: 'driver', id: 'snmp:pdu-1' });
    const data = observed.data as NetworkDeviceObservedData;
    expect(data).toMatchObject({ source: 'snmp', dialect: 'apc-rpdu', sysName: 'pdu-b', outlets: [{ index: 1, name: 'pdu-b outlet 1', state: 'on' }, { index: 2, name: 'pdu-b outlet 2', state: 'off' }] });
    // Three walks of an unchanged PDU (its uptime advancing) are one observation: unchanged readings are not appended again.
    expect(stream.filter((event) => event.type === 'NetworkDeviceObserved')).toHaveLength(1);

    // pdu-1 goes silent: its checks are misses from then on, while pdu-0 goes on answering.
    await agents[1]!.stop();
    const before = livenessOf('pdu-1').length;
    const before0 = livenessOf('pdu-0').length;
    await until(() => livenessOf('pdu-1').length >= before + 3 && livenessOf('pdu-0').length >= before0 + 3, 20_000, 'three more checks of each PDU');
    // The first check after the stop may have been in flight before it.
    const after = livenessOf('pdu-1').slice(before + 1);
    expect(after.every((outcome) => outcome === 'timeout'), after.join(',')).toBe(true);
    expect(livenessOf('pdu-0').slice(before0)).toContain('success');
    controller.abort();
    await poller.stop();
    await following.catch(() => undefined);
  }, 60_000);
});
