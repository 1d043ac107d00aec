import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, openApiHarness, registration, tokens, type ApiHarness } from './support/api-harness.js';

interface SseMessage {
  id: number;
  /** The resume id as sent: `<position>.<hash prefix>`. */
  resumeId: string;
  data: any;
}

/** Reads SSE messages from a live connection until `enough` says stop, then disconnects. */
async function readFeed(url: string, headers: Record<string, string>, enough: (messages: SseMessage[]) => boolean): Promise<SseMessage[]> {
  const abort = new AbortController();
  const response = await fetch(url, { headers: { accept: 'text/event-stream', ...headers }, signal: abort.signal });
  expect(response.status).toBe(200);
  expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
  const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
  const messages: SseMessage[] = [];
  let buffer = '';
  const deadline = setTimeout(() => abort.abort(), 15_000);
  try {
    while (!enough(messages)) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += value;
      let end: number;
      while ((end = buffer.indexOf('\n\n')) >= 0) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const id = /^id: ((\d+)\.[0-9a-f]{16})$/m.exec(block);
        const data = /^data: (.*)$/m.exec(block)?.[1];
        if (id && data) messages.push({ id: Number(id[2]), resumeId: id[1]!, data: JSON.parse(data) });
      }
    }
  } finally {
    clearTimeout(deadline);
    abort.abort();
    await reader.cancel().catch(() => undefined);
  }
  return messages;
}

describe('the live feed (Server-Sent Events)', () => {
  let h: ApiHarness;
  let base: string;
  const register = (n: number) => h.app.inject({ method: 'POST', url: '/v1/nodes', headers: bearer('operator'), payload: registration(`dc1-r01-n${String(n).padStart(2, '0')}`) });

  beforeAll(async () => {
    h = await openApiHarness({ maxLiveFeeds: 3 });
    base = await h.app.listen({ port: 0, host: '127.0.0.1' });
    for (let i = 1; i <= 5; i += 1) await register(i);
  });
  afterAll(async () => h?.close());

  it('a client that reconnects with Last-Event-ID receives every later event once, none repeated or skipped', async () => {
    // The client processed three events before its connection dropped (it may have received more).
    const first = (await readFeed(`${base}/v1/events/live?from=1`, bearer('auditor'), (m) => m.length >= 3)).slice(0, 3);
    expect(first.map((m) => m.id)).toEqual([1, 2, 3]);
    expect(first[0]!.data).toMatchObject({ position: 1, type: 'NodeRegistered' });
    // While disconnected, more is appended.
    for (let i = 6; i <= 8; i += 1) await register(i);
    const head = await h.head();
    const lastSeen = first[first.length - 1]!.resumeId;
    const resumed = await readFeed(`${base}/v1/events/live`, { ...bearer('auditor'), 'last-event-id': lastSeen }, (m) => (m[m.length - 1]?.id ?? 0) >= head);
    expect(resumed[0]!.id).toBe(4);
    expect([...first, ...resumed].map((m) => m.id)).toEqual(Array.from({ length: head }, (_, i) => i + 1));
  }, 30_000);

  it('a resume id naming an event this log does not hold at that position (the log was restored) is 409, not a silent skip; a malformed one is 400', async () => {
    const [one] = await readFeed(`${base}/v1/events/live?from=2`, bearer('auditor'), (m) => m.length >= 1);
    expect(one!.resumeId).toMatch(/^2\.[0-9a-f]{16}$/);
    const hashPrefix = one!.resumeId.slice(2);
    const forged = `2.${hashPrefix[0] === '0' ? '1' : '0'}${hashPrefix.slice(1)}`; // same position, another event's hash
    const other = await fetch(`${base}/v1/events/live`, { headers: { ...bearer('auditor'), 'last-event-id': forged } });
    expect(other.status).toBe(409);
    expect((await other.json()).error).toMatchObject({ code: 'API_CONFLICT', details: { reason: 'resume-point-not-in-log' } });
    const beyond = await fetch(`${base}/v1/events/live`, { headers: { ...bearer('auditor'), 'last-event-id': `999999.${'0'.repeat(16)}` } });
    expect(beyond.status).toBe(409);
    const malformed = await fetch(`${base}/v1/events/live`, { headers: { ...bearer('auditor'), 'last-event-id': 'abc' } });
    expect(malformed.status).toBe(400);
    expect((await malformed.json()).error).toMatchObject({ code: 'API_INVALID_REQUEST', details: { field: 'headers.last-event-id' } });
  });

  it('events appended while connected arrive live, and the types filter applies', async () => {
    const pending = readFeed(`${base}/v1/events/live?types=NodeCordoned`, bearer('auditor'), (m) => m.length >= 1);
    await new Promise((resolve) => setTimeout(resolve, 300));
    await register(20);
    await h.app.inject({ method: 'POST', url: '/v1/nodes/dc1-r01-n20/cordon', headers: bearer('operator'), payload: { reason: 'live' } });
    const messages = await pending;
    expect(messages.map((m) => m.data.type)).toEqual(['NodeCordoned']);
  });

  it('the feed takes ?token= (EventSource cannot set headers); operators follow envelopes only, agents nothing', async () => {
    const viaQuery = await readFeed(`${base}/v1/events/live?from=1&payload=none&token=${tokens.analyst}`, {}, (m) => m.length >= 1);
    expect(viaQuery[0]!.id).toBe(1);
    // payload=none: the envelope only (what the dashboard needs to know that something happened).
    expect(viaQuery[0]!.data).toMatchObject({ position: 1, type: 'NodeRegistered', data: null });
    // Operators read what they act on: the dashboard's feed of envelopes, never the log's payloads.
    const operator = await readFeed(`${base}/v1/events/live?from=1&token=${tokens.operator}`, {}, (m) => m.length >= 1);
    expect(operator[0]!.data).toMatchObject({ position: 1, type: 'NodeRegistered', data: null });
    const full = await fetch(`${base}/v1/events/live?from=1&payload=full`, { headers: bearer('operator') });
    expect(full.status).toBe(403);
    expect((await full.json()).error.code).toBe('API_FORBIDDEN');
    const refused = await fetch(`${base}/v1/events/live`, { headers: bearer('agent') });
    expect(refused.status).toBe(403);
    expect((await refused.json()).error.code).toBe('API_FORBIDDEN');
    const anonymous = await fetch(`${base}/v1/events/live`);
    expect(anonymous.status).toBe(401);
  });

  it('analysts follow envelopes only: no payload by default, and payload=full is refused with 403', async () => {
    const envelopes = await readFeed(`${base}/v1/events/live?from=1`, bearer('analyst'), (m) => m.length >= 1);
    expect(envelopes[0]!.data).toMatchObject({ position: 1, type: 'NodeRegistered', data: null });
    const full = await fetch(`${base}/v1/events/live?from=1&payload=full`, { headers: bearer('analyst') });
    expect(full.status).toBe(403);
    expect((await full.json()).error).toMatchObject({ code: 'API_FORBIDDEN', details: { role: 'analyst' } });
    const auditor = await readFeed(`${base}/v1/events/live?from=1`, bearer('auditor'), (m) => m.length >= 1);
    expect(auditor[0]!.data.data).toMatchObject({ nodeId: 'dc1-r01-n01' });
  });

  it('live feeds are bounded: past the limit a new one is answered 429, and a closed one frees its place', async () => {
    const open = await Promise.all([1, 2, 3].map(() => fetch(`${base}/v1/events/live`, { headers: bearer('auditor') })));
    expect(open.map((r) => r.status)).toEqual([200, 200, 200]);
    const over = await fetch(`${base}/v1/events/live`, { headers: bearer('auditor') });
    expect(over.status).toBe(429);
    expect((await over.json()).error).toMatchObject({ code: 'API_TOO_MANY_REQUESTS', details: { limit: 3 } });
    await open[0]!.body!.cancel();
    let again = 0;
    for (let attempt = 0; attempt < 50 && again !== 200; attempt += 1) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      const response = await fetch(`${base}/v1/events/live`, { headers: bearer('auditor') });
      again = response.status;
      await response.body?.cancel();
    }
    expect(again).toBe(200);
    for (const response of open.slice(1)) await response.body!.cancel();
  });

  it('live feeds read through a pool of their own: followers outside the process never take the connections appends use', async () => {
    // Let earlier feeds' closes settle, then open as many as the limit allows, following from position 1.
    await new Promise((resolve) => setTimeout(resolve, 300));
    const feeds = await Promise.all([1, 2, 3].map(() => fetch(`${base}/v1/events/live?from=1`, { headers: bearer('auditor') })));
    expect(feeds.map((r) => r.status)).toEqual([200, 200, 200]);
    const readers = feeds.map((response) => response.body!.getReader());
    const draining = readers.map(async (reader) => { while (!(await reader.read().catch(() => ({ done: true }))).done); });
    let peakMain = 0;
    let peakFeeds = 0;
    for (let i = 30; i < 40; i += 1) {
      await register(i);
      const use = h.store.poolUse();
      peakMain = Math.max(peakMain, use.main.waiting);
      peakFeeds = Math.max(peakFeeds, use.feeds?.total ?? 0);
    }
    // The followers' reads went to the feeds' pool (at most its 4 connections); nothing waited in the main pool.
    expect(peakFeeds).toBeGreaterThan(0);
    expect(peakFeeds).toBeLessThanOrEqual(4);
    expect(peakMain).toBe(0);
    for (const reader of readers) await reader.cancel();
    await Promise.all(draining);
  });
});
