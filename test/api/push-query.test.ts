/**
 * `GET /v1/nodes/{nodeId}/push`: a node's push as its stream records it, for analysts and operators: streaming or
 * polled after a gap, since when, and every push gap with since when.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, openApiHarness, type ApiHarness } from './support/api-harness.js';

const driver = { kind: 'driver', id: 'redfish-push:dc1-r01-n01' } as const;

describe('a node\'s push over HTTP', () => {
  let h: ApiHarness;
  beforeAll(async () => {
    h = await openApiHarness();
  });
  afterAll(async () => h?.close());

  it('answers the node\'s stream, its events pushed and its gaps in order; after a gap the node is polled, since the gap was found', async () => {
    await h.store.append('node-dc1-r01-n01', [
      { type: 'PushStreamOpened', data: { nodeId: 'dc1-r01-n01', uri: '/redfish/v1/EventService/SSE', heartbeatMs: 30_000, at: '2026-12-08T00:00:00.000Z' }, actor: driver },
      { type: 'RedfishEventObserved', data: { nodeId: 'dc1-r01-n01', origin: 'pushed', eventId: '1', messageId: 'ResourceEvent.1.0.ResourceStatusChangedCritical', receivedAt: '2026-12-08T00:01:00.000Z' }, actor: driver },
      { type: 'PushGapOpened', data: { nodeId: 'dc1-r01-n01', kind: 'subscription-lost', since: '2026-12-08T00:05:00.000Z', detectedAt: '2026-12-08T00:10:00.000Z', detail: 'the BMC lists no SSE subscription' }, actor: driver },
    ]);
    const polled = await h.app.inject({ method: 'GET', url: '/v1/nodes/dc1-r01-n01/push', headers: bearer('analyst') });
    expect(polled.statusCode, polled.body).toBe(200);
    expect(polled.json()).toEqual({
      nodeId: 'dc1-r01-n01',
      status: 'polled',
      since: '2026-12-08T00:10:00.000Z',
      heartbeatMs: 30_000,
      streamsOpened: 1,
      eventsPushed: 1,
      gaps: [{ kind: 'subscription-lost', since: '2026-12-08T00:05:00.000Z', detectedAt: '2026-12-08T00:10:00.000Z', detail: 'the BMC lists no SSE subscription' }],
    });
    await h.store.append('node-dc1-r01-n01', [{ type: 'PushStreamOpened', data: { nodeId: 'dc1-r01-n01', uri: '/redfish/v1/EventService/SSE', heartbeatMs: null, at: '2026-12-08T00:10:01.000Z' }, actor: driver }]);
    expect((await h.app.inject({ method: 'GET', url: '/v1/nodes/dc1-r01-n01/push', headers: bearer('analyst') })).json()).toMatchObject({ status: 'streaming', since: '2026-12-08T00:10:01.000Z', heartbeatMs: null, streamsOpened: 2 });
  });

  it('a node with no events is not found; a push event with a bad field is refused naming it, and nothing is written', async () => {
    expect((await h.app.inject({ method: 'GET', url: '/v1/nodes/dc9-nobody/push', headers: bearer('analyst') })).statusCode).toBe(404);
    await expect(h.store.append('node-dc1-r09-n09', [{ type: 'PushGapOpened', data: { nodeId: 'dc1-r09-n09', kind: 'vanished', since: 'x', detectedAt: '2026-12-08T00:10:00.000Z', detail: '' }, actor: driver }])).rejects.toThrow(/kind|since/);
    expect(await h.store.readStream('node-dc1-r09-n09')).toEqual([]);
  });
});
