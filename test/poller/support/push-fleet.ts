import type { RecordedEvent } from '../../../events/index.js';
import { EventStore } from '../../../src/ledger/index.js';
import { Poller, type PushPolicy } from '../../../src/poller/index.js';
import { parseScenario, startSimulator, type SimBmcInfo, type Simulator } from '../../../src/sim/index.js';
import { backends, freshDatabase } from '../../support/backends.js';

/** A fast push policy for tests: audits every second, a second for an event (or a test event) to come, stalls after three heartbeats, looked for every 50 ms. */
export const testPushPolicy: PushPolicy = { auditIntervalS: 1, heartbeatGrace: 3, eventGraceMs: 1_000, minSessionLimit: 3, sweepMs: 50 };

export interface PushFleet {
  sim: Simulator;
  store: EventStore;
  poller: Poller;
  bmc: SimBmcInfo;
  /** The node's events of `type`, in log order. */
  events(type: string): Promise<RecordedEvent[]>;
  close(): Promise<void>;
}

/**
 * One simulated NVIDIA GB200 tray (OpenBMC: an SSE stream, 5 sessions), answering at once, polled with push on a
 * fresh database: liveness every `checkS` seconds. `heartbeatMs` gives its streams heartbeats (none by default, as
 * on the real controllers).
 */
export async function startPushFleet(options: { heartbeatMs?: number; sessionLimit?: number; checkS?: number; policy?: Partial<PushPolicy> } = {}): Promise<PushFleet> {
  const sim = await startSimulator({
    scenario: parseScenario({ name: 'push', fleet: { bmcs: 1, mix: [{ fixture: 'nvidia_gb200' }] }, behaviour: { latencyScale: 0, resetDark: '1s' } }),
    ...(options.heartbeatMs !== undefined ? { behaviour: { eventHeartbeatMs: options.heartbeatMs } } : {}),
  });
  const db = await freshDatabase(backends()[0]!.adminUrl!);
  const store = await EventStore.open({ connectionString: db.url });
  const bmc = sim.bmcs[0]!;
  const poller = new Poller({
    store,
    credentials: { get: () => ({ username: bmc.username, password: bmc.password, version: '1', endpoints: [new URL(bmc.baseUrl).origin] }) },
    plainHttpSites: ['*'],
    policy: { jitter: 0, intervals: { health: 3600, inventory: 3600, firmware: 3600 }, flushIntervalMs: 100 },
    push: { ...testPushPolicy, ...options.policy },
    ...(process.env['PUSH_DEBUG'] ? { log: (message: string, fields?: Record<string, unknown>) => console.log(message, fields) } : {}),
  });
  poller.addTarget({ nodeId: bmc.id, site: bmc.site, rack: bmc.rack, baseUrl: bmc.baseUrl, credentialRef: 'c', expectedIntervalS: options.checkS ?? 0.3, sessionLimit: options.sessionLimit ?? bmc.sessionLimit });
  poller.start();
  return {
    sim,
    store,
    poller,
    bmc,
    events: async (type) => (await store.readStream(`node-${bmc.id}`)).filter((event) => event.type === type),
    close: async () => {
      await poller.stop();
      await sim.close();
      await store.close();
      await db.drop();
    },
  };
}
