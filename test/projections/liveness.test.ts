import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  darkNodes,
  gapsInPeriod,
  LivenessProjection,
  nodeLiveness,
  overdueNodes,
  secondsSinceLastContact,
} from '../../projections/index.js';
import { backends } from '../support/backends.js';
import { at, decommissioned, maintenance, polls, registered } from './support/fleet-events.js';
import { openHarness, project, type Harness } from './support/projection-harness.js';

/** lv-d is the fourth row of each flush: its polls are 3 ms after the window start. */
const plus3ms = (seconds: number): string => new Date(Date.parse(at(seconds)) + 3).toISOString();

for (const backend of backends()) {
  describe.skipIf(!backend.adminUrl)(`liveness read model on ${backend.name} PostgreSQL`, () => {
    let harness: Harness;
    beforeAll(async () => {
      harness = await openHarness(backend.adminUrl!);
    });
    afterAll(async () => harness?.close());

    it('dark nodes, time since last contact and gaps per node and rack, through the runner', async () => {
      const { store, db } = harness;
      await store.append('node-lv-a', [registered('lv-a', 'r1')]);
      await store.append('node-lv-b', [registered('lv-b', 'r1', { expectedIntervalS: 30 })]);
      await store.append('node-lv-c', [registered('lv-c', 'r2')]);
      await store.append('node-lv-d', [registered('lv-d', 'r2')]);
      const flushes = [];
      for (let i = 1; i <= 12; i += 1) {
        flushes.push(polls(i * 60, [['lv-a', i <= 1 ? 'success' : 'timeout'], ['lv-b', 'success'], ['lv-c', i <= 1 ? 'success' : 'latched'], ['lv-d', i === 5 || i === 6 ? 'timeout' : 'success']]));
      }
      await store.append('polls-dc1', flushes);
      await store.append('node-lv-c', [maintenance('lv-c', 0, 3600), decommissioned('lv-c')]);
      await project(store, [new LivenessProjection()]);

      expect((await darkNodes(db)).map((n) => n.nodeId)).toEqual(['lv-a']);
      expect((await nodeLiveness(db, 'lv-b'))!).toMatchObject({ state: 'healthy', expectedIntervalS: 30 });
      expect((await nodeLiveness(db, 'lv-c'))!.state).toBe('decommissioned');
      expect(await secondsSinceLastContact(db, 'lv-a', new Date(Date.parse(at(60)) + 1 + 600_000))).toBeCloseTo(600, 0);
      const gapsA = await gapsInPeriod(db, { nodeId: 'lv-a' }, new Date(at(0)), new Date(at(3600)));
      expect(gapsA).toHaveLength(1);
      expect(gapsA[0]).toMatchObject({ startAt: new Date(at(60)), endAt: null, misses: 11, wentDark: true });
      const gapsR2 = await gapsInPeriod(db, { rack: 'r2' }, new Date(at(0)), new Date(at(3600)));
      expect(gapsR2.map((g) => [g.nodeId, g.startAt.toISOString(), g.endAt?.toISOString(), g.misses])).toEqual([['lv-d', plus3ms(240), plus3ms(420), 2]]);
      expect(await gapsInPeriod(db, { rack: 'r2' }, new Date(at(500)), new Date(at(3600)))).toEqual([]);
      // Ten minutes after the last flush, lv-b (30 s interval) is overdue by three intervals, lv-d (60 s) not yet.
      const overdue = await overdueNodes(db, new Date(Date.parse(at(12 * 60)) + 100_000));
      expect(overdue.map((n) => n.nodeId)).toEqual(['lv-a', 'lv-b']);
    });
  });
}
