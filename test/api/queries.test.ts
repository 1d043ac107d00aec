import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, openApiHarness, registration, tokens, type ApiHarness } from './support/api-harness.js';

const poller = { kind: 'system', id: 'poller' } as const;

function polls(at: Date, outcomes: Array<[string, string]>) {
  return {
    type: 'PollOutcomesRecorded',
    data: {
      site: 'dc1',
      windowStart: at.toISOString(),
      nodeIds: outcomes.map(([n]) => n),
      work: outcomes.map(() => 'liveness'),
      outcomes: outcomes.map(([, o]) => o),
      latencyMs: outcomes.map(() => 10),
      offsetMs: outcomes.map((_, i) => i),
    },
    actor: poller,
  };
}

async function pages(h: ApiHarness, url: string): Promise<{ items: any[]; count: number }> {
  const items: any[] = [];
  let cursor: string | null = null;
  let count = 0;
  do {
    const separator = url.includes('?') ? '&' : '?';
    const response: { statusCode: number; body: string; json: () => any } = await h.app.inject({ method: 'GET', url: `${url}${cursor ? `${separator}cursor=${encodeURIComponent(cursor)}` : ''}`, headers: bearer('analyst') });
    expect(response.statusCode, response.body).toBe(200);
    const body: { items: any[]; nextCursor: string | null } = response.json();
    items.push(...body.items);
    cursor = body.nextCursor;
    count += 1;
  } while (cursor);
  return { items, count };
}

describe('analyst queries over HTTP', () => {
  let h: ApiHarness;
  const nodes = ['dc1-r01-n01', 'dc1-r01-n02', 'dc1-r01-n03', 'dc1-r02-n01', 'dc1-r02-n02', 'dc1-r02-n03', 'dc1-r02-n04'];

  beforeAll(async () => {
    h = await openApiHarness();
    for (const node of nodes) {
      const response = await h.app.inject({ method: 'POST', url: '/v1/nodes', headers: bearer('operator'), payload: registration(node, node.split('-')[1]) });
      expect(response.statusCode).toBe(201);
    }
    const t0 = Date.now() - 600_000;
    // r02 goes dark: three misses after one contact (darkAfterMisses: 3 in the harness).
    await h.store.append('polls-dc1', [polls(new Date(t0), nodes.map((n) => [n, 'success']))]);
    for (let i = 1; i <= 3; i += 1) {
      await h.store.append('polls-dc1', [polls(new Date(t0 + i * 60_000), nodes.map((n) => [n, n.includes('-r02-') ? 'timeout' : 'success']))]);
    }
    await h.caughtUp();
  });
  afterAll(async () => h?.close());

  it('every list is cursor-paged: the pages hold every node once', async () => {
    const { items, count } = await pages(h, '/v1/liveness/nodes?limit=3');
    expect(count).toBe(3);
    expect(items.map((n) => n.nodeId)).toEqual([...nodes].sort());
    const dark = await pages(h, '/v1/liveness/dark?limit=1');
    expect(dark.items.map((n) => n.nodeId).sort()).toEqual(nodes.filter((n) => n.includes('-r02-')));
    expect(dark.count).toBe(4);
  });

  it('liveness tells dark from healthy, with the time since last contact', async () => {
    const dark = await h.app.inject({ method: 'GET', url: '/v1/liveness/nodes?state=dark', headers: bearer('analyst') });
    const items = dark.json().items;
    expect(items).toHaveLength(4);
    expect(items[0].secondsSinceLastContact).toBeGreaterThan(500);
    const summary = await h.app.inject({ method: 'GET', url: '/v1/liveness/summary', headers: bearer('analyst') });
    expect(summary.json().states).toEqual({ healthy: 3, dark: 4 });
    const gaps = await h.app.inject({ method: 'GET', url: '/v1/liveness/gaps?rack=r02&from=2020-01-01T00:00:00Z', headers: bearer('analyst') });
    expect(gaps.statusCode).toBe(200);
    expect(gaps.json().items).toHaveLength(4);
    expect(gaps.json().items[0]).toMatchObject({ rack: 'r02', endAt: null, wentDark: true });
  });

  it("a node's view gathers liveness, inventory, drift and alarms; an unknown node is 404", async () => {
    const view = await h.app.inject({ method: 'GET', url: '/v1/nodes/dc1-r02-n01', headers: bearer('analyst') });
    expect(view.statusCode).toBe(200);
    expect(view.json()).toMatchObject({ nodeId: 'dc1-r02-n01', liveness: { state: 'dark', rack: 'r02' }, drift: [] });
    expect(Array.isArray(view.json().alarms)).toBe(true);
    const missing = await h.app.inject({ method: 'GET', url: '/v1/nodes/nobody', headers: bearer('analyst') });
    expect(missing.statusCode).toBe(404);
    expect(missing.json().error.code).toBe('API_NOT_FOUND');
  });

  it('inventory, heterogeneity, drift, compliance and alarms answer as pages', async () => {
    for (const url of ['/v1/liveness/overdue', '/v1/inventory?by=manufacturer', '/v1/inventory/nodes?manufacturer=HPE', '/v1/inventory/heterogeneity', '/v1/inventory/firmware/BMC', '/v1/drift', '/v1/compliance', '/v1/compliance/nodes', '/v1/alarms']) {
      const response = await h.app.inject({ method: 'GET', url, headers: bearer('analyst') });
      expect(response.statusCode, `${url}: ${response.body}`).toBe(200);
      expect(response.json(), url).toMatchObject({ items: expect.any(Array), nextCursor: null });
    }
    const alarms = await h.app.inject({ method: 'GET', url: '/v1/alarms?includeFolded=true', headers: bearer('analyst') });
    expect(alarms.json().items.filter((a: any) => a.kind === 'node-dark')).toHaveLength(4);
  });

  it('a bad cursor or filter is 400 naming the parameter', async () => {
    const cursor = await h.app.inject({ method: 'GET', url: '/v1/liveness/nodes?cursor=garbage', headers: bearer('analyst') });
    expect(cursor.statusCode).toBe(400);
    expect(cursor.json().error.details.field).toBe('querystring.cursor');
    const limit = await h.app.inject({ method: 'GET', url: '/v1/liveness/nodes?limit=0', headers: bearer('analyst') });
    expect(limit.json().error.details.field).toBe('querystring.limit');
    const by = await h.app.inject({ method: 'GET', url: '/v1/inventory?by=colour', headers: bearer('analyst') });
    expect(by.json().error.details.field).toBe('querystring.by');
    const gaps = await h.app.inject({ method: 'GET', url: '/v1/liveness/gaps', headers: bearer('analyst') });
    expect(gaps.json().error.details.field).toBe('querystring.nodeId');
  });

  it('projections are for operators, analysts and admins: an auditor or agent is 403, no token 401; ?token= is accepted on read routes', async () => {
    expect((await h.app.inject({ method: 'GET', url: '/v1/liveness/nodes', headers: bearer('auditor') })).statusCode).toBe(403);
    expect((await h.app.inject({ method: 'GET', url: '/v1/liveness/nodes', headers: bearer('agent') })).statusCode).toBe(403);
    expect((await h.app.inject({ method: 'GET', url: '/v1/liveness/nodes' })).statusCode).toBe(401);
    expect((await h.app.inject({ method: 'GET', url: '/v1/liveness/nodes', headers: bearer('admin') })).statusCode).toBe(200);
    expect((await h.app.inject({ method: 'GET', url: `/v1/liveness/nodes?token=${tokens.analyst}` })).statusCode).toBe(200);
  });

  it('operators read what they act on: nodes, liveness, alarms, drift, compliance and rollouts, with the operator token alone', async () => {
    for (const url of ['/v1/liveness/nodes', '/v1/liveness/dark', '/v1/liveness/summary', '/v1/nodes/dc1-r02-n01', '/v1/alarms', '/v1/drift', '/v1/compliance', '/v1/inventory/heterogeneity', '/v1/rollouts', `/v1/liveness/nodes?token=${tokens.operator}`]) {
      const answer = await h.app.inject({ method: 'GET', url, headers: url.includes('token=') ? {} : bearer('operator') });
      expect(answer.statusCode, `${url}: ${answer.body}`).toBe(200);
    }
    const alarms = (await h.app.inject({ method: 'GET', url: '/v1/alarms?includeFolded=true', headers: bearer('operator') })).json().items;
    expect(alarms.length).toBeGreaterThan(0);
    // Payload-level reads stay the auditors': the log's pages and a stream's events are refused to an operator.
    expect((await h.app.inject({ method: 'GET', url: '/v1/events', headers: bearer('operator') })).statusCode).toBe(403);
    expect((await h.app.inject({ method: 'GET', url: '/v1/streams/node-dc1-r01-n01', headers: bearer('operator') })).statusCode).toBe(403);
  });

  it('an alarm can be acknowledged by an operator, and the ack shows on the alarm', async () => {
    const alarms = (await h.app.inject({ method: 'GET', url: '/v1/alarms?includeFolded=true', headers: bearer('analyst') })).json().items;
    const alarmId = alarms[0].alarmId as string;
    const ack = await h.app.inject({ method: 'POST', url: `/v1/alarms/${encodeURIComponent(alarmId)}/ack`, headers: bearer('operator'), payload: { note: 'on it' } });
    expect(ack.statusCode).toBe(201);
    await h.caughtUp();
    const alarm = await h.app.inject({ method: 'GET', url: `/v1/alarms/${encodeURIComponent(alarmId)}`, headers: bearer('analyst') });
    expect(alarm.json()).toMatchObject({ alarmId, acknowledgedBy: 'alice' });
  });

  it('acknowledging an acknowledged alarm records nothing and answers 200 with the acknowledgement position', async () => {
    const alarms = (await h.app.inject({ method: 'GET', url: '/v1/alarms?includeFolded=true', headers: bearer('analyst') })).json().items;
    const alarmId = alarms[0].alarmId as string;
    const ack = () => h.app.inject({ method: 'POST', url: `/v1/alarms/${encodeURIComponent(alarmId)}/ack`, headers: bearer('operator'), payload: { note: 'seen' } });
    const first = await ack();
    expect([200, 201]).toContain(first.statusCode); // the test above may have acknowledged it already
    const head = await h.head();
    const again = await ack();
    expect(again.statusCode).toBe(200);
    expect(again.json()).toMatchObject({ unchanged: true, idempotentReplay: false, position: first.json().position, stream: first.json().stream });
    expect(await h.head()).toBe(head);
  });
});
