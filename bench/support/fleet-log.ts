/**
 * A realistic fleet log for the benchmarks, appended through `store.append`: registrations, topology, an EBOM import,
 * inventory and firmware observations, one poll-outcome batch per site flush, sensor and health observations,
 * operator intents, firmware changes that drift (and come back) on a canary pool, GPU errors on a few failing GPUs, PDU
 * failures and single dark nodes, one simulated minute at a time until the log holds `targetEvents`: a fleet in its
 * steady state, so a longer log is a longer history, not a larger answer. Seeded: two runs generate the same log.
 */
import type { ProposedEvent } from '../../events/index.js';
import type { EventStore } from '../../src/ledger/index.js';
import { seededRandom } from '../../src/sim/index.js';

export interface FleetLog {
  /** Events appended (the head of a fresh store). */
  events: number;
  outcomes: number;
  minutes: number;
  seconds: number;
}

export async function generateFleetLog(store: EventStore, options: { nodeCount: number; targetEvents: number; seed: number }): Promise<FleetLog> {
  const { nodeCount, targetEvents } = options;
  const started = performance.now();
  // The simulator's seeded generator, so two runs generate the same log.
  const random = seededRandom(options.seed);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;

  // The fleet: 40 nodes a rack, 5 sites, one PDU per pair of racks, a ToR per rack, a CDU per 10 racks.
  const nodesPerRack = 40;
  const sites = ['dc1', 'dc2', 'dc3', 'dc4', 'dc5'];
  const nodes = Array.from({ length: nodeCount }, (_, i) => {
    const rackIndex = Math.floor(i / nodesPerRack);
    return { id: `n${String(i).padStart(5, '0')}`, rack: `rk${String(rackIndex).padStart(4, '0')}`, rackIndex, site: sites[rackIndex % sites.length]! };
  });
  const rackCount = Math.ceil(nodeCount / nodesPerRack);
  const nodesBySite = new Map(sites.map((site) => [site, nodes.filter((n) => n.site === site)]));
  const pduOf = (rackIndex: number): string => `pdu${Math.floor(rackIndex / 2)}`;
  const vendors = [
    { manufacturer: 'HPE', model: 'ProLiant DL380 Gen10 Plus', dialect: 'hpe-ilo5', bmcModel: 'iLO 5', bmc: ['2.72 Sep 04 2022', '2.78 Jan 10 2023'], bmcManager: (v: string) => `iLO 5 v${v.split(' ')[0]}` },
    { manufacturer: 'Dell Inc.', model: 'PowerEdge R750', dialect: 'dell-idrac9', bmcModel: 'iDRAC9', bmc: ['7.00.00.171', '7.10.30.00'], bmcManager: (v: string) => v },
    { manufacturer: 'Supermicro', model: 'SYS-821GE-TNHR', dialect: 'supermicro-x13', bmcModel: 'X13', bmc: ['01.03.09', '01.04.02'], bmcManager: (v: string) => v },
    { manufacturer: 'NVIDIA', model: 'GB200 NVL compute tray', dialect: 'nvidia-openbmc-gb200', bmcModel: 'BMC_0', bmc: ['24.09', '25.01'], bmcManager: (v: string) => v },
  ];
  const vendorOf = (i: number) => vendors[i % vendors.length]!;
  const operator = { kind: 'operator', id: 'bench@fleet' } as const;
  const driver = { kind: 'driver', id: 'bench-driver' } as const;
  const poller = { kind: 'system', id: 'bench-poller' } as const;
  const T0 = Date.parse('2026-01-05T00:00:00Z');

  let appended = 0;
  let outcomes = 0;
  let pending: Array<Promise<unknown>> = [];

  /** Queues one append; concurrent appends share group commits. */
  async function append(stream: string, events: ProposedEvent[]): Promise<void> {
    appended += events.length;
    pending.push(store.append(stream, events));
    if (pending.length >= 4000) await drain();
  }
  async function drain(): Promise<void> {
    const waiting = pending;
    pending = [];
    await Promise.all(waiting);
  }

  function inventoryOf(i: number, bmcVersion: string, at: number): ProposedEvent {
    const v = vendorOf(i);
    const gpus = v.manufacturer === 'Supermicro' ? { count: 8, models: ['NVIDIA H100 80GB HBM3'], devices: [] } : v.manufacturer === 'NVIDIA' ? { count: 4, models: ['NVIDIA GB200'], devices: [] } : undefined;
    return {
      type: 'NodeInventoryObserved',
      observedAt: new Date(at),
      actor: driver,
      data: {
        source: 'redfish',
        dialect: v.dialect,
        unrecognized: [],
        system: { manufacturer: v.manufacturer, model: v.model, serialNumber: `SN${i}` },
        systems: [],
        bmc: { model: v.bmcModel, firmwareVersion: v.bmcManager(bmcVersion) },
        bmcs: [],
        biosVersion: '1.4',
        ...(gpus ? { gpus } : {}),
      },
    };
  }

  function firmwareOf(i: number, bmcVersion: string, at: number): ProposedEvent {
    const v = vendorOf(i);
    return {
      type: 'FirmwareInventoryObserved',
      observedAt: new Date(at),
      actor: driver,
      data: {
        source: 'redfish',
        dialect: v.dialect,
        unrecognized: [],
        components: [
          { id: 'bmc', component: v.bmcModel, version: bmcVersion, normalizedVersion: bmcVersion.split(' ')[0]!, normalizationRule: 'identity' },
          { id: 'bios', component: 'BIOS', version: '1.4', normalizedVersion: '1.4', normalizationRule: 'identity' },
          { id: 'cpld', component: 'CPLD', version: '0x00 0x0b 0x03 0x04', normalizedVersion: '00.0b.03.04', normalizationRule: 'hex-byte-sequence' },
        ],
      },
    };
  }

  // Setup: topology, registrations, the EBOM, first observations.
  for (let r = 0; r < rackCount; r += 1) {
    await append(`rack-rk${String(r).padStart(4, '0')}`, [
      { type: 'TopologyDeclared', actor: operator, data: { site: sites[r % sites.length], rack: `rk${String(r).padStart(4, '0')}`, pdu: [pduOf(r)], tor: [`tor${r}`], cdu: `cdu${Math.floor(r / 10)}` } },
    ]);
  }
  await append('ebom-bench', [{ type: 'EbomImported', actor: operator, data: { importId: 'bench', source: 'bench.csv', rows: nodeCount, sha256: '0'.repeat(64) } }]);
  for (const [i, node] of nodes.entries()) {
    const v = vendorOf(i);
    await append(`node-${node.id}`, [
      { type: 'NodeRegistered', actor: operator, data: { nodeId: node.id, site: node.site, rack: node.rack, bmc: { protocol: 'redfish', address: `https://${node.id}.bmc`, credentialRef: 'bmc' } } },
      {
        type: 'NodeDeclared',
        actor: operator,
        data: {
          importId: 'bench',
          declaration: { nodeId: node.id, site: node.site, rack: node.rack, manufacturer: v.manufacturer, model: v.model, serial: `SN${i}`, firmwareBaseline: { BMC: v.bmc[0]!, BIOS: '1.4' } },
        },
      },
      inventoryOf(i, v.bmc[0]!, T0),
      firmwareOf(i, v.bmc[0]!, T0),
    ]);
  }
  await drain();

  // The timeline, one simulated minute at a time, until the log holds the target number of events.
  const flushSize = 1000;
  const darkUntil = new Map<number, number>(); // node index -> minute it answers again
  // The fleet's state stays what a long-run fleet's is, however long the log: firmware changes come and go on a canary
  // pool (one node in ten), and GPU errors recur on the same few failing GPUs (one node in a hundred), as in the field.
  // A longer log is then a longer history of the same fleet, not a sicker fleet: time travel's cost is measured
  // against history's length, with answers of the same size (issue 49).
  const canaryPool = Math.max(1, Math.floor(nodeCount / 10));
  const failingGpus = Math.max(1, Math.floor(nodeCount / 100));
  const upgraded = new Set<number>();
  let minute = 0;
  while (appended < targetEvents) {
    minute += 1;
    const now = T0 + minute * 60_000;
    // Episodes: every 30 minutes a PDU fails for 15; every minute, one node in 2000 goes dark for 20.
    if (minute % 30 === 0) {
      const pdu = Math.floor(random() * Math.ceil(rackCount / 2));
      for (const node of nodes) if (Math.floor(node.rackIndex / 2) === pdu) darkUntil.set(Number(node.id.slice(1)), minute + 15);
    }
    for (let k = 0; k < Math.max(1, nodeCount / 2000); k += 1) darkUntil.set(Math.floor(random() * nodeCount), minute + 20);
    for (const [index, until] of darkUntil) if (until <= minute) darkUntil.delete(index);
    // Every node is polled once a minute; each site's scheduler flushes 1000 outcomes at a time.
    for (const site of sites) {
      const siteNodes = nodesBySite.get(site)!;
      for (let start = 0; start < siteNodes.length; start += flushSize) {
        const slice = siteNodes.slice(start, start + flushSize);
        const outcomeOf = (n: (typeof nodes)[number]): string => {
          const index = Number(n.id.slice(1));
          if (darkUntil.has(index)) return 'timeout';
          const roll = random();
          return roll < 0.002 ? 'timeout' : roll < 0.004 ? 'session-limit' : roll < 0.6 ? 'not-modified' : 'success';
        };
        outcomes += slice.length;
        await append(`polls-${site}`, [
          {
            type: 'PollOutcomesRecorded',
            actor: poller,
            data: {
              site,
              windowStart: new Date(now).toISOString(),
              nodeIds: slice.map((n) => n.id),
              work: slice.map(() => 'liveness'),
              outcomes: slice.map(outcomeOf),
              latencyMs: slice.map(() => 20 + Math.floor(random() * 200)),
              offsetMs: slice.map((_, k) => Math.floor((k / slice.length) * 59_000)),
            },
          },
        ]);
      }
    }
    // Sensor readings change (one node in five a minute), and a few other facts.
    for (let k = 0; k < nodeCount / 5 && appended < targetEvents; k += 1) {
      const i = Math.floor(random() * nodeCount);
      if (darkUntil.has(i)) continue;
      await append(`node-${nodes[i]!.id}`, [
        {
          type: 'SensorsObserved',
          observedAt: new Date(now),
          actor: driver,
          data: {
            source: 'redfish',
            dialect: vendorOf(i).dialect,
            unrecognized: [],
            temperatures: [{ name: 'Inlet', reading: 20 + Math.floor(random() * 10), unit: 'Cel' }],
            fans: [{ name: 'Fan1', reading: 6000 + Math.floor(random() * 2000), unit: 'RPM' }],
            powerSupplies: [],
            other: [],
            powerConsumedWatts: 400 + Math.floor(random() * 300),
          },
        },
      ]);
    }
    for (let k = 0; k < Math.max(1, nodeCount / 1000); k += 1) {
      // A firmware change on a node of the canary pool: upgraded (which drifts from the declared baseline) or put back
      // on the baseline. A GPU error on one of the few GPUs that fail again and again. An operator intent.
      const i = Math.floor(random() * canaryPool);
      const v = vendorOf(i);
      const version = upgraded.has(i) ? v.bmc[0]! : v.bmc[1]!;
      if (upgraded.has(i)) upgraded.delete(i);
      else upgraded.add(i);
      await append(`node-${nodes[i]!.id}`, [inventoryOf(i, version, now), firmwareOf(i, version, now)]);
      const j = Math.floor(random() * failingGpus) * Math.floor(nodeCount / failingGpus);
      await append(`node-${nodes[j]!.id}`, [
        {
          type: 'GpuXidObserved',
          observedAt: new Date(now),
          actor: driver,
          data: { source: 'agent', dialect: 'nvidia-smi', unrecognized: [], events: [{ xid: pick([79, 48, 13, 43]), pciBusId: '0000:3b:00', message: 'NVRM: Xid', meaning: 'bench', severity: pick(['critical', 'warning', 'info']), recommendedAction: 'reset' }] },
        },
      ]);
      const m = Math.floor(random() * nodeCount);
      await append(`node-${nodes[m]!.id}`, [
        random() < 0.5
          ? { type: 'NodeCordoned', actor: operator, data: { nodeId: nodes[m]!.id, reason: 'bench' } }
          : { type: 'MaintenanceWindowSet', actor: operator, data: { nodeId: nodes[m]!.id, from: new Date(now).toISOString(), until: new Date(now + 600_000).toISOString(), reason: 'bench' } },
      ]);
    }
  }
  await drain();
  return { events: appended, outcomes, minutes: minute, seconds: (performance.now() - started) / 1000 };
}
