import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { sql, type Kysely, type Transaction } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RecordedEvent } from '../../events/index.js';
import type { Projection } from '../../projections/index.js';
import { createTable, holdTablesForRebuild, loadRows, upsertRows, type TableSpec } from '../../projections/support/table.js';
import { EventStore, ProjectionRunner } from '../../src/ledger/index.js';
import { backends, freshDatabase } from '../support/backends.js';
import { cordon } from '../support/ledger-fixtures.js';

/** Counts cordons per node; refuses the reason 'poison' (or the reason given) so the failure path can be exercised. */
function cordonCounter(name = 'cordon_counts', refusePoison: boolean | string = false): Projection {
  const refused = typeof refusePoison === 'string' ? refusePoison : refusePoison ? 'poison' : null;
  return {
    name,
    version: 1,
    eventTypes: ['NodeCordoned'],
    tables: [name],
    async createTables(db: Kysely<any>) {
      await db.schema.createTable(name).ifNotExists().addColumn('node_id', 'text', (c) => c.primaryKey()).addColumn('cordons', 'integer', (c) => c.notNull()).execute();
    },
    async apply(trx: Transaction<any>, events: readonly RecordedEvent[]) {
      const counts = new Map<string, number>();
      for (const event of events) {
        const data = event.data as { nodeId: string; reason: string };
        if (data.reason === refused) throw new Error('poisoned cordon');
        counts.set(data.nodeId, (counts.get(data.nodeId) ?? 0) + 1);
      }
      await trx
        .insertInto(name)
        .values([...counts].map(([node_id, cordons]) => ({ node_id, cordons })))
        .onConflict((oc) => oc.column('node_id').doUpdateSet({ cordons: sql`${sql.ref(`${name}.cordons`)} + excluded.cordons` }))
        .execute();
    },
  };
}

/**
 * The same count, event by event through the table helpers (each cordon loads the node's row and writes it back before
 * the next is looked at), with its tables held in memory by a rebuild: a batch that fails on its poisoned cordon has
 * already written the cordons before it.
 */
function heldCordonCounter(name: string, refused: string): Projection {
  const spec: TableSpec = { name, primaryKey: ['node_id'], columns: { node_id: { type: 'text' }, cordons: { type: 'integer' } } };
  return {
    name,
    version: 1,
    eventTypes: ['NodeCordoned'],
    tables: [name],
    holdTables: () => holdTablesForRebuild([name]),
    async createTables(db: Kysely<any>) {
      await createTable(db, spec);
    },
    async apply(trx: Transaction<any>, events: readonly RecordedEvent[]) {
      for (const event of events) {
        const data = event.data as { nodeId: string; reason: string };
        if (data.reason === refused) throw new Error('poisoned cordon');
        const [row] = await loadRows(trx, spec, 'node_id', [data.nodeId]);
        await upsertRows(trx, spec, [{ node_id: data.nodeId, cordons: Number(row?.cordons ?? 0) + 1 }]);
      }
    },
  };
}

async function waitFor(check: () => Promise<boolean>, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 50));
  }
}

const backend = backends()[0]!;

describe(`projection runner on ${backend.name} PostgreSQL`, () => {
  let store: EventStore;
  let drop: () => Promise<void>;
  beforeAll(async () => {
    const db = await freshDatabase(backend.adminUrl!);
    drop = db.drop;
    store = await EventStore.open({ connectionString: db.url, pollIntervalMs: 100 });
  });
  afterAll(async () => {
    await store.close();
    await drop();
  });

  const counts = async (table: string): Promise<Record<string, number>> =>
    Object.fromEntries((await store.db.selectFrom(table as never).selectAll().execute()).map((r: any) => [r.node_id, r.cordons]));

  it('given events in the log, when the runner starts, then every event is applied once and the lag reaches zero', async () => {
    const projection = cordonCounter('counts_a');
    await store.append('node-a1', [cordon('a1'), cordon('a1')]);
    const runner = new ProjectionRunner(store, [projection]);
    await runner.start();
    await store.append('node-a2', [cordon('a2')]);
    await waitFor(async () => (await runner.status())[0]!.lagPositions === 0);
    expect(await counts('counts_a')).toEqual({ a1: 2, a2: 1 });
    await runner.stop();
  });

  it('an event a projection cannot apply is set aside with the reason, an alarm event is recorded once, and the projection goes on', async () => {
    const bad = cordonCounter('counts_aside', 'poison-d');
    const runner = new ProjectionRunner(store, [bad], { batchSize: 2 });
    await runner.start();
    const { positions } = await store.append('node-d1', [cordon('d1'), cordon('d1', 'poison-d'), cordon('d1')]);
    await store.append('node-d2', [cordon('d2')]);
    await waitFor(async () => (await runner.status())[0]!.lagPositions === 0);
    const status = (await runner.status())[0]!;
    expect(status).toMatchObject({ state: 'running', setAside: 1 });
    expect(await counts('counts_aside')).toMatchObject({ d1: 2, d2: 1 });
    const letters = await store.db.selectFrom('projection_dead_letters' as never).selectAll().where('projection' as never, '=', 'counts_aside' as never).execute();
    expect(letters).toEqual([expect.objectContaining({ position: positions[1], type: 'NodeCordoned', stream: 'node-d1', reason: 'poisoned cordon', projection_version: 1 })]);
    const alarms = (await store.readStream('projection-counts_aside')).filter((e) => e.type === 'ProjectionEventSetAside');
    expect(alarms.map((e) => e.data)).toEqual([expect.objectContaining({ projection: 'counts_aside', position: positions[1], reason: 'poisoned cordon' })]);
    await runner.stop();
    // A restart does not set it aside twice; a rebuild of the fixed projection applies it and clears the letter.
    const again = new ProjectionRunner(store, [bad]);
    await again.start();
    await waitFor(async () => (await again.status())[0]!.lagPositions === 0);
    expect((await again.status())[0]!.setAside).toBe(1);
    await again.stop();
    const fixed = new ProjectionRunner(store, [cordonCounter('counts_aside')]);
    await fixed.rebuild('counts_aside');
    expect((await counts('counts_aside')).d1).toBe(3);
    expect(await store.db.selectFrom('projection_dead_letters' as never).selectAll().where('projection' as never, '=', 'counts_aside' as never).execute()).toEqual([]);
    expect((await store.readStream('projection-counts_aside')).length).toBe(1);
  });

  it('a rebuild holding its tables in memory sets an event aside as the live run does: what the failed batch wrote before it is undone', async () => {
    const name = 'counts_held_aside';
    const runner = new ProjectionRunner(store, [heldCordonCounter(name, 'poison-h')], { batchSize: 3 });
    await runner.start();
    await store.append('node-h1', [cordon('h1'), cordon('h1'), cordon('h1', 'poison-h'), cordon('h1')]);
    await store.append('node-h2', [cordon('h2'), cordon('h2', 'poison-h'), cordon('h2')]);
    await waitFor(async () => (await runner.status())[0]!.lagPositions === 0);
    const live = await counts(name);
    expect(live).toMatchObject({ h1: 3, h2: 2 });
    await runner.rebuild(name);
    expect(await counts(name)).toEqual(live);
    const letters = await store.db.selectFrom('projection_dead_letters' as never).selectAll().where('projection' as never, '=', name as never).execute();
    expect(letters).toHaveLength(2);
    await runner.stop();
  });

  it('with onFailure stop, an event a projection cannot apply stops it with the event named, and the others go on', async () => {
    const bad = cordonCounter('counts_poisoned', true);
    const good = cordonCounter('counts_healthy');
    const runner = new ProjectionRunner(store, [bad, good], { onFailure: 'stop' });
    await runner.start();
    const { positions } = await store.append('node-p1', [cordon('p1'), cordon('p1', 'poison'), cordon('p1')]);
    await waitFor(async () => (await runner.status()).find((s) => s.name === 'counts_poisoned')!.state === 'failed');
    const status = (await runner.status()).find((s) => s.name === 'counts_poisoned')!;
    expect(status.error).toMatchObject({ position: positions[1], type: 'NodeCordoned', stream: 'node-p1', reason: 'poisoned cordon' });
    await waitFor(async () => (await runner.status()).find((s) => s.name === 'counts_healthy')!.lagPositions === 0);
    expect((await counts('counts_healthy')).p1).toBe(3);
    const checkpoint = await store.db.selectFrom('projection_checkpoints' as never).selectAll().where('name' as never, '=', 'counts_poisoned' as never).executeTakeFirstOrThrow();
    expect(checkpoint).toMatchObject({ status: 'failed' });
    expect(Number((checkpoint as { position: number }).position)).toBeLessThan(positions[1]!);
    await runner.stop();
  });

  it('only one live instance applies a projection; the second waits as standby', async () => {
    const first = new ProjectionRunner(store, [cordonCounter('counts_single')]);
    const second = new ProjectionRunner(store, [cordonCounter('counts_single')], { standbyRetryMs: 100 });
    await first.start();
    await waitFor(async () => (await first.status())[0]!.state === 'running');
    await second.start();
    await waitFor(async () => (await second.status())[0]!.state === 'standby');
    await store.append('node-s1', [cordon('s1')]);
    await waitFor(async () => (await first.status())[0]!.lagPositions === 0);
    expect((await counts('counts_single')).s1).toBe(1);
    // The standby (another process, in a cluster) reports the read model as current as the live instance keeps it,
    // so its readiness does not fail while the read model is current.
    const standing = (await second.status())[0]!;
    expect(standing).toMatchObject({ state: 'standby', lagPositions: 0 });
    expect(standing.position).toBe((await first.status())[0]!.position);
    await first.stop();
    await waitFor(async () => (await second.status())[0]!.state === 'running');
    await store.append('node-s1', [cordon('s1')]);
    await waitFor(async () => (await second.status())[0]!.lagPositions === 0);
    expect((await counts('counts_single')).s1).toBe(2);
    await second.stop();
  });

  it('property: stopping the runner at random moments and restarting never double-counts, and a rebuild gives the same table', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.tuple(fc.integer({ min: 0, max: 5 }), fc.integer({ min: 1, max: 4 })), { minLength: 5, maxLength: 30 }), fc.array(fc.integer({ min: 0, max: 60 }), { minLength: 1, maxLength: 4 }), async (appends, stops) => {
        const name = `counts_${randomUUID().slice(0, 8)}`;
        const projection = cordonCounter(name);
        const prefix = `x${randomUUID().slice(0, 6)}`;
        const expected: Record<string, number> = {};
        let runner = new ProjectionRunner(store, [projection], { batchSize: 3 });
        await runner.start();
        let stopIndex = 0;
        for (const [i, [node, count]] of appends.entries()) {
          const nodeId = `${prefix}-${node}`;
          expected[nodeId] = (expected[nodeId] ?? 0) + count;
          await store.append(`node-${nodeId}`, Array.from({ length: count }, () => cordon(nodeId)));
          if (stops[stopIndex] !== undefined && i === stops[stopIndex]! % appends.length) {
            stopIndex += 1;
            await runner.stop();
            runner = new ProjectionRunner(store, [projection], { batchSize: 3 });
            await runner.start();
          }
        }
        await waitFor(async () => (await runner.status())[0]!.lagPositions === 0);
        const incremental = await counts(name);
        const mine = Object.fromEntries(Object.entries(incremental).filter(([k]) => k.startsWith(prefix)));
        expect(mine).toEqual(expected);
        await runner.rebuild(name);
        expect(await counts(name)).toEqual(incremental);
        await runner.stop();
      }),
      { numRuns: 6 },
    );
  });

  it("a rebuild keeps analysts' views on the projection's tables (and views on those views, with their grants)", async () => {
    const name = 'counts_views';
    const runner = new ProjectionRunner(store, [cordonCounter(name)]);
    await runner.start();
    await store.append('node-v1', [cordon('v1'), cordon('v1')]);
    await store.append('node-v2', [cordon('v2')]);
    await waitFor(async () => (await runner.status())[0]!.lagPositions === 0);
    await sql`CREATE SCHEMA IF NOT EXISTS analysis`.execute(store.db);
    await sql`CREATE VIEW analysis.repeat_cordons AS SELECT node_id, cordons FROM public.counts_views WHERE cordons > 1`.execute(store.db);
    await sql`CREATE VIEW analysis.repeat_count AS SELECT count(*) AS nodes FROM analysis.repeat_cordons`.execute(store.db);
    await sql`GRANT SELECT ON analysis.repeat_count TO PUBLIC`.execute(store.db);
    await sql`CREATE VIEW analysis.old_column AS SELECT node_id FROM public.counts_views`.execute(store.db);

    const result = await runner.rebuild(name);
    expect(result.viewsRestored).toEqual(['analysis.repeat_cordons', 'analysis.repeat_count', 'analysis.old_column']);
    expect(result.viewsLost).toEqual([]);
    const { rows } = await sql<{ nodes: string }>`SELECT nodes FROM analysis.repeat_count`.execute(store.db);
    const expected = Object.values(await counts(name)).filter((cordons) => cordons > 1).length;
    expect(expected).toBeGreaterThan(0);
    expect(Number(rows[0]!.nodes)).toBe(expected);
    const grants = await sql<{ grantee: string }>`SELECT grantee FROM information_schema.role_table_grants WHERE table_schema = 'analysis' AND table_name = 'repeat_count' AND privilege_type = 'SELECT'`.execute(store.db);
    expect(grants.rows.map((row) => row.grantee)).toContain('PUBLIC');
    await runner.stop();
    await sql`DROP SCHEMA analysis CASCADE`.execute(store.db);
  });

  it('rebuilding several projections over one read of the log gives each the tables its live run gave, with their secondary indexes', async () => {
    const names = ['counts_all_a', 'counts_all_b'];
    const indexed = (name: string): Projection => {
      const base = cordonCounter(name);
      return { ...base, async createTables(db) { await base.createTables(db); await db.schema.createIndex(`${name}_cordons_idx`).ifNotExists().on(name).column('cordons').execute(); } };
    };
    const projections = names.map(indexed);
    const runner = new ProjectionRunner(store, projections);
    await runner.start();
    for (let i = 0; i < 40; i += 1) await store.append(`node-all${i % 7}`, Array.from({ length: 1 + (i % 3) }, () => cordon(`all${i % 7}`)));
    await waitFor(async () => (await runner.status()).every((status) => status.lagPositions === 0));
    const live = await Promise.all(names.map(counts));
    // Small pages (by bytes) so the shared read takes many of them.
    const results = await runner.rebuildAll(names, { maxPageBytes: 2_000 });
    expect([...results.keys()]).toEqual(names);
    expect(await Promise.all(names.map(counts))).toEqual(live);
    const head = (await store.head()).position;
    for (const name of names) {
      expect(results.get(name)!.position).toBe(head);
      expect(results.get(name)!.events).toBeGreaterThanOrEqual(80);
      const index = await sql<{ n: number }>`SELECT count(*)::int AS n FROM pg_indexes WHERE schemaname = 'public' AND indexname = ${`${name}_cordons_idx`}`.execute(store.db);
      expect(index.rows[0]!.n).toBe(1);
    }
    // The live loops resume after the rebuild: a new event is applied.
    await store.append('node-all0', [cordon('all0')]);
    await waitFor(async () => (await counts(names[0]!)).all0 === live[0]!.all0! + 1);
    await runner.stop();
  });

  it('a rebuild up to a position gives the read model as of that position', async () => {
    const name = 'counts_asof';
    const runner = new ProjectionRunner(store, [cordonCounter(name)]);
    await runner.start();
    const first = await store.append('node-t1', [cordon('t1'), cordon('t1')]);
    await store.append('node-t1', [cordon('t1')]);
    const progress: number[] = [];
    const result = await runner.rebuild(name, { toPosition: first.positions[1]!, onProgress: (p) => progress.push(p.position) });
    expect(result.position).toBe(first.positions[1]);
    expect(progress.at(-1)).toBe(first.positions[1]);
    await waitFor(async () => (await runner.status())[0]!.lagPositions === 0);
    expect((await counts(name)).t1).toBe(3);
    await runner.stop();
  });
});
