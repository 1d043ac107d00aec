/**
 * The poller's health lane reads the system event log of every BMC that exposes one: its entries are recorded as
 * `SelEntriesObserved` when first seen, and a later read that finds the same entries appends nothing.
 */
import { describe, expect, it } from 'vitest';
import { pollOneBmc, withOneSimulatedBmc } from './support/one-bmc.js';
import { until } from './support/until.js';

describe('system event logs through the poller', () => {
  const fixture = withOneSimulatedBmc('sel');

  it('a BMC\'s SEL entries are recorded once by the health lane, however often it reads them', async () => {
    const bmc = fixture.sim.bmcs[0]!;
    let healthReads = 0;
    const poller = pollOneBmc(fixture, {
      intervals: { health: 0.3, inventory: 3600, firmware: 3600 },
      expectedIntervalS: 0.3,
      onOutcome: (_nodeId, work, outcome) => {
        if (work === 'health' && outcome === 'success') healthReads += 1;
      },
    });
    await until(() => healthReads >= 4, 20_000, 'four health reads');
    await poller.stop();
    const events = await fixture.store.readStream(`node-${bmc.id}`);
    const sel = events.filter((event) => event.type === 'SelEntriesObserved');
    expect(sel).toHaveLength(1);
    expect((sel[0]!.data as { entries: unknown[] }).entries.length).toBeGreaterThan(0);
  });

  it('a restarted poller (or the process taking its shard over) records neither the SEL entries nor an unchanged inventory and firmware again', async () => {
    const bmc = fixture.sim.bmcs[0]!;
    const run = async (): Promise<void> => {
      const reads = { health: 0, inventory: 0, firmware: 0 };
      const poller = pollOneBmc(fixture, {
        intervals: { health: 0.3, inventory: 0.3, firmware: 0.3 },
        expectedIntervalS: 0.3,
        onOutcome: (_nodeId, work, outcome) => {
          if (work !== 'liveness' && outcome === 'success') reads[work] += 1;
        },
      });
      await until(() => reads.health >= 3 && reads.inventory >= 2 && reads.firmware >= 2, 20_000, 'health, inventory and firmware read');
      await poller.stop();
    };
    const counts = async (): Promise<Record<string, number>> => {
      const recorded: Record<string, number> = { SelEntriesObserved: 0, NodeInventoryObserved: 0, FirmwareInventoryObserved: 0 };
      for (const event of await fixture.store.readStream(`node-${bmc.id}`)) if (event.type in recorded) recorded[event.type]! += 1;
      return recorded;
    };
    await run();
    const before = await counts();
    for (const count of Object.values(before)) expect(count).toBeGreaterThanOrEqual(1);
    await run(); // a new process: nothing in memory of what the first one recorded
    expect(await counts()).toEqual(before);
  });
});
