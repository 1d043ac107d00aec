import { spawnSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { systemTools } from '../support/system-tool.js';
import { buildApi } from '../../src/api/index.js';
import { EventStore } from '../../src/ledger/index.js';
import { freshDatabase } from '../support/backends.js';
import { bearer, openApiHarness, registration, tokenTable, type ApiHarness } from './support/api-harness.js';

const promtool = systemTools(['promtool'], 'apt-get install prometheus');

describe('health, readiness, metrics and the OpenAPI document', () => {
  let h: ApiHarness;
  beforeAll(async () => {
    h = await openApiHarness();
    await h.app.inject({ method: 'POST', url: '/v1/nodes', headers: bearer('operator'), payload: registration('dc1-r01-n01') });
    await h.caughtUp();
  });
  afterAll(async () => h?.close());

  it('healthz answers while the process runs; readyz when the store answers and projections keep up', async () => {
    expect((await h.app.inject({ method: 'GET', url: '/healthz' })).json()).toEqual({ status: 'ok' });
    const ready = await h.app.inject({ method: 'GET', url: '/readyz' });
    expect(ready.statusCode).toBe(200);
    expect(ready.json()).toMatchObject({ status: 'ready', reasons: [], headPosition: 1 });
    expect(ready.json().projections.map((p: any) => p.name).sort()).toEqual(['alarms', 'drift', 'inventory', 'liveness', 'topology']);
  });

  it.skipIf(!promtool.runnable)(promtool.title('the metrics exposition passes promtool check metrics'), async () => {
    promtool.require();
    const response = await h.app.inject({ method: 'GET', url: '/metrics' });
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toMatch(/^text\/plain/);
    const text = response.body;
    for (const name of ['fleet_ledger_appends_total', 'fleet_ledger_group_commit_one_round_trip_total', 'fleet_ledger_group_commit_last_batch_appends', 'fleet_ledger_api_append_duration_seconds_bucket', 'fleet_ledger_projection_lag_positions{projection="liveness"}', 'fleet_ledger_dark_nodes', 'fleet_ledger_head_position 1']) {
      expect(text).toContain(name);
    }
    const check = spawnSync('promtool', ['check', 'metrics'], { input: text, encoding: 'utf8' });
    expect(check.error).toBeUndefined();
    expect(`${check.stdout}${check.stderr}`.trim()).toBe('');
    expect(check.status).toBe(0);
  });

  it('the OpenAPI document lists every route with its parameters, and /docs serves the reference', async () => {
    const document = (await h.app.inject({ method: 'GET', url: '/openapi.json' })).json();
    expect(document.openapi).toMatch(/^3\./);
    for (const path of ['/v1/nodes', '/v1/nodes/{nodeId}/cordon', '/v1/ebom', '/v1/liveness/nodes', '/v1/events', '/v1/events/live', '/v1/verify', '/v1/observations']) {
      expect(document.paths[path], path).toBeDefined();
    }
    expect(document.paths['/v1/nodes'].post.requestBody.content['application/json'].schema.properties.bmc).toBeDefined();
    const docs = await h.app.inject({ method: 'GET', url: '/docs/' });
    expect(docs.statusCode).toBe(200);
  });

  it('an unknown route is 404 in the error shape', async () => {
    const response = await h.app.inject({ method: 'GET', url: '/v1/nothing-here' });
    expect(response.statusCode).toBe(404);
    expect(response.json().error.code).toBe('API_NOT_FOUND');
  });

  it('before the projections ever ran, a read answers 503 API_NOT_READY instead of an internal error', async () => {
    const database = await freshDatabase(inject('embeddedAdminUrl'));
    const store = await EventStore.open({ connectionString: database.url });
    const app = await buildApi({ store, tokens: tokenTable });
    try {
      const response = await app.inject({ method: 'GET', url: '/v1/liveness/nodes', headers: bearer('analyst') });
      expect(response.statusCode).toBe(503);
      expect(response.json().error.code).toBe('API_NOT_READY');
    } finally {
      await app.close();
      await store.close();
      await database.drop();
    }
  });
});
