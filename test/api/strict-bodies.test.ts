/**
 * Bad input is refused, never rewritten: a JSON body whose bytes are not UTF-8, or that holds an integer a JavaScript
 * number would round, is answered 400 naming the field (the byte offset when it is outside any value), and nothing
 * is stored; a bare-position Last-Event-ID, which the feed cannot check against the log, is 409.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, openApiHarness, registration, type ApiHarness } from './support/api-harness.js';

const json = { ...bearer('operator'), 'content-type': 'application/json' };

describe('JSON bodies are refused, never rewritten', () => {
  let h: ApiHarness;
  beforeAll(async () => {
    h = await openApiHarness();
    expect((await h.app.inject({ method: 'POST', url: '/v1/nodes', headers: bearer('operator'), payload: registration('dc1-r01-n01') })).statusCode).toBe(201);
  });
  afterAll(async () => h?.close());

  it('a body with bytes that are not UTF-8 is 400 naming the field, never stored as U+FFFD', async () => {
    const before = await h.head();
    const body = Buffer.concat([Buffer.from('{"reason":"fan '), Buffer.from([0xc3, 0x28]), Buffer.from(' noise"}')]);
    const answer = await h.app.inject({ method: 'POST', url: '/v1/nodes/dc1-r01-n01/cordon', headers: json, payload: body });
    expect(answer.statusCode).toBe(400);
    expect(answer.json().error).toMatchObject({ code: 'API_INVALID_REQUEST', details: { field: 'body.reason', offset: 15 } });
    expect(answer.json().error.message).toMatch(/not valid UTF-8/);
    // Overlong forms and encoded surrogates are not UTF-8 either.
    for (const bad of [[0xc0, 0xaf], [0xed, 0xa0, 0x80], [0xf4, 0x90, 0x80, 0x80], [0xe2, 0x82]]) {
      const refused = await h.app.inject({ method: 'POST', url: '/v1/nodes/dc1-r01-n01/cordon', headers: json, payload: Buffer.concat([Buffer.from('{"reason":"'), Buffer.from(bad), Buffer.from('"}')]) });
      expect(refused.statusCode, `bytes ${bad.map((b) => b.toString(16)).join(' ')}`).toBe(400);
    }
    expect(await h.head()).toBe(before);
  });

  it('bytes that are not UTF-8 outside any value are 400 naming the byte offset', async () => {
    const body = Buffer.concat([Buffer.from('{"reason":"x"'), Buffer.from([0xff]), Buffer.from('}')]);
    const answer = await h.app.inject({ method: 'POST', url: '/v1/nodes/dc1-r01-n01/cordon', headers: json, payload: body });
    expect(answer.statusCode).toBe(400);
    expect(answer.json().error).toMatchObject({ code: 'API_INVALID_REQUEST', details: { field: 'body', offset: 13 } });
  });

  it('an integer beyond 2^53 − 1 is 400 naming the field, never stored rounded', async () => {
    const before = await h.head();
    const body = `{"nodeId":"dc1-r01-n01","source":"agent","observations":[{"type":"GpuXidObserved","data":{"source":"agent","dialect":"kernel-log","unrecognized":[],"latencyMs":9007199254740993,"events":[]}}]}`;
    const answer = await h.app.inject({ method: 'POST', url: '/v1/observations', headers: { ...bearer('agent'), 'content-type': 'application/json' }, payload: body });
    expect(answer.statusCode).toBe(400);
    expect(answer.json().error).toMatchObject({ code: 'API_INVALID_REQUEST', details: { field: 'body.observations.0.data.latencyMs' } });
    expect(answer.json().error.message).toMatch(/9007199254740993.*2\^53/);
    for (const literal of ['-9007199254740993', '1e16', '12345678901234567890.5']) {
      const refused = await h.app.inject({ method: 'POST', url: '/v1/observations', headers: { ...bearer('agent'), 'content-type': 'application/json' }, payload: body.replace('9007199254740993', literal) });
      expect(refused.statusCode, literal).toBe(400);
    }
    expect(await h.head()).toBe(before);
  });

  it('what is exact passes as before: UTF-8 text of every width, 2^53 − 1, long digit runs inside strings, fractions', async () => {
    const reason = 'façade 温度 🌡 9007199254740993 1e99';
    const cordon = await h.app.inject({ method: 'POST', url: '/v1/nodes/dc1-r01-n01/cordon', headers: json, payload: JSON.stringify({ reason }) });
    expect(cordon.statusCode).toBe(201);
    const [stored] = await h.store.readStream('node-dc1-r01-n01', { direction: 'backward', limit: 1 });
    expect(stored!.data).toMatchObject({ reason });
    const body = `{"nodeId":"dc1-r01-n01","source":"agent","observations":[{"type":"GpuXidObserved","data":{"source":"agent","dialect":"kernel-log","unrecognized":[],"latencyMs":9007199254740991,"events":[]}}]}`;
    expect((await h.app.inject({ method: 'POST', url: '/v1/observations', headers: { ...bearer('agent'), 'content-type': 'application/json' }, payload: body })).statusCode).toBe(201);
    expect((await h.app.inject({ method: 'POST', url: '/v1/observations', headers: { ...bearer('agent'), 'content-type': 'application/json' }, payload: body.replace('9007199254740991', '0.25e2') })).statusCode).toBe(201);
  });

  it('a bare-position Last-Event-ID (no hash) on the live feed is 409 resume-id-without-hash, never trusted', async () => {
    const answer = await h.app.inject({ method: 'GET', url: '/v1/events/live', headers: { ...bearer('auditor'), 'last-event-id': '1' } });
    expect(answer.statusCode).toBe(409);
    expect(answer.json().error).toMatchObject({ code: 'API_CONFLICT', details: { reason: 'resume-id-without-hash' } });
  }, 10_000);
});
