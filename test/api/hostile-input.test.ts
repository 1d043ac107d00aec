/**
 * One bad caller never stops the others: hostile input is refused alone, with a 400 naming the field, while good
 * appends batched beside it are recorded, and the projections go on.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agentMayReportFor, buildApi } from '../../src/api/index.js';
import { LedgerError } from '../../src/ledger/index.js';
import { bearer, openApiHarness, registration, tokenTable, type ApiHarness } from './support/api-harness.js';

describe('hostile input over HTTP', () => {
  let h: ApiHarness;
  beforeAll(async () => {
    h = await openApiHarness();
    const created = await h.app.inject({ method: 'POST', url: '/v1/nodes', headers: bearer('operator'), payload: registration('dc1-r01-n01') });
    expect(created.statusCode).toBe(201);
  });
  afterAll(async () => h?.close());

  it('an instant PostgreSQL cannot store (year 0, 30 February) fails alone with 400 naming the field; good appends in the same group commit are recorded', async () => {
    const before = await h.head();
    const send = (url: string, payload: Record<string, unknown>, role: 'operator' | 'agent' = 'operator') => h.app.inject({ method: 'POST', url, headers: bearer(role), payload });
    // All in flight at once, so they join the same group commit when they reach the store.
    const [yearZero, february, badObservedAt, good1, good2] = await Promise.all([
      send('/v1/nodes/dc1-r01-n01/maintenance', { from: '0000-01-01T00:00:00Z', until: '2026-03-02T09:00:00Z', reason: 'x' }),
      send('/v1/nodes/dc1-r01-n01/maintenance', { from: '2026-02-30T00:00:00Z', until: '2026-03-02T09:00:00Z', reason: 'x' }),
      send('/v1/observations', { nodeId: 'dc1-r01-n01', source: 'agent', observedAt: '0000-01-01T00:00:00Z', observations: [{ type: 'GpuXidObserved', data: xid() }] }, 'agent'),
      send('/v1/nodes/dc1-r01-n01/cordon', { reason: 'fan noise' }),
      send('/v1/observations', { nodeId: 'dc1-r01-n01', source: 'agent', observations: [{ type: 'GpuXidObserved', data: xid() }] }, 'agent'),
    ]);
    expect(yearZero.statusCode).toBe(400);
    expect(yearZero.json().error).toMatchObject({ code: 'API_INVALID_REQUEST', details: { field: 'body.from' } });
    expect(yearZero.json().error.message).toMatch(/between 1970-01-01 and 9999-12-31/);
    expect(february.statusCode).toBe(400);
    expect(february.json().error.details.field).toBe('body.from');
    expect(badObservedAt.statusCode).toBe(400);
    expect(badObservedAt.json().error.details.field).toBe('body.observedAt');
    expect(good1.statusCode).toBe(201);
    expect(good2.statusCode).toBe(201);
    expect(await h.head()).toBe(before + 2);
    await h.caughtUp();
  });

  it('the store refuses an unstorable observedAt from any caller (not only the API) before it joins a batch', async () => {
    const before = await h.head();
    const event = (observedAt: string) => ({ type: 'NodeCordoned', data: { nodeId: 'dc1-r01-n01', reason: 'x' }, observedAt, actor: { kind: 'system' as const, id: 'test' } });
    const [bad, late, good] = await Promise.allSettled([
      h.store.append('node-dc1-r01-n01', [event('0000-01-01T00:00:00Z')]),
      h.store.append('node-dc1-r01-n01', [event('+010000-01-01T00:00:00Z')]),
      h.store.append('node-dc1-r01-n01', [event('2026-03-02T09:00:00Z')]),
    ]);
    expect(bad).toMatchObject({ status: 'rejected', reason: { code: 'LEDGER_INVALID_EVENT', details: { issues: [{ path: 'observedAt' }] } } });
    expect(late).toMatchObject({ status: 'rejected', reason: { code: 'LEDGER_INVALID_EVENT' } });
    expect(good.status).toBe('fulfilled');
    expect(await h.head()).toBe(before + 1);
  });

  it('an event a projection set aside is an open alarm operators see, naming the projection, the event and the reason', async () => {
    await h.store.append('projection-liveness', [
      {
        type: 'ProjectionEventSetAside',
        data: { projection: 'liveness', projectionVersion: 2, position: 3, eventId: '01a23ce6-07f1-7b4a-b29c-ad6ae30309d9', type: 'MaintenanceWindowSet', stream: 'node-dc1-r01-n01', reason: 'date/time field value out of range' },
        actor: { kind: 'system', id: 'projection-runner' },
      },
    ]);
    await h.caughtUp();
    const alarms = await h.app.inject({ method: 'GET', url: '/v1/alarms?kind=projection-set-aside', headers: bearer('analyst') });
    expect(alarms.statusCode).toBe(200);
    expect(alarms.json().items).toEqual([
      expect.objectContaining({ alarmId: 'set-aside:liveness:3', kind: 'projection-set-aside', nodeId: 'dc1-r01-n01', summary: expect.stringContaining('date/time field value out of range') }),
    ]);
  });
});

function xid(): unknown {
  return {
    source: 'agent',
    dialect: 'kernel-log',
    unrecognized: [],
    events: [{ xid: 79, pciBusId: '0000:17:00.0', message: 'GPU has fallen off the bus', meaning: 'GPU has fallen off the bus', severity: 'critical', recommendedAction: 'reset the GPU' }],
  };
}

describe('agent tokens over HTTP', () => {
  let h: ApiHarness;
  beforeAll(async () => {
    h = await openApiHarness();
  });
  afterAll(async () => h?.close());

  it('an agent reports in-band GPU observations for the nodes its token names, and nothing else: other nodes and BMC-side types are 403, nothing stored', async () => {
    const before = await h.head();
    const post = (nodeId: string, type: string, data: unknown) =>
      h.app.inject({ method: 'POST', url: '/v1/observations', headers: bearer('agent'), payload: { nodeId, source: 'agent', observations: [{ type, data }] } });
    const own = await post('dc1-r02-n03', 'GpuXidObserved', xid());
    expect(own.statusCode).toBe(201);
    const foreignNode = await post('fra2-r01-n01', 'GpuXidObserved', xid());
    expect(foreignNode.statusCode).toBe(403);
    expect(foreignNode.json().error.message).toMatch(/may not report for node fra2-r01-n01/);
    const firmware = await post('dc1-r02-n03', 'FirmwareInventoryObserved', { source: 'agent', dialect: 'x', unrecognized: [], components: [] });
    expect(firmware.statusCode).toBe(403);
    expect(firmware.json().error.message).toMatch(/observations\.0\.type is FirmwareInventoryObserved/);
    // A dot in a pattern is a dot, not "any character".
    expect(agentMayReportFor({ id: 'a', role: 'agent', nodes: ['dc1.r1-*'] }, 'dc1xr1-n1')).toBe(false);
    expect(agentMayReportFor({ id: 'a', role: 'agent', nodes: ['dc1.r1-*'] }, 'dc1.r1-n1')).toBe(true);
    expect(agentMayReportFor({ id: 'a', role: 'agent' }, 'dc1.r1-n1')).toBe(false);
    expect(await h.head()).toBe(before + 1);
  });
});

describe("the database's own error text stays in the log", () => {
  it('a 503 from the store names the code and whether to retry, never the database error text; /readyz (public) neither', async () => {
    const h = await openApiHarness();
    try {
      const secretText = 'connect ECONNREFUSED 10.20.30.40:5432 (user fleet_ledger_app)';
      const broken = new Proxy(h.store, {
        get(target, property, receiver) {
          if (property === 'append') return async () => Promise.reject(new LedgerError('LEDGER_STORE_UNAVAILABLE', { operation: 'append', cause: secretText }, `append transaction failed: ${secretText}`));
          if (property === 'head') return async () => Promise.reject(Object.assign(new Error(secretText), { code: 'ECONNREFUSED' }));
          // Bound to the store itself: its private fields are not the proxy's (an intent's decider reads the node's
          // stream before it appends).
          const value: unknown = Reflect.get(target, property, receiver);
          return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
        },
      });
      const app = await buildApi({ store: broken, runner: h.runner, tokens: tokenTable });
      await app.ready();
      const response = await app.inject({ method: 'POST', url: '/v1/nodes', headers: bearer('operator'), payload: registration('dc1-r09-n01') });
      expect(response.statusCode).toBe(503);
      expect(response.json().error).toMatchObject({ code: 'LEDGER_STORE_UNAVAILABLE', details: { retryable: true } });
      expect(response.body).not.toContain('10.20.30.40');
      const ready = await app.inject({ method: 'GET', url: '/readyz' });
      expect(ready.statusCode).toBe(503);
      expect(ready.body).not.toContain('10.20.30.40');
      expect(ready.json().reasons).toEqual(['store unreachable (ECONNREFUSED)']);
      await app.close();
    } finally {
      await h.close();
    }
  });
});
