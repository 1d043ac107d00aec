import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fleetProjections, nodeLiveness, ThreadedProjectionRunner } from '../../projections/index.js';
import { ProjectionRunner } from '../../src/ledger/index.js';
import { backends } from '../support/backends.js';
import { polls, registered } from './support/fleet-events.js';
import { caughtUp, openHarness, type Harness } from './support/projection-harness.js';

const backend = backends().find((candidate) => candidate.adminUrl !== null)!;

/** Holds this thread's event loop for `ms`: what a main thread busy polling thousands of BMCs does to its callbacks. */
function busy(ms: number): void {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    // spin
  }
}

describe('fleet projections on a thread of their own', () => {
  let harness: Harness;
  beforeAll(async () => {
    harness = await openHarness(backend.adminUrl!);
  });
  afterAll(async () => harness?.close());

  it('apply what is appended while the main thread is busy, and reach the same read model', async () => {
    const { store, db } = harness;
    const applied: Array<{ projection: string; appliedAt: number }> = [];
    const runner = new ThreadedProjectionRunner({
      connectionString: store.connectionString,
      poolSize: 4,
      onApplied: (projection, _oldest, _events, at) => applied.push({ projection, appliedAt: at.getTime() }),
    });
    await runner.start();
    try {
      await caughtUp(store, runner);
      const appendedFrom = Date.now();
      await store.append('node-th-a', [registered('th-a', 'r1')]);
      await store.append('polls-dc1', [polls(60, [['th-a', 'success']])]);
      const blockedFrom = Date.now();
      busy(4000);
      const blockedUntil = Date.now();
      await caughtUp(store, runner);
      // Every projection that reads registrations or poll outcomes (drift reads neither) applied them, and none had
      // to wait for this thread: each applied before the block ended, at least one while this thread could not run a
      // single callback (a projection may have applied the registration before the block began).
      const since = applied.filter((entry) => entry.appliedAt >= appendedFrom);
      expect(new Set(since.map((entry) => entry.projection))).toEqual(new Set(['liveness', 'inventory', 'topology', 'alarms']));
      expect(since.filter((entry) => entry.appliedAt >= blockedUntil)).toEqual([]);
      expect(since.filter((entry) => entry.appliedAt >= blockedFrom).length).toBeGreaterThan(0);
      expect(await nodeLiveness(db, 'th-a')).toMatchObject({ state: 'healthy', rack: 'r1' });
    } finally {
      await runner.stop();
    }
  });

  it('answer status through the thread, and a stop releases every projection to another instance', async () => {
    const { store } = harness;
    const runner = new ThreadedProjectionRunner({ connectionString: store.connectionString, poolSize: 4 });
    await runner.start();
    const other = new ProjectionRunner(store, fleetProjections(), { standbyRetryMs: 100 });
    try {
      await caughtUp(store, runner);
      const status = await runner.status();
      expect(status.map((s) => [s.name, s.state])).toEqual(fleetProjections().map((p) => [p.name, 'running']));
      await other.start();
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(new Set((await other.status()).map((s) => s.state))).toEqual(new Set(['standby']));
      await runner.stop();
      expect(new Set((await runner.status()).map((s) => s.state))).toEqual(new Set(['stopped']));
      await store.append('node-th-b', [registered('th-b', 'r2')]);
      await caughtUp(store, other);
    } finally {
      await runner.stop();
      await other.stop();
    }
  });

  it('refuse to start with the reason when the thread cannot reach the database', async () => {
    const runner = new ThreadedProjectionRunner({ connectionString: 'postgres://postgres@127.0.0.1:1/none', poolSize: 1 });
    await expect(runner.start()).rejects.toThrow(/projections did not start: .*(ECONNREFUSED|connect)/);
    await runner.stop();
  });
});
