import { sql, type Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureCatalogue } from '../../replay/as-of/as-of-storage.js';
import { Snapshotter } from '../../replay/as-of/snapshotter.js';
import type { Projection } from '../../src/ledger/index.js';
import { openHarness, type Harness } from '../projections/support/projection-harness.js';
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
});
