import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { fleetProjections } from '../../projections/index.js';
import { ProjectionRunner, type EventStore } from '../../src/ledger/index.js';
import { backends } from '../support/backends.js';
import { caughtUp, openHarness, snapshot } from './support/projection-harness.js';
import { command, toAppends } from './support/random-fleet-log.js';

// Low thresholds so that short random histories reach darkness, recovery and root causes.
const options = { liveness: { darkAfterMisses: 3, recoverAfterSuccesses: 2 }, blastRadius: { minNodes: 2 } };
const projections = fleetProjections(options);
const tables = projections.flatMap((p) => p.tables);

/** Each projection rebuilt alone: its tables held in memory from the first page to the swap. */
async function rebuildAll(store: EventStore): Promise<Record<string, unknown[]>> {
  const runner = new ProjectionRunner(store, fleetProjections(options));
  for (const projection of projections) await runner.rebuild(projection.name);
  return snapshot(store.db as never, tables);
}

/**
 * All projections over one read of the log, in pages of a few events, each rebuild writing its tables into the scratch
 * schema and emptying memory whenever it holds more than `maxHeldRows` rows (so later pages load what was written).
 */
async function rebuildTogether(store: EventStore, maxPageEvents: number, maxHeldRows: number): Promise<Record<string, unknown[]>> {
  const runner = new ProjectionRunner(store, fleetProjections(options), { maxHeldRows });
  await runner.rebuildAll(undefined, { maxPageEvents });
  return snapshot(store.db as never, tables);
}

for (const backend of backends()) {
  describe.skipIf(!backend.adminUrl)(`rebuild equivalence on ${backend.name} PostgreSQL`, () => {
    it('rebuilding from zero gives the same tables as the incremental run, for random event sequences, however the rebuild pages and flushes', async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.array(command, { minLength: 5, maxLength: 30 }),
          fc.integer({ min: 1, max: 7 }),
          fc.integer({ min: 1, max: 6 }),
          fc.integer({ min: 0, max: 12 }),
          async (commands, batchSize, maxPageEvents, maxHeldRows) => {
          const harness = await openHarness(backend.adminUrl!);
          try {
            const runner = new ProjectionRunner(harness.store, fleetProjections(options), { batchSize });
            await runner.start();
            for (const [stream, events] of toAppends(commands)) await harness.store.append(stream, events);
            await caughtUp(harness.store, runner);
            await runner.stop();
            const incremental = await snapshot(harness.db, tables);
            expect(await rebuildAll(harness.store)).toEqual(incremental);
            expect(await rebuildTogether(harness.store, maxPageEvents, maxHeldRows)).toEqual(incremental);
          } finally {
            await harness.close();
          }
          },
        ),
        { numRuns: 4 },
      );
    }, 240_000);

    it('stopping the runner at random moments and restarting never double-counts', async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.array(command, { minLength: 5, maxLength: 30 }),
          fc.array(fc.integer({ min: 0, max: 60 }), { minLength: 1, maxLength: 4 }),
          async (commands, stopsAfterMs) => {
            const harness = await openHarness(backend.adminUrl!);
            try {
              const appends = toAppends(commands);
              const chunk = Math.ceil(appends.length / stopsAfterMs.length);
              for (const [i, delay] of stopsAfterMs.entries()) {
                for (const [stream, events] of appends.slice(i * chunk, (i + 1) * chunk)) await harness.store.append(stream, events);
                const runner = new ProjectionRunner(harness.store, fleetProjections(options), { batchSize: 3 });
                await runner.start();
                await new Promise((resolve) => setTimeout(resolve, delay));
                await runner.stop();
              }
              const last = new ProjectionRunner(harness.store, fleetProjections(options), { batchSize: 3 });
              await last.start();
              await caughtUp(harness.store, last);
              await last.stop();
              const resumed = await snapshot(harness.db, tables);
              expect(await rebuildAll(harness.store)).toEqual(resumed);
            } finally {
              await harness.close();
            }
          },
        ),
        { numRuns: 3 },
      );
    }, 180_000);
  });
}
