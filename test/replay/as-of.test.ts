import type { Kysely } from 'kysely';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fleetProjections } from '../../projections/index.js';
import { AsOfEngine, type AsOfPoint } from '../../replay/as-of/index.js';
import { fleetDiff, nodeTimeline } from '../../replay/history/index.js';
import { buildApi } from '../../src/api/index.js';
import { ProjectionRunner } from '../../src/ledger/index.js';
import { backends } from '../support/backends.js';
import { tokenTable, bearer } from '../api/support/api-harness.js';
import { firmware, polls, registered } from '../projections/support/fleet-events.js';
import { caughtUp, openHarness, snapshot, type Harness } from '../projections/support/projection-harness.js';
import { cordon } from '../support/ledger-fixtures.js';

/**
 * The fleet as of a moment is the fleet as it was live at that moment: answers recorded live while the log grew are
 * asked again later, by position and by instant, from snapshots taken at other moments plus the tail.
 */
const tables = fleetProjections().flatMap((projection) => [...projection.tables]);
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('time travel over the read models', () => {
  let harness: Harness;
  let runner: ProjectionRunner;
  let engine: AsOfEngine;
  const live: Array<{ point: AsOfPoint; tables: Record<string, unknown[]>; dark: string[] }> = [];

  async function record(): Promise<void> {
    await caughtUp(harness.store, runner);
    const head = await harness.store.head();
    const dark = (await harness.db.selectFrom('liveness_nodes').select('node_id').where('state', '=', 'dark').orderBy('node_id').execute()).map((r: any) => r.node_id);
    live.push({ point: { position: head.position, recordedAt: head.recordedAt }, tables: await snapshot(harness.db, tables), dark });
    await pause(5); // the next append is recorded at a later instant
  }

  beforeAll(async () => {
    harness = await openHarness(backends()[0]!.adminUrl!);
    runner = new ProjectionRunner(harness.store, fleetProjections(), { batchSize: 200 });
    await runner.start();
    engine = new AsOfEngine(harness.store, fleetProjections(), { cached: 2 });
    await engine.start({ snapshots: false });
    const { store } = harness;
    for (const id of ['ta', 'tb', 'tc', 'td']) await store.append(`node-${id}`, [registered(id, id < 'tc' ? 'r1' : 'r2')]);
    await store.append('node-tb', [{ ...firmware([{ component: 'BMC', version: '1.0.0' }], { seconds: 30 }) }]);
    await store.append('polls-dc1', [1, 2, 3].map((i) => polls(i * 60, [['ta', 'success'], ['tb', 'success'], ['tc', 'success'], ['td', 'success']])));
    await record(); // 0: everyone healthy
    await store.append('polls-dc1', [4, 5].map((i) => polls(i * 60, [['ta', 'timeout'], ['tb', 'success'], ['tc', 'success'], ['td', 'success']])));
    await caughtUp(store, runner);
    await engine.snapshot(); // taken between the moments asked about: they are answered from it plus the tail, or before it
    await store.append('polls-dc1', [6, 7, 8, 9, 10, 11, 12, 13, 14, 15].map((i) => polls(i * 60, [['ta', 'timeout'], ['tb', 'success'], ['tc', 'success'], ['td', 'success']])));
    await store.append('node-tb', [firmware([{ component: 'BMC', version: '2.0.0' }], { seconds: 900 })]);
    await store.append('node-tc', [cordon('tc', 'PSU swap')]);
    await record(); // 1: ta dark (ten misses), tb on 2.0.0, tc cordoned by alice
    await store.append('polls-dc1', [16, 17].map((i) => polls(i * 60, [['ta', 'success'], ['tb', 'success'], ['tc', 'success'], ['td', 'success']])));
    await engine.snapshot();
    await record(); // 2: ta back
  });

  afterAll(async () => {
    await engine?.stop();
    await runner?.stop();
    await harness?.close();
  });

  it('as of a position, every read model equals what it was live at that position (before, between and at snapshots)', async () => {
    for (const moment of live) {
      const view = await engine.view(moment.point);
      expect(await snapshot(view.db, tables)).toEqual(moment.tables);
    }
    expect(live[1]!.dark).toEqual(['ta']);
  });

  it('an instant resolves to the last position recorded at or before it, and answers the same', async () => {
    const moment = live[1]!;
    const point = await engine.resolve(moment.point.recordedAt.toISOString());
    expect(point.position).toBe(moment.point.position);
    expect(await snapshot((await engine.view(point)).db, tables)).toEqual(moment.tables);
    await expect(engine.resolve('2020-01-01T00:00:00Z')).rejects.toThrow(/begins after/);
  });

  it('through the API, an analyst asks as of a point, and the answer names the position it reflects; bad asOf is a typed 400', async () => {
    const app = await buildApi({ store: harness.store, runner, tokens: tokenTable, asOf: engine });
    try {
      const moment = live[1]!;
      const answer = await app.inject({ method: 'GET', url: `/v1/liveness/dark?asOf=${moment.point.position}`, headers: bearer('analyst') });
      expect(answer.statusCode).toBe(200);
      expect(answer.headers['fleet-ledger-as-of-position']).toBe(String(moment.point.position));
      expect(answer.json().items.map((n: any) => n.nodeId)).toEqual(moment.dark);
      const now = await app.inject({ method: 'GET', url: '/v1/liveness/dark', headers: bearer('analyst') });
      expect(now.json().items).toEqual([]);
      for (const bad of ['yesterday', '2999-01-01T00:00:00Z', '999999']) {
        const refused = await app.inject({ method: 'GET', url: `/v1/liveness/dark?asOf=${bad}`, headers: bearer('analyst') });
        expect(refused.statusCode).toBe(400);
        expect(refused.json().error).toMatchObject({ code: 'API_INVALID_REQUEST', details: { field: 'querystring.asOf' } });
      }
      const diff = await app.inject({ method: 'GET', url: `/v1/history/diff?from=${live[1]!.point.position}&to=${live[0]!.point.position}`, headers: bearer('auditor') });
      expect(diff.statusCode).toBe(400);
    } finally {
      await app.close();
    }
  });

  it('the diff between two points holds exactly what changed in between, with who asked', async () => {
    const first = await fleetDiff(harness.store, engine, live[0]!.point, live[1]!.point);
    expect(first.wentDark.map((d) => d.nodeId)).toEqual(['ta']);
    expect(first.firmwareChanged).toEqual([{ nodeId: 'tb', component: 'BMC', from: '1.0.0', to: '2.0.0' }]);
    expect(first.intents.map((i) => [i.type, i.by])).toEqual([['NodeCordoned', 'alice@example.org']]);
    expect(first.recovered).toEqual([]);
    const second = await fleetDiff(harness.store, engine, live[1]!.point, live[2]!.point);
    expect(second.wentDark).toEqual([]);
    expect(second.recovered.map((d) => d.nodeId)).toEqual(['ta']);
    expect(second.firmwareChanged).toEqual([]);
    expect(second.intents).toEqual([]);
  });

  it("a node's timeline lists its events in order and its silence as one interval", async () => {
    const timeline = await nodeTimeline(harness.store, engine, 'ta');
    expect(timeline.entries.map((e) => e.type)).toEqual(['NodeRegistered']);
    expect(timeline.silences).toHaveLength(1);
    expect(timeline.silences[0]).toMatchObject({ wentDark: true, from: '2026-03-01T00:03:00.000Z', to: '2026-03-01T00:16:00.000Z' });
    const tc = await nodeTimeline(harness.store, engine, 'tc');
    expect(tc.entries.find((e) => e.type === 'NodeCordoned')).toMatchObject({ actor: { kind: 'operator', id: 'alice@example.org' }, summary: expect.stringContaining('PSU swap') });
  });

  it('a scratch schema left by a crash mid-materialization is dropped at the next start', async () => {
    const db = harness.db as Kysely<any>;
    await sql`CREATE SCHEMA replay_asof_7_123`.execute(db);
    await sql`CREATE TABLE replay_asof_7_123.liveness_nodes (x int)`.execute(db);
    const next = new AsOfEngine(harness.store, fleetProjections());
    await next.start({ snapshots: false });
    await next.stop();
    const left = await sql<{ n: number }>`SELECT count(*)::int AS n FROM pg_namespace WHERE nspname = 'replay_asof_7_123'`.execute(db);
    expect(left.rows[0]!.n).toBe(0);
    const kept = await sql<{ n: number }>`SELECT count(*)::int AS n FROM pg_namespace WHERE nspname LIKE 'replay_snap_%'`.execute(db);
    expect(kept.rows[0]!.n).toBe(2);
  });
});
