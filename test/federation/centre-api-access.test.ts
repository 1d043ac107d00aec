/**
 * The centre's API answers the fleet only to a caller with a token of a role that reads read models; the costly
 * rebuild check only to an operator or an auditor. `/healthz` stays public. The refusals come before any answer is
 * computed: the centre behind them is never asked.
 */
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TokenTable } from '../../src/api/index.js';
import { serveCentreApi, type Centre } from '../../src/federation/index.js';

const tokens = new TokenTable([
  { token: 'analyst-token', principal: 'ana', role: 'analyst' },
  { token: 'agent-token', principal: 'gpu-host', role: 'agent', nodes: ['*'] },
]);
// Every refusal here happens at the door; a centre that is asked anything fails the test.
const unreachable = new Proxy({}, { get: (_target, property) => { throw new Error(`the centre was asked for ${String(property)}`); } }) as unknown as Centre;

describe('the centre API door', () => {
  let url = '';
  let close: () => Promise<void> = async () => undefined;
  beforeAll(async () => {
    const app = await serveCentreApi(unreachable, { port: 0, tokens });
    url = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
    close = () => app.close();
  });
  afterAll(() => close());

  const get = async (path: string, token?: string) => {
    const response = await fetch(`${url}${path}`, token ? { headers: { authorization: `Bearer ${token}` } } : {});
    return { status: response.status, body: (await response.json()) as { error?: { code: string } } };
  };

  it('refuses the fleet without a token (401), with an unknown one (401) and to a role that reads no read models (403)', async () => {
    expect(await get('/v1/fleet/sites')).toMatchObject({ status: 401, body: { error: { code: 'API_UNAUTHORIZED' } } });
    expect(await get('/v1/fleet/nodes?state=dark', 'not-a-token')).toMatchObject({ status: 401, body: { error: { code: 'API_UNAUTHORIZED' } } });
    expect(await get('/v1/fleet/alarms', 'agent-token')).toMatchObject({ status: 403, body: { error: { code: 'API_FORBIDDEN' } } });
    expect(await get('/healthz')).toMatchObject({ status: 200, body: { ok: true } });
  });

  it('takes intents (forwarded to sites) only from a role that may ask intents, and exports logs only to auditors', async () => {
    const post = await fetch(`${url}/v1/nodes/ams1-n1/cordon`, { method: 'POST', headers: { authorization: 'Bearer analyst-token', 'content-type': 'application/json' }, body: JSON.stringify({ reason: 'x' }) });
    expect({ status: post.status, body: await post.json() }).toMatchObject({ status: 403, body: { error: { code: 'API_FORBIDDEN' } } });
    const plan = await fetch(`${url}/v1/fleet/rollouts`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    expect(plan.status).toBe(401);
    expect(await get('/v1/fleet/audit/export?site=ams1', 'analyst-token')).toMatchObject({ status: 403, body: { error: { code: 'API_FORBIDDEN' } } });
  });

  it('keeps the rebuild check, which rebuilds every site, to operators and auditors', async () => {
    expect(await get('/v1/fleet/rebuild-check', 'analyst-token')).toMatchObject({ status: 403, body: { error: { code: 'API_FORBIDDEN' } } });
  });
});
