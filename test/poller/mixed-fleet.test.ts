/**
 * A mixed fleet of 200, registered through the log as operators do and polled by one poller, each node through the
 * driver of its protocol: 175 Redfish BMCs of the simulator (every vendor profile), 20 IPMI-only BMCs (real
 * `ipmi_sim` peers, RMCP+) and 5 PDUs (real `snmpd` agents, SNMP v2c). Read through the liveness projection: every
 * node is healthy within two intervals of the poller's start; an IPMI node whose `ipmi_sim` is killed is found late,
 * then dark, by the same rule and within the same bound as a Redfish BMC gone dark at the same time, and nobody else is.
 *
 * Cost, measured on the 2-core machine: 20 `ipmi_sim` take 74 MB together and start in 0.3 s, one `ipmitool mc info`
 * takes 35 ms. At a load average of 8 (other test runs beside it): every node's first contact within 5.2 s of the
 * start (bound 10 s), the two dark nodes found 15 to 17 s after they went silent (bound 24 s), about 32 s in all.
 * At a 3 s interval the same load pushed first contacts past two intervals (6.3 s), hence 5 s; and the simulator
 * runs in a process of its own, as BMCs are not the poller's to serve.
 */
import type { ChildProcess } from 'node:child_process';
import type { Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PollOutcomeKind } from '../../events/index.js';
import { gapsInPeriod, LivenessProjection, nodeLiveness } from '../../projections/index.js';
import { EventStore, ProjectionRunner } from '../../src/ledger/index.js';
import { Poller, type Credential, type PollWork } from '../../src/poller/index.js';
import { simJson, startSimProcess, type SimBmc } from '../../bench/support/sim-process.js';
import { backends, freshDatabase } from '../support/backends.js';
import { systemTools } from '../support/system-tool.js';
import { startIpmiSim, type IpmiSim } from '../drivers/support/ipmi-sim.js';
import { startSnmpd, type Snmpd } from '../drivers/support/snmpd.js';
import { until } from './support/until.js';

const tools = systemTools(['ipmi_sim', 'ipmitool', 'snmpd'], 'apt-get install openipmi ipmitool snmpd');

const REDFISH = 175;
const IPMI = 20;
const SNMP = 5;
/** The liveness interval of every node, in seconds: short, so the test is quick, and ample for one light request. */
const INTERVAL_S = 5;
const REQUEST_TIMEOUT_MS = 4_000;
/** The projection's rule for this test: three consecutive misses make a node dark (ten by default). */
const DARK_AFTER_MISSES = 3;

describe.skipIf(!tools.runnable)(tools.title('a 200-node mixed fleet: Redfish, IPMI-only and SNMP PDUs under one poller'), () => {
  let sim: { child: ChildProcess; controlUrl: string };
  let fleet: SimBmc[];
  let store: EventStore;
  let runner: ProjectionRunner;
  let drop: () => Promise<void>;
  const ipmiSims: IpmiSim[] = [];
  const pdus: Snmpd[] = [];

  beforeAll(async () => {
    tools.require();
    const db = await freshDatabase(backends()[0]!.adminUrl!);
    drop = db.drop;
    store = await EventStore.open({ connectionString: db.url, pollIntervalMs: 100 });
    // The simulator in a process of its own, as in production the BMCs are not the poller's: on a loaded machine,
    // serving 175 BMCs from the poller's own event loop delayed its first contacts by seconds.
    sim = await startSimProcess(['--bmcs', String(REDFISH), '--seed', '13', '--latency-scale', '0']);
    fleet = (await simJson<{ bmcs: SimBmc[] }>(`${sim.controlUrl}/sim/fleet`)).bmcs;
    // One after another: each takes a free port as it starts, so two never pick the same one.
    for (let index = 0; index < IPMI; index += 1) {
      ipmiSims.push(
        await startIpmiSim({
          sensors: [{ number: 1, name: 'Inlet Temp', type: 0x01, unit: 1, m: 1, raw: 22 + (index % 5) }],
          fru: { manufacturer: 'FleetCorp', product: 'FL-1000', partNumber: 'P-42', serial: `IPMI-${index}` },
        }),
      );
    }
    for (let index = 0; index < SNMP; index += 1) {
      pdus.push(
        await startSnmpd({
          sysName: `pdu-${index}`,
          sysLocation: `dc1 rack r${index}`,
          sysContact: 'fleet-ops@example.com',
          sysDescr: 'APC Web/SNMP Management Card (MB:v4.1.0 PF:v6.8.2)',
          sysObjectId: '.1.3.6.1.4.1.318.1.3.4.5',
          outlets: [{ index: 1, name: `r${index}-n01 PSU1`, state: 1 }],
        }),
      );
    }
    runner = new ProjectionRunner(store, [new LivenessProjection({ darkAfterMisses: DARK_AFTER_MISSES })], { batchSize: 500 });
    await runner.start();
  }, 60_000);
  afterAll(async () => {
    await runner?.stop();
    for (const peer of [...ipmiSims, ...pdus]) await peer.stop().catch(() => undefined);
    if (sim && sim.child.exitCode === null && sim.child.signalCode === null) {
      const exited = new Promise((resolve) => sim.child.once('exit', resolve));
      sim.child.kill('SIGTERM');
      await exited;
    }
    await store?.close();
    await drop?.();
  });

  it('all 200 are healthy within two intervals; a killed ipmi_sim is found dark like a Redfish BMC gone dark, and only they', async () => {
    expect(fleet).toHaveLength(REDFISH);
    const operator = { kind: 'operator' as const, id: 'test' };
    const nodes: Array<{ nodeId: string; protocol: 'redfish' | 'ipmi' | 'snmp' }> = [];
    const register = async (nodeId: string, site: string, rack: string, bmc: { protocol: 'redfish' | 'ipmi' | 'snmp'; address: string; credentialRef: string }): Promise<void> => {
      nodes.push({ nodeId, protocol: bmc.protocol });
      await store.append(`node-${nodeId}`, [{ type: 'NodeRegistered', data: { nodeId, site, rack, bmc, expectedIntervalS: INTERVAL_S }, actor: operator }]);
    };
    for (const bmc of fleet) await register(bmc.id, bmc.site, bmc.rack, { protocol: 'redfish', address: bmc.baseUrl, credentialRef: `sim/${bmc.id}` });
    for (const [index, peer] of ipmiSims.entries()) await register(`ipmi-${index}`, 'dc1', `ipmi-r${index % 4}`, { protocol: 'ipmi', address: `127.0.0.1:${peer.port}`, credentialRef: 'ipmi-fleet' });
    for (const [index, pdu] of pdus.entries()) await register(`pdu-${index}`, 'dc1', `r${index}`, { protocol: 'snmp', address: `127.0.0.1:${pdu.port}`, credentialRef: 'pdu-community' });

    const byId = new Map(fleet.map((bmc) => [bmc.id, bmc]));
    const credentials = {
      get(ref: string): Credential | undefined {
        if (ref === 'ipmi-fleet') return { username: ipmiSims[0]!.username, password: ipmiSims[0]!.password, version: '1', endpoints: ['127.0.0.1'] };
        if (ref === 'pdu-community') return { username: '', password: pdus[0]!.community, version: '1', endpoints: ['127.0.0.1'] };
        const bmc = byId.get(ref.replace(/^sim\//, ''));
        return bmc && { username: bmc.username, password: bmc.password, version: '1', endpoints: [new URL(bmc.baseUrl).origin] };
      },
    };
    const firstContact = new Map<string, number>();
    const liveness = new Map<string, PollOutcomeKind[]>();
    const poller = new Poller({
      store,
      credentials,
      plainHttpSites: ['*'],
      // Heavy reads are tested per protocol elsewhere; here the liveness lane is what is measured.
      policy: { requestTimeoutMs: REQUEST_TIMEOUT_MS, intervals: { health: 3600, inventory: 3600, firmware: 3600 }, flushIntervalMs: 250 },
      onOutcome: (nodeId: string, work: PollWork, outcome: PollOutcomeKind, _latencyMs: number, at: number) => {
        if (work !== 'liveness') return;
        liveness.set(nodeId, [...(liveness.get(nodeId) ?? []), outcome]);
        if ((outcome === 'success' || outcome === 'not-modified') && !firstContact.has(nodeId)) firstContact.set(nodeId, at);
      },
    });
    const controller = new AbortController();
    const following = poller.followIntents(controller.signal);
    try {
      await until(() => poller.stats().targets === REDFISH + IPMI + SNMP, 10_000, 'every registered node becomes a poll target');
      const started = Date.now();
      poller.start();

      // Every node answers its first check within two intervals (first checks are spread over one).
      await until(() => firstContact.size === nodes.length, 2 * INTERVAL_S * 1000 + 10_000, 'a first contact with every node');
      const late = nodes.filter(({ nodeId }) => firstContact.get(nodeId)! - started > 2 * INTERVAL_S * 1000);
      expect(late.map(({ nodeId }) => `${nodeId}: ${firstContact.get(nodeId)! - started} ms`)).toEqual([]);
      // ...and the liveness projection, fed by the recorded outcomes, holds all 200 healthy.
      const db = store.db as unknown as Kysely<any>;
      const states = async (): Promise<Map<string, string>> => new Map((await db.selectFrom('liveness_nodes').select(['node_id', 'state']).execute()).map((row) => [row.node_id as string, row.state as string]));
      await until(async () => [...(await states()).values()].filter((state) => state === 'healthy').length === nodes.length, 15_000, 'all 200 healthy in the liveness projection');
      for (const protocol of ['redfish', 'ipmi', 'snmp'] as const) expect(nodes.filter((node) => node.protocol === protocol).length).toBe({ redfish: REDFISH, ipmi: IPMI, snmp: SNMP }[protocol]);

      // One IPMI node's ipmi_sim is killed, and one Redfish BMC goes dark at the same moment.
      const darkIpmi = 'ipmi-7';
      const darkRedfish = fleet[42]!.id;
      const killedAt = Date.now();
      await ipmiSims[7]!.stop();
      await simJson(`${sim.controlUrl}/sim/faults`, { method: 'POST', body: { fault: 'dark', target: { bmc: darkRedfish }, duration: '1h' } });
      await until(async () => (await nodeLiveness(db, darkIpmi))?.state === 'dark' && (await nodeLiveness(db, darkRedfish))?.state === 'dark', (DARK_AFTER_MISSES + 2) * INTERVAL_S * 1000 + 15_000, 'both found dark');
      // Found dark by the same rule and within the same bound: the threshold's miss came at most one interval
      // (the check in flight at the kill) plus the threshold's checks plus one request's deadline after the kill.
      const bound = (DARK_AFTER_MISSES + 1) * INTERVAL_S * 1000 + REQUEST_TIMEOUT_MS;
      for (const nodeId of [darkIpmi, darkRedfish]) {
        const view = (await nodeLiveness(db, nodeId))!;
        expect(view.consecutiveMisses, nodeId).toBeGreaterThanOrEqual(DARK_AFTER_MISSES);
        expect(view.darkSince!.getTime() - killedAt, nodeId).toBeLessThanOrEqual(bound);
        // Its recorded misses are what the protocol says of a silent peer, never a success after the kill.
        expect(liveness.get(nodeId)!.slice(-DARK_AFTER_MISSES).every((outcome) => outcome !== 'success' && outcome !== 'not-modified'), nodeId).toBe(true);
        // It was late first: one gap, opened by the first miss after the kill, that went dark and is still open.
        const gaps = await gapsInPeriod(db, { nodeId }, new Date(killedAt - INTERVAL_S * 1000), new Date(Date.now() + 1000));
        expect(gaps, nodeId).toHaveLength(1);
        expect(gaps[0], nodeId).toMatchObject({ endAt: null, wentDark: true });
        expect(gaps[0]!.startAt.getTime(), nodeId).toBeLessThan(view.darkSince!.getTime());
      }
      // Nobody else is dark: the other 198 answer on, whatever their protocol.
      const dark = [...(await states()).entries()].filter(([, state]) => state === 'dark').map(([nodeId]) => nodeId);
      expect(dark.sort()).toEqual([darkIpmi, darkRedfish].sort());
    } finally {
      controller.abort();
      await poller.stop();
      await following.catch(() => undefined);
    }
  }, 90_000);
});
