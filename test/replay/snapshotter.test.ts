import { sql, type Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fleetProjections } from '../../projections/index.js';
import { AsOfEngine } from '../../replay/as-of/index.js';
import { ensureCatalogue } from '../../replay/as-of/as-of-storage.js';
import { Snapshotter } from '../../replay/as-of/snapshotter.js';
import { ProjectionRunner, type Projection } from '../../src/ledger/index.js';
import { polls, registered, topology, type Outcome } from '../projections/support/fleet-events.js';
import { caughtUp, openHarness, snapshot, type Harness } from '../projections/support/projection-harness.js';
import { until } from '../poller/support/until.js';
import { backends } from '../support/backends.js';
import { cordon } from '../support/ledger-fixtures.js';

/** A projection of one table that the test advances by writing its checkpoint (what it holds does not matter here). */
function counter(name: string): Projection {
  return {
    name,
    version: 1,
    eventTypes: ['NodeCordoned'],
    tables: [`${name}_rows`],
    createTables: async (db) => void (await db.schema.createTable(`${name}_rows`).ifNotExists().addColumn('id', 'integer', (c) => c.primaryKey()).execute()),
    apply: async () => undefined,
  };
}

describe('the snapshotter copies each projection on its own progress', () => {
  let harness: Harness;
  let db: Kysely<any>;
  const fast = counter('fast_model');
  const slow = counter('slow_model');
  const day = 86_400_000;

  const checkpoint = async (projection: Projection, position: number): Promise<void> =>
    void (await sql`
      INSERT INTO projection_checkpoints (name, version, position, status, error, updated_at) VALUES (${projection.name}, 1, ${position}, 'running', NULL, now())
      ON CONFLICT (name) DO UPDATE SET position = excluded.position`.execute(db));
  const partsOf = (taken: { parts: Array<{ projection: string; position: number }> } | null): string[] =>
    (taken?.parts ?? []).map((part) => `${part.projection}@${part.position}`).sort();

  beforeAll(async () => {
    harness = await openHarness(backends()[0]!.adminUrl!);
    db = harness.db;
    await ensureCatalogue(db);
    for (const projection of [fast, slow]) await projection.createTables(db);
    // Positions to copy at: a snapshot records when its lowest position was recorded.
    for (let i = 0; i < 3; i += 1) await harness.store.append(`node-n${i}`, Array.from({ length: 500 }, () => cordon(`n${i}`)));
  });
  afterAll(async () => harness?.close());

  it('a projection that lags the others is copied as it advances, not when the slowest has', async () => {
    const snapshotter = new Snapshotter(db, [fast, slow], { everyEvents: 1_000, everyMs: day, checkMs: day, retention: { keepAllForMs: day, olderSpacingMs: 0 } }, { exclusive: (run) => run() });
    const now = new Date();
    await checkpoint(fast, 100);
    await checkpoint(slow, 100);
    // Nothing copied yet: both are due (the time rule: never copied).
    expect(partsOf(await snapshotter.tick(now))).toEqual(['fast_model@100', 'slow_model@100']);
    expect(await snapshotter.tick(now)).toBeNull();

    // The fast one advanced by more than `everyEvents`, the slow one hardly: only the fast one is copied.
    await checkpoint(fast, 1_200);
    await checkpoint(slow, 150);
    expect(partsOf(await snapshotter.tick(now))).toEqual(['fast_model@1200']);

    // The slow one catches up: it is copied on its own progress since its own last copy.
    await checkpoint(slow, 1_100);
    expect(partsOf(await snapshotter.tick(now))).toEqual(['slow_model@1100']);
    expect(await snapshotter.tick(now)).toBeNull();

    // A while later, each one that moved at all is copied (the time rule, per projection too).
    await checkpoint(fast, 1_300);
    expect(partsOf(await snapshotter.tick(new Date(now.getTime() + day + 60_000)))).toEqual(['fast_model@1300']);
  });

  it('the time rule counts from the newest copy of a projection, not from a copy of an earlier position taken later (a fill)', async () => {
    // Continues the test above: fast_model is copied at 100, 1200 and 1300. A fill made now would copy an earlier
    // position; here the copy at 100 is dated two days on, as such a fill would be.
    const snapshotter = new Snapshotter(db, [fast], { everyEvents: 1_000, everyMs: day, checkMs: day, retention: { keepAllForMs: 10 * day, olderSpacingMs: 0 } }, { exclusive: (run) => run() });
    await sql`UPDATE as_of_snapshots SET taken_at = now() + interval '2 days'
               WHERE id = (SELECT snapshot_id FROM as_of_snapshot_parts WHERE projection = 'fast_model' AND position = 100)`.execute(db);
    await checkpoint(fast, 1_350);
    // A day and a minute after the copy at 1300, the projection having moved: due, whatever the fill's date.
    expect(partsOf(await snapshotter.tick(new Date(Date.now() + day + 60_000)))).toEqual(['fast_model@1350']);
  });
});

describe('the snapshotter fills a stretch where a projection went uncopied', () => {
  let harness: Harness;
  afterAll(async () => harness?.close());

  it('copies are added along the stretch until none is more than twice the policy apart, and each holds what replaying the log to its position holds', async () => {
    harness = await openHarness(backends()[0]!.adminUrl!);
    const projections = fleetProjections({ liveness: { darkAfterMisses: 2 } });
    const runner = new ProjectionRunner(harness.store, projections, { batchSize: 50 });
    await runner.start();
    const nodes = Array.from({ length: 12 }, (_, i) => `g${i}`);
    await harness.store.append('rack-gr1', [topology('gr1', ['GP1'])]);
    for (const node of nodes) await harness.store.append(`node-${node}`, [registered(node, 'gr1')]);
    const round = async (minute: number): Promise<void> =>
      void (await harness.store.append('polls-dc1', [polls(minute * 60, nodes.map((node, i): readonly [string, Outcome] => [node, i < 3 && minute % 4 === 0 ? 'timeout' : 'success']))]));
    const engine = new AsOfEngine(harness.store, projections, { snapshotEveryEvents: 10, snapshotCheckMs: 50, retention: { keepAllForMs: 86_400_000, olderSpacingMs: 0 } });
    try {
      await engine.start({ snapshots: false });
      await caughtUp(harness.store, runner);
      await engine.snapshot();
      // 60 positions with no snapshot: the live snapshotter was off (or one copy took long while the log ran on).
      for (let minute = 1; minute <= 60; minute += 1) await round(minute);
      await caughtUp(harness.store, runner);
      await engine.snapshot();
      expect(await engine.gapsToFill()).toBe(projections.length);
      await runner.stop();

      // The snapshotter, with nothing due, fills the stretch.
      const filling = new AsOfEngine(harness.store, projections, { snapshotEveryEvents: 10, snapshotCheckMs: 50, retention: { keepAllForMs: 86_400_000, olderSpacingMs: 0 } });
      await filling.start();
      try {
        await until(async () => (await filling.gapsToFill()) === 0, 60_000, 'every stretch filled');
      } finally {
        await filling.stop();
      }
      const snapshots = await engine.snapshots();
      for (const projection of projections) {
        const positions = snapshots.flatMap((s) => s.parts.filter((part) => part.projection === projection.name).map((part) => part.position)).sort((a, b) => a - b);
        for (let i = 1; i < positions.length; i += 1) expect(positions[i]! - positions[i - 1]!, projection.name).toBeLessThanOrEqual(20);
      }
      // Each added copy holds what replaying every projection from position 1 to its position gives.
      const filled = snapshots.filter((s) => s.origin === 'backfill');
      expect(filled.length).toBeGreaterThan(0);
      const replay = new AsOfEngine(harness.store, projections, { useSnapshots: false });
      await replay.start({ snapshots: false });
      try {
        for (const copy of filled.slice(0, 3)) {
          const part = copy.parts[0]!;
          const projection = projections.find((p) => p.name === part.projection)!;
          const point = await engine.resolve(String(part.position));
          const tables = projection.tables.filter((table) => !projection.workingTables?.includes(table)); // no view of working state
          const fromCopy = await engine.read(point, [part.projection], (db) => snapshot(db, tables));
          expect(engine.stats.lastQuestion[0]).toMatchObject({ fromPosition: part.position, tailEvents: 0 });
          const fromZero = await replay.read(point, [part.projection], (db) => snapshot(db, tables));
          expect(fromCopy, `${part.projection} at ${part.position}`).toEqual(fromZero);
        }
      } finally {
        await replay.stop();
      }
    } finally {
      await engine.stop();
      await runner.stop();
    }
  }, 120_000);
});
