import type { Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { ProposedEvent } from '../../events/index.js';
import { darkNodes, driftFindings, fleetProjections, inventoryBy, openAlarms, versionedReadModels } from '../../projections/index.js';
import { versionColumns } from '../../projections/support/versions.js';
import { AsOfEngine, isAsOfError, type AsOfPoint } from '../../replay/as-of/index.js';
import { buildApi, type ZodApp } from '../../src/api/index.js';
import * as historyCommand from '../../src/cli/commands/history.js';
import * as replay from '../../src/cli/commands/replay.js';
import { ProjectionRunner } from '../../src/ledger/index.js';
import { bearer, tokens, tokenTable } from '../api/support/api-harness.js';
import { declared, firmware, inventory, polls, registered, topology, xid, type Outcome } from '../projections/support/fleet-events.js';
import { caughtUp, openHarness, snapshot, type Harness } from '../projections/support/projection-harness.js';
import { backends } from '../support/backends.js';
import { cordon } from '../support/ledger-fixtures.js';

/**
 * Time travel is specified against the live read models: while a small fleet's log grows with the real projections
 * running, the live answers are recorded at several moments (every versioned table, and every query route through the
 * API); later, after more events, the same questions asked as of each moment, by position and by instant, must get
 * exactly the answers recorded then, less what history does not keep (the per-poll liveness columns), and a question
 * that needs what history does not keep is refused, never answered from the present.
 */
const backend = backends().find((b) => b.name === 'server' && b.adminUrl) ?? backends()[0]!;
const options = { liveness: { darkAfterMisses: 3 } };
const projectionNames = Object.keys(versionedReadModels);
const specs = Object.values(versionedReadModels).flat();
const nodes = ['ta', 'tb', 'tc', 'td'] as const;
const rackOf = (node: string): string => (node < 'tc' ? 'r1' : 'r2');

/** Every versioned table, its key and versioned columns, rows sorted: what history keeps. */
async function versionedTables(db: Kysely<any>): Promise<Record<string, string[]>> {
  const result: Record<string, string[]> = {};
  for (const spec of specs) result[spec.name] = (await db.selectFrom(spec.name).select(versionColumns(spec)).execute()).map((row) => JSON.stringify(row)).sort();
  return result;
}

/** What every poll changes of a node's liveness, which history does not keep: an as-of answer leaves it out. */
const perPoll = new Set(['lastContactAt', 'secondsSinceLastContact', 'consecutiveMisses']);
function withoutPerPoll(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutPerPoll);
  if (value === null || typeof value !== 'object' || value instanceof Date) return value;
  // Only a node's liveness (what has a liveness `state`): an alarm's evidence keeps what it recorded.
  const liveness = 'state' in value;
  return Object.fromEntries(Object.entries(value).filter(([key]) => !(liveness && perPoll.has(key))).map(([key, inner]) => [key, withoutPerPoll(inner)]));
}

/** The query routes an analyst can ask as of a point (`{alarm}` is replaced by an alarm open at the moment). */
const routes = [
  '/v1/nodes/ta',
  '/v1/nodes/tc',
  '/v1/liveness/nodes',
  '/v1/liveness/summary',
  '/v1/liveness/dark',
  '/v1/liveness/nodes/ta',
  '/v1/inventory',
  '/v1/inventory?by=model',
  '/v1/inventory/nodes',
  '/v1/inventory/heterogeneity',
  '/v1/inventory/firmware/BMC',
  '/v1/drift',
  '/v1/compliance',
  '/v1/compliance/nodes',
  '/v1/alarms?includeFolded=true',
  '/v1/alarms/{alarm}',
  '/v1/rollouts',
];

/** The routes that need what history does not keep (last contact, gaps): refused as of a point. */
const notKeptRoutes = ['/v1/liveness/overdue', '/v1/liveness/gaps?rack=r1&from=2020-01-01T00:00:00Z'];

interface Moment {
  point: AsOfPoint;
  tables: Record<string, unknown[]>;
  dark: unknown[];
  alarms: unknown[];
  inventory: unknown[];
  drift: unknown[];
  /** Each route's live answer (status and body). */
  answers: Map<string, { status: number; body: unknown }>;
  alarmId: string | null;
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const url = (route: string, moment: Moment, asOf?: string): string => {
  const path = route.replace('{alarm}', encodeURIComponent(moment.alarmId ?? 'none'));
  return asOf === undefined ? path : `${path}${path.includes('?') ? '&' : '?'}asOf=${encodeURIComponent(asOf)}`;
};
const withoutAsOf = (body: any): unknown => {
  const { asOf: _asOf, ...rest } = body;
  return rest;
};

describe('time travel: the fleet as of a point is the fleet as it was live at that point', () => {
  let harness: Harness;
  let runner: ProjectionRunner;
  let engine: AsOfEngine;
  let app: ZodApp;
  /** The API's clock: set to the head's recording time when live answers are recorded, so "seconds since" compare. */
  let now = new Date();
  const moments: Moment[] = [];

  const append = (stream: string, events: ProposedEvent[]) => harness.store.append(stream, events);
  const pollRound = (minute: number, outcomes: Partial<Record<(typeof nodes)[number], Outcome>>) =>
    append('polls-dc1', [polls(minute * 60, nodes.map((node) => [node, outcomes[node] ?? 'success'] as const))]);
  let listening: Promise<string> | null = null;
  /** The API over HTTP, for the CLI (listening once). */
  const baseUrl = (): Promise<string> => (listening ??= app.listen({ port: 0, host: '127.0.0.1' }));
  const inject = (path: string, role: 'analyst' | 'operator' = 'analyst') => app.inject({ method: 'GET', url: path, headers: bearer(role) });

  async function record(): Promise<Moment> {
    await caughtUp(harness.store, runner);
    const head = await harness.store.head();
    now = head.recordedAt;
    const db = harness.db;
    const alarms = await openAlarms(db, { includeFolded: true });
    const moment: Moment = {
      point: { position: head.position, recordedAt: head.recordedAt, instant: head.recordedAt },
      tables: await versionedTables(db),
      dark: withoutPerPoll(await darkNodes(db)) as unknown[],
      alarms,
      inventory: [await inventoryBy(db, 'manufacturer'), await inventoryBy(db, 'bmc_firmware')],
      drift: await driftFindings(db),
      answers: new Map(),
      alarmId: alarms[0]?.alarmId ?? null,
    };
    for (const route of routes) {
      const answer = await inject(url(route, moment));
      moment.answers.set(route, { status: answer.statusCode, body: withoutPerPoll(answer.json()) });
    }
    moments.push(moment);
    await pause(5); // the next append is recorded at a later instant
    return moment;
  }

  beforeAll(async () => {
    harness = await openHarness(backend.adminUrl!);
    // Small batches: the live run applies the log in other batches than the as-of engine does.
    runner = new ProjectionRunner(harness.store, fleetProjections(options), { batchSize: 3 });
    await runner.start();
    engine = new AsOfEngine(harness.store);
    await engine.start();
    app = await buildApi({ store: harness.store, runner, tokens: tokenTable, asOf: engine, clock: () => now });
    await app.ready();

    await append('rack-r1', [topology('r1', ['PA'], ['T1'])]);
    await append('rack-r2', [topology('r2', ['PB'], ['T2'])]);
    for (const node of nodes) {
      await append(`node-${node}`, [registered(node, rackOf(node))]);
      await append(`node-${node}`, [declared({ nodeId: node, rack: rackOf(node), firmwareBaseline: { BMC: '2.72' } })]);
      await append(`node-${node}`, [
        inventory({ manufacturer: 'HPE', model: 'ProLiant DL380 Gen10 Plus', serial: node === 'tc' ? 'SN-swapped' : `SN-${node}`, bmcModel: 'iLO 5', bmcFirmware: 'iLO 5 v2.72' }),
        firmware([{ component: 'BMC', version: '2.72 Sep 04 2022', normalized: '2.72' }]),
      ]);
    }
    for (let minute = 1; minute <= 3; minute += 1) await pollRound(minute, {});
    await record(); // 0: all healthy, tc drifts (serial)

    for (let minute = 4; minute <= 6; minute += 1) await pollRound(minute, { ta: 'timeout' });
    await append('node-tb', [xid(79, 'critical', 400)]);
    await record(); // 1: ta dark, tb has a GPU alarm

    await append('node-tc', [firmware([{ component: 'BMC', version: '2.78 Jan 10 2023', normalized: '2.78' }], { seconds: 420 })]);
    await append('node-td', [cordon('td', 'PSU swap')]);
    const created = await app.inject({
      method: 'POST',
      url: '/v1/rollouts',
      headers: bearer('operator'),
      payload: { rolloutId: 'fw-asof', firmware: { component: 'BMC', version: '2.78', imageUri: 'https://images.example/bmc-2.78.bin' }, selector: { nodes: ['ta', 'tb'] }, seed: 1 },
    });
    expect(created.statusCode, created.body).toBe(201);
    for (let minute = 7; minute <= 9; minute += 1) await pollRound(minute, { ta: 'success', tc: 'timeout', td: 'timeout' });
    await record(); // 2: ta back, tc and td dark under PB, tc on 2.78 (drift), rollout awaiting approval

    const darkAlarm = (await openAlarms(harness.db, { includeFolded: true })).find((alarm) => alarm.nodeId === 'tc');
    const ack = await app.inject({ method: 'POST', url: `/v1/alarms/${encodeURIComponent(darkAlarm!.alarmId)}/ack`, headers: bearer('operator'), payload: { note: 'on it' } });
    expect(ack.statusCode, ack.body).toBe(201);
    const aborted = await app.inject({ method: 'POST', url: '/v1/rollouts/fw-asof/abort', headers: bearer('operator'), payload: { reason: 'wrong image' } });
    expect(aborted.statusCode, aborted.body).toBe(200);
    for (let minute = 10; minute <= 11; minute += 1) await pollRound(minute, { tc: 'success' });
    await record(); // 3: tc recovering, its alarm acknowledged by alice, rollout aborted

    // The log goes on after every moment asked about.
    for (let minute = 12; minute <= 15; minute += 1) await pollRound(minute, { tb: 'timeout', tc: 'success', td: 'success' });
    await append('node-ta', [inventory({ manufacturer: 'HPE', model: 'ProLiant DL380 Gen10 Plus', serial: 'SN-ta', bmcModel: 'iLO 5', bmcFirmware: 'iLO 5 v2.78' }, 900)]);
    await append('node-ta', [cordon('ta', 'late change')]);
    await caughtUp(harness.store, runner);
    now = new Date();
  }, 120_000);

  afterAll(async () => {
    await app?.close();
    await engine?.stop();
    await runner?.stop();
    await harness?.close();
  });

  it('as of each recorded position, every versioned table (key and versioned columns) equals what it held live then; what history does not keep is refused, not read from the present', async () => {
    expect(moments).toHaveLength(4);
    for (const moment of moments) expect(await engine.read(moment.point, projectionNames, (db) => versionedTables(db))).toEqual(moment.tables);
    // The moments differ: equality above is not a constant answer.
    expect(new Set(moments.map((m) => JSON.stringify(m.tables))).size).toBe(4);
    const refusal = (query: (db: Kysely<any>) => Promise<unknown>) => engine.read(moments[1]!.point, ['liveness'], query).then(() => null, (error: unknown) => (isAsOfError(error) ? error.code : error));
    expect(await refusal((db) => db.selectFrom('liveness_gaps').selectAll().execute())).toBe('ASOF_NOT_KEPT');
    expect(await refusal((db) => db.selectFrom('liveness_nodes').select('last_contact_at').execute())).toBe('ASOF_NOT_KEPT');
    expect(await refusal((db) => db.selectFrom('alarm_state').selectAll().execute())).toBe('ASOF_NOT_KEPT');
    expect(await engine.read(moments[1]!.point, ['topology'], async () => 1).catch((error: unknown) => (isAsOfError(error) ? error.code : error))).toBe('ASOF_NOT_KEPT');
  });

  it('as of each moment, dark nodes (with since), alarms, inventory counts and drift are what the live query functions answered then', async () => {
    for (const moment of moments) {
      const asked = await engine.read(moment.point, ['liveness', 'alarms', 'inventory', 'drift'], async (db) => ({
        dark: await darkNodes(db),
        alarms: await openAlarms(db, { includeFolded: true }),
        inventory: [await inventoryBy(db, 'manufacturer'), await inventoryBy(db, 'bmc_firmware')],
        drift: await driftFindings(db),
      }));
      expect(asked).toEqual({ dark: moment.dark, alarms: moment.alarms, inventory: moment.inventory, drift: moment.drift });
    }
    // The moments differ from each other and from now: equality above is not a constant answer.
    expect(moments.map((m) => (m.dark as Array<{ nodeId: string }>).map((n) => n.nodeId))).toEqual([[], ['ta'], ['tc', 'td'], []]);
    expect((await darkNodes(harness.db)).map((n) => n.nodeId)).toEqual(['tb']);
  });

  it('an instant stands for the last position recorded at or before it, and answers the same as that position', async () => {
    for (const moment of moments) {
      const exact = await engine.resolve(moment.point.recordedAt.toISOString());
      expect(exact).toEqual(moment.point);
      // A little later, before the next append: still the same position, and the answer says which instant was asked.
      const later = new Date(moment.point.recordedAt.getTime() + 2);
      const between = await engine.resolve(later.toISOString());
      expect(between).toEqual({ position: moment.point.position, recordedAt: moment.point.recordedAt, instant: later });
      expect(await engine.read(between, projectionNames, (db) => versionedTables(db))).toEqual(moment.tables);
    }
  });

  it('a point that cannot be answered is a typed error naming what was wrong', async () => {
    const head = await harness.store.head();
    const refusal = async (asOf: string) => {
      try {
        await engine.resolve(asOf);
      } catch (error) {
        if (isAsOfError(error)) return { code: error.code, details: error.details };
        throw error;
      }
      throw new Error(`${asOf} was answered`);
    };
    expect(await refusal('yesterday')).toMatchObject({ code: 'ASOF_INVALID_POINT', details: { value: 'yesterday' } });
    expect(await refusal('0')).toMatchObject({ code: 'ASOF_INVALID_POINT' });
    expect(await refusal('2026-02-30T00:00:00Z')).toMatchObject({ code: 'ASOF_INVALID_POINT' });
    expect(await refusal(String(head.position + 1))).toEqual({ code: 'ASOF_BEYOND_HEAD', details: { value: String(head.position + 1), position: head.position + 1, headPosition: head.position } });
    expect(await refusal('2999-01-01T00:00:00Z')).toMatchObject({ code: 'ASOF_IN_FUTURE', details: { value: '2999-01-01T00:00:00.000Z', headPosition: head.position } });
    expect(await refusal('2020-01-01T00:00:00Z')).toMatchObject({ code: 'ASOF_BEFORE_LOG', details: { value: '2020-01-01T00:00:00.000Z' } });
  });

  it('through the API, an analyst gets every query route as of a moment, by position and by instant, exactly as it was answered live then, and the answer names its position', async () => {
    for (const moment of moments) {
      for (const asOf of [String(moment.point.position), moment.point.recordedAt.toISOString()]) {
        for (const route of routes) {
          const live = moment.answers.get(route)!;
          const answer = await inject(url(route, moment, asOf));
          expect({ route, asOf, status: answer.statusCode }).toEqual({ route, asOf, status: live.status });
          if (live.status !== 200) continue;
          const body = answer.json();
          expect(body.asOf).toEqual({ position: moment.point.position, recordedAt: moment.point.recordedAt.toISOString(), instant: moment.point.recordedAt.toISOString() });
          expect(answer.headers['fleet-ledger-as-of-position']).toBe(String(moment.point.position));
          expect(answer.headers['fleet-ledger-as-of-recorded-at']).toBe(moment.point.recordedAt.toISOString());
          expect({ route, asOf, body: withoutAsOf(body) }).toEqual({ route, asOf, body: live.body });
        }
      }
    }
    // A route that needs what history does not keep is a 400 that says so, by position and by instant.
    for (const route of notKeptRoutes) {
      for (const asOf of [String(moments[1]!.point.position), moments[1]!.point.recordedAt.toISOString()]) {
        const refused = await inject(url(route, moments[1]!, asOf));
        expect({ route, status: refused.statusCode }).toEqual({ route, status: 400 });
        expect(refused.json().error).toMatchObject({ code: 'API_INVALID_REQUEST', details: { field: 'querystring.asOf', reason: expect.stringMatching(/ASOF_NOT_KEPT/) } });
        expect((await inject(url(route, moments[1]!))).statusCode).toBe(200);
      }
    }
    // The recorded answers are not all alike: the rollout appears, then is aborted.
    expect(moments.map((m) => (m.answers.get('/v1/rollouts')!.body as any).items.map((r: any) => r.status))).toEqual([[], [], ['awaiting-approval'], ['aborted']]);
  });

  it('a rollout as of a moment is its stream folded up to that moment', async () => {
    const [, before, planned, aborted] = moments;
    const missing = await inject(`/v1/rollouts/fw-asof?asOf=${before!.point.position}`);
    expect(missing.statusCode).toBe(404);
    const then = await inject(`/v1/rollouts/fw-asof?asOf=${planned!.point.position}`);
    expect(then.json()).toMatchObject({ rolloutId: 'fw-asof', status: 'awaiting-approval', asOf: { position: planned!.point.position } });
    expect(then.json().nodes.map((n: any) => [n.nodeId, n.state])).toEqual(expect.arrayContaining([['ta', 'pending'], ['tb', 'pending']]));
    expect((await inject(`/v1/rollouts/fw-asof?asOf=${aborted!.point.position}`)).json()).toMatchObject({ status: 'aborted', stopReason: 'wrong image' });
    expect((await inject('/v1/rollouts/fw-asof')).json().status).toBe('aborted');
  });

  it('an asOf that is malformed, in the future, beyond the head or before the log is a 400 naming querystring.asOf', async () => {
    const head = await harness.store.head();
    const cases: Array<[string, RegExp]> = [
      ['yesterday', /RFC 3339/],
      ['0', /RFC 3339/],
      ['2026-13-01T00:00:00Z', /RFC 3339/],
      ['2999-01-01T00:00:00Z', /ASOF_IN_FUTURE/],
      [String(head.position + 1000), /ASOF_BEYOND_HEAD/],
      ['2020-01-01T00:00:00Z', /ASOF_BEFORE_LOG/],
    ];
    for (const [asOf, reason] of cases) {
      for (const path of ['/v1/liveness/dark', '/v1/alarms', '/v1/rollouts']) {
        const refused = await inject(`${path}?asOf=${encodeURIComponent(asOf)}`);
        expect({ path, asOf, status: refused.statusCode }).toEqual({ path, asOf, status: 400 });
        expect(refused.json().error).toMatchObject({ code: 'API_INVALID_REQUEST', details: { field: 'querystring.asOf', reason: expect.stringMatching(reason) } });
      }
    }
    // The parameter is in the published OpenAPI document of every query route.
    const openapi = (await app.inject({ method: 'GET', url: '/openapi.json' })).json();
    for (const path of ['/v1/liveness/dark', '/v1/nodes/{nodeId}', '/v1/alarms/{alarmId}', '/v1/rollouts', '/v1/rollouts/{rolloutId}']) {
      expect(openapi.paths[path].get.parameters.map((p: any) => p.name)).toContain('asOf');
    }
  });

  it("an analyst's as-of questions write nothing: not the log, not the live read models, and not through the view", async () => {
    const head = await harness.store.head();
    const tables = fleetProjections(options).flatMap((projection) => projection.tables);
    const live = await snapshot(harness.db, tables);
    for (const moment of moments) expect((await inject(`/v1/nodes/ta?asOf=${moment.point.position}`)).statusCode).toBe(200);
    expect(await harness.store.head()).toEqual(head);
    expect(await snapshot(harness.db, tables)).toEqual(live);
    // The views are read in a READ ONLY transaction, and they are views over the versions: a query that tries to write
    // is refused by PostgreSQL (by the transaction, or by the view that is no table).
    await expect(engine.read(moments[1]!.point, ['liveness'], (db) => db.deleteFrom('liveness_nodes').execute())).rejects.toThrow(/read-only transaction|cannot delete from view/);
    expect((await app.inject({ method: 'POST', url: '/v1/rollouts/fw-asof/approve', headers: bearer('analyst'), payload: { reason: 'x' } })).statusCode).toBe(403);
  });

  it("a node's history is its liveness states, observed inventory and alarms as intervals that chain without gaps, through the API and fleet-ledger history", async () => {
    const answer = await inject('/v1/nodes/ta/history');
    expect(answer.statusCode, answer.body).toBe(200);
    const history = answer.json();
    // ta: registered, healthy, late at the first miss, dark at the third, healthy after two contacts.
    expect(history.liveness.map((i: any) => i.state)).toEqual(['never-contacted', 'healthy', 'late', 'dark', 'healthy']);
    expect(history.inventory.map((i: any) => i.bmcFirmware)).toEqual([null, 'iLO 5 v2.72', 'iLO 5 v2.78']);
    for (const intervals of [history.liveness, history.inventory]) {
      for (let i = 1; i < intervals.length; i += 1) expect([intervals[i - 1].toPosition, intervals[i - 1].to]).toEqual([intervals[i].fromPosition, intervals[i].from]);
      expect(intervals[intervals.length - 1]).toMatchObject({ to: null, toPosition: null });
    }
    // Its dark alarm opened by the event that made it dark and closed by the one that brought it back.
    const dark = history.liveness[3];
    expect(history.alarms.filter((a: any) => a.kind === 'node-dark')).toEqual([expect.objectContaining({ fromPosition: dark.fromPosition, toPosition: dark.toPosition, from: dark.from, to: dark.to })]);
    // And its drift alarm (the BMC firmware differs from its declaration), open still.
    expect(history.alarms.filter((a: any) => a.kind === 'drift')).toEqual([expect.objectContaining({ to: null, toPosition: null, closedAt: null })]);
    // The interval holding a moment is the state recorded live then.
    const atMoment1 = history.liveness.find((i: any) => i.fromPosition <= moments[1]!.point.position && (i.toPosition === null || i.toPosition > moments[1]!.point.position));
    expect(atMoment1.state).toBe((moments[1]!.answers.get('/v1/liveness/nodes/ta')!.body as any).state);
    // A window keeps what overlaps it.
    const late = await inject(`/v1/nodes/ta/history?from=${encodeURIComponent(moments[3]!.point.recordedAt.toISOString())}`);
    expect(late.json().liveness.map((i: any) => i.state)).toEqual(['healthy']);
    expect(late.json().alarms.map((a: any) => a.kind)).toEqual(['drift']);
    expect((await inject('/v1/nodes/nobody/history')).statusCode).toBe(404);
    const reversed = await inject('/v1/nodes/ta/history?from=2026-12-02T00:00:00Z&to=2026-12-01T00:00:00Z');
    expect([reversed.statusCode, reversed.json().error.details.field]).toEqual([400, 'querystring.from']);
    const openapi = (await app.inject({ method: 'GET', url: '/openapi.json' })).json();
    expect(openapi.paths['/v1/nodes/{nodeId}/history'].get.parameters.map((p: any) => p.name)).toEqual(expect.arrayContaining(['from', 'to', 'nodeId']));

    const base = await baseUrl();
    let stdout = '';
    const out = vi.spyOn(process.stdout, 'write').mockImplementation((chunk: any) => ((stdout += String(chunk)), true));
    let code: number;
    try {
      code = await historyCommand.run(['ta', '--url', base, '--token', tokens.analyst]);
    } finally {
      out.mockRestore();
    }
    expect(code).toBe(0);
    expect(stdout).toMatch(/liveness: 5[\s\S]*dark[\s\S]*inventory: 3[\s\S]*iLO 5 v2\.78[\s\S]*alarms: 2[\s\S]*node-dark/);
  });

  it('fleet-ledger replay at WHEN WHAT prints the fleet as of WHEN and the position it reflects', async () => {
    const base = await baseUrl();
    const run = async (...argv: string[]) => {
      let stdout = '';
      let stderr = '';
      const out = vi.spyOn(process.stdout, 'write').mockImplementation((chunk: any) => ((stdout += String(chunk)), true));
      const err = vi.spyOn(process.stderr, 'write').mockImplementation((chunk: any) => ((stderr += String(chunk)), true));
      try {
        return { code: await replay.run([...argv, '--url', base, '--token', tokens.analyst]), stdout, stderr };
      } finally {
        out.mockRestore();
        err.mockRestore();
      }
    };
    const moment = moments[2]!;
    const dark = await run('at', String(moment.point.position), 'dark');
    expect(dark.code, dark.stderr).toBe(0);
    expect(dark.stdout).toContain(`dark nodes as of position ${moment.point.position} (recorded ${moment.point.recordedAt.toISOString()}): 2`);
    expect(dark.stdout).toMatch(/\btc\b[\s\S]*\btd\b/);
    const json = await run('at', moment.point.recordedAt.toISOString(), 'alarms', '--all', '--json');
    expect(json.code, json.stderr).toBe(0);
    const parsed = JSON.parse(json.stdout);
    expect(parsed.asOf).toEqual({ position: moment.point.position, recordedAt: moment.point.recordedAt.toISOString(), instant: moment.point.recordedAt.toISOString() });
    expect(parsed.items.map((a: any) => a.alarmId)).toEqual((moment.alarms as Array<{ alarmId: string }>).map((a) => a.alarmId));
    const rollouts = await run('at', String(moments[3]!.point.position), 'rollouts');
    expect(rollouts.stdout).toMatch(/rollouts as of position \d+ .*: 1\n[\s\S]*fw-asof\s+aborted/);
    const inventoryByFirmware = await run('at', String(moments[0]!.point.position), 'inventory', '--by', 'bmc_firmware');
    expect(inventoryByFirmware.stdout).toMatch(/iLO 5 v2\.72\s+4/);
    const future = await run('at', '2999-01-01T00:00:00Z', 'dark');
    expect(future.code).toBe(1);
    expect(future.stderr).toContain('API_INVALID_REQUEST');
    expect((await run('at', '12', 'weather')).code).toBe(2);
    expect((await run('at', '12', 'dark', '--by', 'model')).code).toBe(2);
    // timeline and diff are the history commands', dispatched to their own module.
    const timeline = await run('timeline', '--help');
    expect(timeline.code).toBe(0);
    expect(timeline.stdout).toMatch(/timeline/);
  });

});
