/**
 * The demo's procurement records declare each unit once, however often the demo is started again on the same log:
 * a restart reads the earlier declarations before it imports anything.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { declareDemoEbom } from '../../src/demo/demo-ebom.js';
import { demoScenario } from '../../src/demo/demo-scenario.js';
import type { EventStore } from '../../src/ledger/index.js';
import { startSimulator, type SimBmcInfo, type Simulator } from '../../src/sim/index.js';
import { useFreshStore } from '../support/fresh-store.js';
import { inventory } from '../projections/support/fleet-events.js';

async function declarations(store: EventStore): Promise<string[]> {
  return (await store.readAll({ types: ['NodeDeclared'], limit: 1000 })).map((event) => event.stream).sort();
}

/** One run of the demo's procurement: until `done` holds (or a few flushes went by), then stopped as `start` stops it. */
async function runDemoEbom(store: EventStore, bmcs: readonly SimBmcInfo[], done: () => Promise<boolean>): Promise<void> {
  const stop = new AbortController();
  const running = declareDemoEbom(store, bmcs, stop.signal, 100);
  const deadline = Date.now() + 5_000;
  while (!(await done()) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
  stop.abort();
  await running;
}

describe('the demo EBOM on a restart', () => {
  const store = useFreshStore();
  let sim: Simulator;
  beforeAll(async () => {
    sim = await startSimulator({ scenario: demoScenario(32) });
  });
  afterAll(async () => sim?.close());

  it('a restart with the same fleet appends no NodeDeclared: each unit is declared once', async () => {
    const [a, b] = sim.bmcs.filter((bmc) => bmc.recorded);
    const observed = (bmc: SimBmcInfo) => store().append(`node-${bmc.id}`, [inventory({ manufacturer: 'Dell Inc.', model: 'PowerEdge R750', serial: `SN-${bmc.id}`, bmcFirmware: '7.00.00.00' })]);
    // A first run sees one unit, a second run (a restart) one more: each is declared as it is first seen.
    await observed(a!);
    await runDemoEbom(store(), sim.bmcs, async () => (await declarations(store())).length >= 1);
    await observed(b!);
    await runDemoEbom(store(), sim.bmcs, async () => (await declarations(store())).length >= 2);
    expect(await declarations(store())).toEqual([`node-${a!.id}`, `node-${b!.id}`].sort());
    const head = (await store().head()).position;

    // A third start: everything it would declare is declared already.
    await runDemoEbom(store(), sim.bmcs, async () => false);
    expect(await declarations(store())).toEqual([`node-${a!.id}`, `node-${b!.id}`].sort());
    expect((await store().head()).position).toBe(head);
  }, 30_000);
});
