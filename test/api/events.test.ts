import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, openApiHarness, registration, type ApiHarness } from './support/api-harness.js';

describe('the log for auditors over HTTP', () => {
  let h: ApiHarness;
  beforeAll(async () => {
    h = await openApiHarness();
    for (let i = 1; i <= 5; i += 1) {
      await h.app.inject({ method: 'POST', url: '/v1/nodes', headers: bearer('operator'), payload: registration(`dc1-r01-n0${i}`) });
    }
    await h.app.inject({ method: 'POST', url: '/v1/nodes/dc1-r01-n01/cordon', headers: bearer('operator'), payload: { reason: 'drain' } });
    await h.app.inject({ method: 'POST', url: '/v1/nodes/dc1-r01-n01/uncordon', headers: bearer('operator'), payload: {} });
  });
  afterAll(async () => h?.close());

  it('the log is read in position order, page after page, nothing repeated or skipped', async () => {
    const positions: number[] = [];
    let cursor: string | null = null;
    do {
      const response: { statusCode: number; json: () => any } = await h.app.inject({ method: 'GET', url: `/v1/events?limit=2${cursor ? `&cursor=${cursor}` : ''}`, headers: bearer('auditor') });
      expect(response.statusCode).toBe(200);
      positions.push(...response.json().items.map((e: any) => e.position));
      cursor = response.json().nextCursor;
    } while (cursor);
    expect(positions).toEqual([1, 2, 3, 4, 5, 6, 7]);
  });

  it('types and stream prefix filter the log', async () => {
    const cordons = await h.app.inject({ method: 'GET', url: '/v1/events?types=NodeCordoned,NodeUncordoned', headers: bearer('auditor') });
    expect(cordons.json().items.map((e: any) => e.type)).toEqual(['NodeCordoned', 'NodeUncordoned']);
    const stream = await h.app.inject({ method: 'GET', url: '/v1/events?stream=node-dc1-r01-n01&from=2', headers: bearer('auditor') });
    expect(stream.json().items.map((e: any) => e.position)).toEqual([6, 7]);
    const bad = await h.app.inject({ method: 'GET', url: '/v1/events?types=Node%20Cordoned', headers: bearer('auditor') });
    expect(bad.json().error.details.field).toBe('querystring.types');
  });

  it('a stream is read in version order, paged; an unknown stream is 404', async () => {
    const first = await h.app.inject({ method: 'GET', url: '/v1/streams/node-dc1-r01-n01?limit=2', headers: bearer('auditor') });
    expect(first.json()).toMatchObject({ stream: 'node-dc1-r01-n01', version: 3 });
    expect(first.json().items.map((e: any) => e.streamVersion)).toEqual([1, 2]);
    const second = await h.app.inject({ method: 'GET', url: `/v1/streams/node-dc1-r01-n01?limit=2&cursor=${first.json().nextCursor}`, headers: bearer('auditor') });
    expect(second.json().items.map((e: any) => e.streamVersion)).toEqual([3]);
    expect(second.json().nextCursor).toBeNull();
    const missing = await h.app.inject({ method: 'GET', url: '/v1/streams/node-nobody', headers: bearer('auditor') });
    expect(missing.statusCode).toBe(404);
  });

  it('the hash chain verifies over the whole log', async () => {
    const response = await h.app.inject({ method: 'GET', url: '/v1/verify', headers: bearer('auditor') });
    expect(response.json()).toMatchObject({ ok: true, from: 1, to: 7, checked: 7, headPosition: 7 });
  });

  it('events are for auditors and admins: an analyst or operator is 403', async () => {
    for (const url of ['/v1/events', '/v1/streams/node-dc1-r01-n01', '/v1/verify']) {
      expect((await h.app.inject({ method: 'GET', url, headers: bearer('analyst') })).statusCode).toBe(403);
      expect((await h.app.inject({ method: 'GET', url, headers: bearer('operator') })).statusCode).toBe(403);
      expect((await h.app.inject({ method: 'GET', url })).statusCode).toBe(401);
      expect((await h.app.inject({ method: 'GET', url, headers: bearer('admin') })).statusCode).toBe(200);
    }
  });
});

describe('a page of the log is bounded in bytes, not only in events', () => {
  it('limit=5000 over large payloads returns pages of about maxPageBytes (the log and one stream), a cursor continues, every event once and in order', async () => {
    const h = await openApiHarness({ maxPageBytes: 2_000 });
    try {
      await h.app.inject({ method: 'POST', url: '/v1/nodes', headers: bearer('operator'), payload: registration('dc1-r02-n01') });
      for (let i = 1; i <= 12; i += 1) {
        // Cordon and uncordon in turn: a cordon of a cordoned node would record nothing.
        const verb = i % 2 === 1 ? 'cordon' : 'uncordon';
        const response = await h.app.inject({ method: 'POST', url: `/v1/nodes/dc1-r02-n01/${verb}`, headers: bearer('operator'), payload: { reason: `${'x'.repeat(450)}-${i}` } });
        expect(response.statusCode).toBeLessThan(300);
      }
      const head = await h.head();
      const pages: number[][] = [];
      let cursor: string | null = null;
      do {
        const response: { statusCode: number; json: () => any } = await h.app.inject({ method: 'GET', url: `/v1/events?limit=5000${cursor ? `&cursor=${cursor}` : ''}`, headers: bearer('auditor') });
        expect(response.statusCode).toBe(200);
        const items = response.json().items as Array<{ position: number; data: unknown }>;
        // Everything but the last event of a page fits the bound (the database measures the binary jsonb, larger
        // than JSON.stringify's text).
        expect(items.slice(0, -1).reduce((sum, item) => sum + JSON.stringify(item.data).length, 0)).toBeLessThan(2_000);
        pages.push(items.map((item) => item.position));
        cursor = response.json().nextCursor;
      } while (cursor);
      expect(pages.length).toBeGreaterThan(2);
      expect(pages.flat()).toEqual(Array.from({ length: head }, (_, index) => index + 1));

      // One stream, the same bound: pages by version, each within it but for its last event.
      const versions: number[][] = [];
      cursor = null;
      do {
        const response: { statusCode: number; json: () => any } = await h.app.inject({ method: 'GET', url: `/v1/streams/node-dc1-r02-n01?limit=5000${cursor ? `&cursor=${cursor}` : ''}`, headers: bearer('auditor') });
        expect(response.statusCode).toBe(200);
        const items = response.json().items as Array<{ streamVersion: number; data: unknown }>;
        expect(items.slice(0, -1).reduce((sum, item) => sum + JSON.stringify(item.data).length, 0)).toBeLessThan(2_000);
        versions.push(items.map((item) => item.streamVersion));
        cursor = response.json().nextCursor;
      } while (cursor);
      expect(versions.length).toBeGreaterThan(2);
      expect(versions.flat()).toEqual(Array.from({ length: 13 }, (_, index) => index + 1));
    } finally {
      await h.close();
    }
  });
});
