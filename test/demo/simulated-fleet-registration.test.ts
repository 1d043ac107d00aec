/**
 * Starting the demo again on the same log records only what changed: the same fleet appends nothing, a smaller one
 * decommissions the nodes nobody simulates any more (none is left never-contacted for good), a larger one registers
 * them again; and a busy database is waited for within bounded retries, a gone one reported in one clear error.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { startSimulatedFleet, registerSimulatedFleet } from '../../src/demo/demo-fleet.js';
import { DemoSetupError } from '../../src/demo/demo-setup-error.js';
import { demoScenario } from '../../src/demo/demo-scenario.js';
import { readRecordedFleet } from '../../src/demo/recorded-fleet.js';
import { EventStore } from '../../src/ledger/index.js';
import type { Simulator } from '../../src/sim/index.js';
import { freshDatabase } from '../support/backends.js';

const quick = { delaysMs: [20, 20] };

async function countOf(store: EventStore, types: string[]): Promise<number> {
  return (await store.readAll({ types, limit: 100_000 })).length;
}

/** Starts the demo's simulator for `bmcs` on `store`'s log, as `start` does, registers it, and stops the simulator. */
async function startDemo(store: EventStore, bmcs: number): Promise<Awaited<ReturnType<typeof registerSimulatedFleet>> & { port: string }> {
  const recorded = await readRecordedFleet(store, quick);
  const sim: Simulator = await startSimulatedFleet({ scenario: demoScenario(bmcs) }, recorded);
  try {
    return { ...(await registerSimulatedFleet(store, sim.bmcs, 60, { recorded, retry: quick })), port: new URL(sim.controlUrl).port };
  } finally {
    await sim.close();
  }
}

describe('the simulated fleet on a restart', () => {
  let store: EventStore;
  let drop: () => Promise<void>;
  beforeAll(async () => {
    const db = await freshDatabase(inject('embeddedAdminUrl'));
    drop = db.drop;
    store = await EventStore.open({ connectionString: db.url });
  });
  afterAll(async () => {
    await store.close();
    await drop();
  });

  it('a restart with the same fleet appends no NodeRegistered, NodeDecommissioned or TopologyDeclared', async () => {
    const first = await startDemo(store, 32);
    expect(first).toMatchObject({ registered: 32, unchanged: 0, decommissioned: 0 });
    const head = (await store.head()).position;

    const again = await startDemo(store, 32);
    // The simulator listens on the port the fleet was registered at, so every address is as recorded.
    expect(again.port).toBe(first.port);
    expect(again).toMatchObject({ registered: 0, unchanged: 32, decommissioned: 0 });
    expect((await store.head()).position).toBe(head);
  });

  it('a restart with fewer BMCs decommissions the nodes no longer simulated, and one with more registers them again', async () => {
    await startDemo(store, 32);
    // A fleet of another size is laid out in racks anew (src/demo/demo-scenario.ts): a node that moved rack is
    // registered again, one that kept its place is not.
    const bigger = await startDemo(store, 40);
    expect(bigger.decommissioned).toBe(0);
    expect(bigger.registered + bigger.unchanged).toBe(40);
    expect(bigger.registered).toBeGreaterThanOrEqual(8);

    const smaller = await startDemo(store, 34);
    expect(smaller.decommissioned).toBe(6);
    expect(smaller.registered + smaller.unchanged).toBe(34);
    const recorded = await readRecordedFleet(store, quick);
    // Every node the log still holds registered is one the simulator serves: none waits for a BMC nobody runs.
    const active = [...recorded.entries()].filter(([, node]) => node.registration !== null).map(([nodeId]) => nodeId);
    expect(active).toHaveLength(34);
    const decommissioned = await store.readAll({ types: ['NodeDecommissioned'], limit: 100 });
    expect(decommissioned.map((event) => event.stream).sort()).toEqual(['bmc-00034', 'bmc-00035', 'bmc-00036', 'bmc-00037', 'bmc-00038', 'bmc-00039'].map((id) => `node-${id}`));

    const back = await startDemo(store, 40);
    expect(back.decommissioned).toBe(0);
    expect(back.registered).toBeGreaterThanOrEqual(6);
    const returned = (await readRecordedFleet(store, quick)).get('bmc-00039');
    expect(returned?.registration?.bmc.credentialRef).toBe('sim:bmc-00039');
    const again = await startDemo(store, 40);
    expect(again).toMatchObject({ registered: 0, unchanged: 40, decommissioned: 0 });
  });
});

describe('registering the simulated fleet on a busy database', () => {
  it('a database slow to hand out connections is waited for: the fleet is registered, once', async () => {
    const db = await freshDatabase(inject('embeddedAdminUrl'));
    // A pool of two that gives up on a connection after 300 ms: what 2,000 BMCs met on a loaded machine.
    const store = await EventStore.open({ connectionString: db.url, poolSize: 2, connectionBounds: { connectMs: 300 } });
    const sim = await startSimulatedFleet({ scenario: demoScenario(32) }, new Map());
    const blocker = new pg.Client({ connectionString: db.url });
    await blocker.connect();
    try {
      // Every read of the log waits on this lock for a second and a half, holding its connection meanwhile.
      await blocker.query('BEGIN; LOCK TABLE ledger_events IN ACCESS EXCLUSIVE MODE');
      const release = setTimeout(() => void blocker.query('COMMIT'), 1_500);
      const result = await registerSimulatedFleet(store, sim.bmcs, 60);
      clearTimeout(release);
      expect(result.registered).toBe(32);
      expect(await countOf(store, ['NodeRegistered'])).toBe(32);
    } finally {
      await blocker.end();
      await sim.close();
      await store.close();
      await db.drop();
    }
  });

  it('a database that stays away ends the registration in DEMO_DATABASE_UNAVAILABLE after its bounded attempts, with a clear message', async () => {
    const db = await freshDatabase(inject('embeddedAdminUrl'));
    const store = await EventStore.open({ connectionString: db.url, connectionBounds: { connectMs: 500 } });
    const sim = await startSimulatedFleet({ scenario: demoScenario(32) }, new Map());
    try {
      await db.drop();
      const failure = await registerSimulatedFleet(store, sim.bmcs, 60, { retry: quick }).then(
        () => null,
        (error: unknown) => error,
      );
      expect(failure).toBeInstanceOf(DemoSetupError);
      expect(failure).toMatchObject({ code: 'DEMO_DATABASE_UNAVAILABLE', details: { operation: 'reading the recorded fleet', attempts: 3 } });
      expect((failure as Error).message).toMatch(/failed 3 times: the database did not answer in time/);
    } finally {
      await sim.close();
      await store.close();
    }
  });
});
