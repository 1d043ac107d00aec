import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, openApiHarness, principals, registration, type ApiHarness } from './support/api-harness.js';

describe('operator intents over HTTP', () => {
  let h: ApiHarness;
  beforeAll(async () => {
    h = await openApiHarness();
  });
  afterAll(async () => h?.close());

  it('an intent is recorded with the principal who asked and answered with its position', async () => {
    const response = await h.app.inject({ method: 'POST', url: '/v1/nodes', headers: bearer('operator'), payload: registration('dc1-r01-n01') });
    expect(response.statusCode).toBe(201);
    const body = response.json();
    expect(body).toMatchObject({ stream: 'node-dc1-r01-n01', streamVersion: 1, idempotentReplay: false });
    const [event] = await h.store.readAll({ fromPosition: body.position, limit: 1 });
    expect(event).toMatchObject({ type: 'NodeRegistered', stream: 'node-dc1-r01-n01', actor: { kind: 'operator', id: principals.operator, role: 'operator' } });
  });

  it('a missing or unknown token is 401 and a wrong role is 403, with a stable code', async () => {
    const missing = await h.app.inject({ method: 'POST', url: '/v1/nodes', payload: registration('x1') });
    expect(missing.statusCode).toBe(401);
    expect(missing.json()).toEqual({ error: { code: 'API_UNAUTHORIZED', message: expect.any(String), details: { reason: 'missing' } } });
    const unknown = await h.app.inject({ method: 'POST', url: '/v1/nodes', headers: { authorization: 'Bearer not-a-configured-token' }, payload: registration('x1') });
    expect(unknown.statusCode).toBe(401);
    expect(unknown.json().error.code).toBe('API_UNAUTHORIZED');
    for (const role of ['analyst', 'auditor', 'agent'] as const) {
      const forbidden = await h.app.inject({ method: 'POST', url: '/v1/nodes', headers: bearer(role), payload: registration('x1') });
      expect(forbidden.statusCode).toBe(403);
      expect(forbidden.json().error).toMatchObject({ code: 'API_FORBIDDEN', details: { role } });
    }
    const admin = await h.app.inject({ method: 'POST', url: '/v1/nodes', headers: bearer('admin'), payload: registration('dc1-r01-admin') });
    expect(admin.statusCode).toBe(201);
  });

  it('a token in the query string is not accepted on intent routes', async () => {
    const response = await h.app.inject({ method: 'POST', url: '/v1/nodes?token=test-operator-token-0001', payload: registration('x2') });
    expect(response.statusCode).toBe(401);
  });

  it('a bad body is 400 naming the field, and nothing is appended', async () => {
    const before = await h.head();
    const bad = { ...registration('dc1-r01-n09'), bmc: { protocol: 'telnet', address: 'x', credentialRef: 'c' } };
    const response = await h.app.inject({ method: 'POST', url: '/v1/nodes', headers: bearer('operator'), payload: bad });
    expect(response.statusCode).toBe(400);
    expect(response.json().error).toMatchObject({ code: 'API_INVALID_REQUEST', details: { field: 'body.bmc.protocol' } });
    const badId = await h.app.inject({ method: 'POST', url: '/v1/nodes/bad%20id/cordon', headers: bearer('operator'), payload: { reason: 'x' } });
    expect(badId.statusCode).toBe(400);
    expect(badId.json().error.details.field).toBe('params.nodeId');
    const noReason = await h.app.inject({ method: 'POST', url: '/v1/nodes/dc1-r01-n01/cordon', headers: bearer('operator'), payload: {} });
    expect(noReason.json().error.details.field).toBe('body.reason');
    const notJson = await h.app.inject({ method: 'POST', url: '/v1/nodes', headers: { ...bearer('operator'), 'content-type': 'application/json' }, payload: '{"nodeId":' });
    expect(notJson.statusCode).toBe(400);
    expect(notJson.json().error.code).toBe('API_INVALID_REQUEST');
    const window = await h.app.inject({
      method: 'POST',
      url: '/v1/nodes/dc1-r01-n01/maintenance',
      headers: bearer('operator'),
      payload: { from: '2026-03-02T10:00:00Z', until: '2026-03-02T09:00:00Z', reason: 'swap PSU' },
    });
    expect(window.statusCode).toBe(400);
    expect(window.json().error.details.field).toBe('body.until');
    expect(await h.head()).toBe(before);
  });

  it('a retry with the same Idempotency-Key returns the original position and writes nothing', async () => {
    const send = (reason: string) =>
      h.app.inject({ method: 'POST', url: '/v1/nodes/dc1-r01-n01/cordon', headers: { ...bearer('operator'), 'idempotency-key': 'cordon-1' }, payload: { reason } });
    const first = await send('fan noise');
    expect(first.statusCode).toBe(201);
    const head = await h.head();
    const again = await send('fan noise');
    expect(again.statusCode).toBe(200);
    expect(again.json()).toEqual({ ...first.json(), idempotentReplay: true });
    expect(await h.head()).toBe(head);
    const changed = await send('something else');
    expect(changed.statusCode).toBe(409);
    expect(changed.json().error.code).toBe('LEDGER_IDEMPOTENCY_CONFLICT');
    // The same key on another route is another request.
    const other = await h.app.inject({ method: 'POST', url: '/v1/nodes/dc1-r01-n01/uncordon', headers: { ...bearer('operator'), 'idempotency-key': 'cordon-1' }, payload: {} });
    expect(other.statusCode).toBe(201);
  });

  it('every node intent records its event type on the node stream', async () => {
    const cases: Array<[string, Record<string, unknown>, string]> = [
      ['quarantine', { reason: 'XID 79' }, 'NodeQuarantined'],
      ['release', {}, 'NodeReleased'],
      ['clear-latch', { reason: 'password reset on the BMC' }, 'LockoutLatchCleared'],
      ['maintenance', { from: '2026-03-02T09:00:00Z', until: '2026-03-02T10:00:00Z', reason: 'swap PSU' }, 'MaintenanceWindowSet'],
      ['cordon', { reason: 'drain' }, 'NodeCordoned'],
      ['uncordon', { reason: 'done' }, 'NodeUncordoned'],
      ['decommission', { reason: 'end of life' }, 'NodeDecommissioned'],
    ];
    // A latch to clear (the poller records it): clearing none would record nothing.
    await h.store.append('node-dc1-r01-n01', [{ type: 'LockoutLatched', data: { nodeId: 'dc1-r01-n01', cause: 'DRIVER_AUTH', credentialFingerprint: 'f1', at: '2026-03-02T08:00:00Z' }, actor: { kind: 'system', id: 'poller' } }]);
    for (const [path, payload, type] of cases) {
      const response = await h.app.inject({ method: 'POST', url: `/v1/nodes/dc1-r01-n01/${path}`, headers: bearer('operator'), payload });
      expect(response.statusCode, path).toBe(201);
      const [event] = await h.store.readAll({ fromPosition: response.json().position, limit: 1 });
      expect(event).toMatchObject({ type, stream: 'node-dc1-r01-n01', data: { nodeId: 'dc1-r01-n01' } });
    }
  });

  it('cordoning a cordoned node records nothing and answers 200 with the existing position', async () => {
    await h.app.inject({ method: 'POST', url: '/v1/nodes', headers: bearer('operator'), payload: registration('dc1-r01-n30') });
    const cordon = () => h.app.inject({ method: 'POST', url: '/v1/nodes/dc1-r01-n30/cordon', headers: bearer('operator'), payload: { reason: 'drain' } });
    const first = await cordon();
    expect(first.statusCode).toBe(201);
    expect(first.json()).toMatchObject({ unchanged: false });
    const head = await h.head();
    const again = await cordon();
    expect(again.statusCode).toBe(200);
    expect(again.json()).toEqual({ position: first.json().position, stream: 'node-dc1-r01-n30', streamVersion: first.json().streamVersion, idempotentReplay: false, unchanged: true });
    expect(await h.head()).toBe(head);
  });

  it('clearing a latch that is not there, uncordoning an uncordoned node and setting the same window again record nothing', async () => {
    const registered = await h.app.inject({ method: 'POST', url: '/v1/nodes', headers: bearer('operator'), payload: registration('dc1-r01-n31') });
    const head = await h.head();
    const clear = await h.app.inject({ method: 'POST', url: '/v1/nodes/dc1-r01-n31/clear-latch', headers: bearer('operator'), payload: { reason: 'just in case' } });
    expect(clear.statusCode).toBe(200);
    expect(clear.json()).toMatchObject({ unchanged: true, position: registered.json().position });
    const uncordon = await h.app.inject({ method: 'POST', url: '/v1/nodes/dc1-r01-n31/uncordon', headers: bearer('operator'), payload: {} });
    expect(uncordon.json()).toMatchObject({ unchanged: true, position: registered.json().position });
    expect(await h.head()).toBe(head);
    const window = { from: '2026-03-02T09:00:00Z', until: '2026-03-02T10:00:00Z', reason: 'swap PSU' };
    const set = await h.app.inject({ method: 'POST', url: '/v1/nodes/dc1-r01-n31/maintenance', headers: bearer('operator'), payload: window });
    expect(set.statusCode).toBe(201);
    const same = await h.app.inject({ method: 'POST', url: '/v1/nodes/dc1-r01-n31/maintenance', headers: bearer('operator'), payload: { ...window, reason: 'again' } });
    expect(same.statusCode).toBe(200);
    expect(same.json()).toMatchObject({ unchanged: true, position: set.json().position });
  });

  it('an intent about a node nobody registered or declared is 404 and writes nothing', async () => {
    const before = await h.head();
    const response = await h.app.inject({ method: 'POST', url: '/v1/nodes/ghost-node/cordon', headers: bearer('operator'), payload: { reason: 'x' } });
    expect(response.statusCode).toBe(404);
    expect(response.json().error.code).toBe('API_NOT_FOUND');
    expect(await h.head()).toBe(before);
  });

  it('a rack topology is declared on the rack stream', async () => {
    const response = await h.app.inject({ method: 'POST', url: '/v1/racks/r01/topology', headers: bearer('operator'), payload: { site: 'dc1', pdu: ['pdu-r01-a'], tor: ['tor-r01'] } });
    expect(response.statusCode).toBe(201);
    expect(response.json().stream).toBe('rack-r01');
  });

  it('an EBOM is imported as one decision, and a bad row is 400 with its line and nothing appended', async () => {
    const header = 'nodeId,site,rack,manufacturer,model,serial,firmware.BMC';
    const good = [header, 'dc1-r05-n01,dc1,r05,HPE,ProLiant DL380 Gen10 Plus,CZ01,2.72', 'dc1-r05-n02,dc1,r05,Dell Inc.,PowerEdge R750,7XQ1,7.00.00.171'].join('\n');
    const imported = await h.app.inject({ method: 'POST', url: '/v1/ebom?source=test.csv', headers: { ...bearer('operator'), 'content-type': 'text/csv' }, payload: good });
    expect(imported.statusCode).toBe(201);
    expect(imported.json()).toMatchObject({ rows: 2, stream: expect.stringMatching(/^ebom-/) });
    const before = await h.head();
    const bad = [header, 'dc1-r06-n01,dc1,r06,HPE,DL380,CZ9,1', 'dc1-r06-n02,dc1,r06,HPE,DL380,,1'].join('\n');
    const refused = await h.app.inject({ method: 'POST', url: '/v1/ebom', headers: { ...bearer('operator'), 'content-type': 'text/csv' }, payload: bad });
    expect(refused.statusCode).toBe(400);
    expect(refused.json().error).toMatchObject({ code: 'API_INVALID_REQUEST', details: { problems: [{ line: 3, field: 'serial' }] } });
    const json = await h.app.inject({ method: 'POST', url: '/v1/ebom', headers: { ...bearer('operator'), 'content-type': 'application/json' }, payload: JSON.stringify([{ nodeId: 'dc1-r07-n01', site: 'dc1', rack: 'r07', manufacturer: 'HPE', model: 'X' }]) });
    expect(json.statusCode).toBe(400);
    expect(json.json().error.details.problems[0]).toMatchObject({ line: 1, field: 'serial' });
    expect(await h.head()).toBe(before);
  });

  it('an agent posts observations; a payload that fails its schema is 400 naming the field', async () => {
    const telemetry = await h.store.readAll({ types: ['GpuTelemetryObserved'], limit: 1 });
    expect(telemetry).toEqual([]);
    const before = await h.head();
    const bad = await h.app.inject({ method: 'POST', url: '/v1/observations', headers: bearer('agent'), payload: { nodeId: 'dc1-r01-n01', source: 'agent', observations: [{ type: 'GpuXidObserved', data: { nope: 1 } }] } });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().error.details.field).toMatch(/^body\.observations\.0\.data/);
    const unknownType = await h.app.inject({ method: 'POST', url: '/v1/observations', headers: bearer('agent'), payload: { nodeId: 'dc1-r01-n01', source: 'agent', observations: [{ type: 'NodeRegistered', data: {} }] } });
    expect(unknownType.json().error.details.field).toBe('body.observations.0.type');
    const analyst = await h.app.inject({ method: 'POST', url: '/v1/observations', headers: bearer('analyst'), payload: { nodeId: 'n', source: 'agent', observations: [] } });
    expect(analyst.statusCode).toBe(403);
    expect(await h.head()).toBe(before);
  });

  it('an agent posts GPU observations as the driver that read them, idempotently with a key', async () => {
    const xid = {
      source: 'agent',
      dialect: 'nvidia-smi',
      unrecognized: [],
      events: [{ xid: 79, pciBusId: '0000:3b:00', message: 'NVRM: Xid (PCI:0000:3b:00): 79, pid=1', meaning: 'GPU has fallen off the bus', severity: 'critical', recommendedAction: 'reset' }],
    };
    const send = () =>
      h.app.inject({
        method: 'POST',
        url: '/v1/observations',
        headers: { ...bearer('agent'), 'idempotency-key': 'boot-1' },
        payload: { nodeId: 'dc1-r01-n01', source: 'agent', observedAt: '2026-03-02T10:00:00Z', observations: [{ type: 'GpuXidObserved', data: xid }] },
      });
    const first = await send();
    expect(first.statusCode).toBe(201);
    const [event] = await h.store.readAll({ fromPosition: first.json().position, limit: 1 });
    expect(event).toMatchObject({ type: 'GpuXidObserved', stream: 'node-dc1-r01-n01', actor: { kind: 'driver', id: `agent:dc1-r01-n01@${principals.agent}` } });
    const again = await send();
    expect(again.statusCode).toBe(200);
    expect(again.json().position).toBe(first.json().position);
  });

  it('acknowledging an alarm that does not exist is 404', async () => {
    const response = await h.app.inject({ method: 'POST', url: '/v1/alarms/dark:nope:1/ack', headers: bearer('operator'), payload: { note: 'looking' } });
    expect(response.statusCode).toBe(404);
    expect(response.json().error.code).toBe('API_NOT_FOUND');
  });
});
