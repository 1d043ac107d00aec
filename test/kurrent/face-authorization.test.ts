/**
 * The KurrentDB face follows the API's rules where the issue found it did not: an anonymous plaintext caller reads
 * no payloads, credentials sent over plaintext are refused rather than used, and an event goes only to the stream its
 * content derives (`NodeCordoned{nodeId: X}` never to `node-Y`, nothing of an operator's to `polls-*`).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Metadata } from '@grpc/grpc-js';
import { jsonEvent, START, type EventStoreDBClient, type ResolvedEvent } from '@eventstore/db-client';
import { buildApi, type ZodApp } from '../../src/api/index.js';
import { plaintextBearer } from '../../bench/support/plaintext-bearer.js';
import { bearer, tokenTable } from '../api/support/api-harness.js';
import { openKurrentHarness, openssl, principals, registration, tokens, type KurrentHarness } from './support/kurrent-harness.js';

async function collect(stream: AsyncIterable<ResolvedEvent>): Promise<ResolvedEvent[]> {
  const events: ResolvedEvent[] = [];
  for await (const resolved of stream) events.push(resolved);
  return events;
}

const trailer = (error: unknown, key: string): unknown => (error as { _raw?: { metadata?: Metadata } })._raw?.metadata?.get(key)[0];

describe.skipIf(!openssl.runnable)(openssl.title('the KurrentDB face under the API\'s authorization policy'), () => {
  let h: KurrentHarness;
  let api: ZodApp;
  let operator: EventStoreDBClient;

  beforeAll(async () => {
    h = await openKurrentHarness();
    api = await buildApi({ store: h.store, tokens: tokenTable });
    await api.ready();
    operator = h.client('operator');
    for (const nodeId of ['dc1-r05-n05', 'dc1-r05-n06']) await h.store.append(`node-${nodeId}`, [{ type: 'NodeRegistered', data: registration(nodeId, 'r05'), actor: { kind: 'operator', id: 'setup' } }]);
  });
  afterAll(async () => {
    await api?.close();
    await h?.close();
  });

  it('an anonymous plaintext readAll gets no payloads: nothing by default (as an unauthenticated HTTP caller), envelopes only when the operator opted in', async () => {
    const closed = await h.plaintextClient({ anonymousReads: 'none' });
    const refused = await collect(closed.readAll({ maxCount: 10 })).catch((error: unknown) => error);
    expect(refused).toMatchObject({ type: 'access-denied' });
    expect(trailer(refused, 'fleet-ledger-code')).toBe('API_UNAUTHORIZED');
    await expect(collect(closed.readStream('node-dc1-r05-n05'))).rejects.toMatchObject({ type: 'access-denied' });
    expect((await api.inject({ method: 'GET', url: '/v1/events' })).json()).toMatchObject({ error: { code: 'API_UNAUTHORIZED' } });

    const opted = await h.plaintextClient({ anonymousReads: 'envelopes' });
    const all = await collect(opted.readAll({ fromPosition: START }));
    expect(all.length).toBe((await h.store.head()).position);
    // Registrations carry BMC addresses and credential names: none of it reaches an anonymous reader.
    expect(all.every((resolved) => resolved.event!.data === null)).toBe(true);
    expect(all.map((resolved) => resolved.event!.type)).toContain('NodeRegistered');
    expect((await collect(opted.readStream('node-dc1-r05-n05')))[0]!.event).toMatchObject({ type: 'NodeRegistered', data: null });
    await expect(opted.appendToStream('node-dc1-r05-n05', jsonEvent({ type: 'NodeCordoned', data: { nodeId: 'dc1-r05-n05', reason: 'anonymous' } }))).rejects.toMatchObject({ type: 'access-denied' });
  });

  it('an analyst follows the log through a subscription as over the HTTP live feed: envelopes, never payloads', async () => {
    const subscription = h.client('analyst').subscribeToAll({ fromPosition: START });
    try {
      const seen: ResolvedEvent[] = [];
      for await (const resolved of subscription) {
        seen.push(resolved);
        if (seen.length === 2) break;
      }
      expect(seen.map((resolved) => resolved.event!.type)).toEqual(['NodeRegistered', 'NodeRegistered']);
      expect(seen.map((resolved) => resolved.event!.data)).toEqual([null, null]);
    } finally {
      await subscription.unsubscribe();
    }
  });

  it('a bearer token presented over plaintext is refused, not used: no append, no read, AccessDenied with API_UNAUTHORIZED (reason plaintext)', async () => {
    await h.plaintextClient({ anonymousReads: 'envelopes' });
    const raw = plaintextBearer(h.plaintextPort(), tokens.operator);
    const auditor = plaintextBearer(h.plaintextPort(), tokens.auditor);
    const before = (await h.store.head()).position;
    try {
      const appended = await raw.append('node-dc1-r05-n05', 'NodeCordoned', { nodeId: 'dc1-r05-n05', reason: 'over plaintext' });
      expect(appended).toMatchObject({ status: 16, exception: 'access-denied', code: 'API_UNAUTHORIZED', reason: 'plaintext' });
      expect((await h.store.head()).position).toBe(before);
      // An auditor's token does not turn an anonymous envelope reader into a payload reader either: it is refused.
      const auditorRead = await auditor.readAll(10);
      expect(auditorRead).toMatchObject({ events: 0, code: 'API_UNAUTHORIZED' });
    } finally {
      raw.close();
      auditor.close();
    }
  });

  it('NodeCordoned{nodeId: X} appended to node-Y is refused through both append calls and over HTTP, and nothing is stored', async () => {
    const before = (await h.store.head()).position;
    const forged = jsonEvent({ type: 'NodeCordoned', data: { nodeId: 'dc1-r05-n06', reason: 'not this node' } });
    // BatchAppend (the client's default): the client's AccessDeniedError.
    await expect(operator.appendToStream('node-dc1-r05-n05', forged)).rejects.toMatchObject({ type: 'access-denied' });
    // Append (credentials on the call): the same code and typed details as the HTTP answer.
    const refused = await operator.appendToStream('node-dc1-r05-n05', forged, { credentials: { username: principals.operator, password: tokens.operator } }).catch((error: unknown) => error);
    expect(refused).toMatchObject({ type: 'access-denied' });
    expect(trailer(refused, 'fleet-ledger-code')).toBe('API_STREAM_MISMATCH');
    const details = { stream: 'node-dc1-r05-n05', derivedStream: 'node-dc1-r05-n06', type: 'NodeCordoned' };
    expect(JSON.parse(String(trailer(refused, 'fleet-ledger-details')))).toEqual(details);
    const http = await api.inject({ method: 'POST', url: '/v1/streams/node-dc1-r05-n05', headers: bearer('operator'), payload: { events: [{ type: 'NodeCordoned', data: { nodeId: 'dc1-r05-n06', reason: 'not this node' } }] } });
    expect(http.statusCode).toBe(403);
    expect(http.json()).toMatchObject({ error: { code: 'API_STREAM_MISMATCH', details } });
    // A registration of a node nobody has into the poller's stream: the system's stream refuses it.
    const evil = await operator.appendToStream('polls-ams1', jsonEvent({ type: 'NodeRegistered', data: registration('evil-1') }), { credentials: { username: principals.operator, password: tokens.operator } }).catch((error: unknown) => error);
    expect(trailer(evil, 'fleet-ledger-code')).toBe('API_STREAM_RESERVED');
    expect((await h.store.head()).position).toBe(before);
    // Its own stream takes it.
    await expect(operator.appendToStream('node-dc1-r05-n06', forged)).resolves.toMatchObject({ success: true });
  });
});
