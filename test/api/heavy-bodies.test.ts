import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bodyCaps } from '../../src/api/body-caps.js';
import { bearer, openApiHarness, registration, type ApiHarness } from './support/api-harness.js';

const ebomHeader = 'nodeId,site,rack,manufacturer,model,serial,gpuCount';

/** An EBOM of `rows` good rows and, when asked, a last row without its serial. */
function ebom(rows: number, badLast: boolean): string {
  const lines = [ebomHeader];
  for (let i = 0; i < rows; i += 1) lines.push(`dc9-r${String(Math.floor(i / 40)).padStart(4, '0')}-n${String(i % 40).padStart(2, '0')},dc9,r${Math.floor(i / 40)},HPE,DL380 Gen11,CZ${i},8`);
  if (badLast) lines.push('dc9-last,dc9,rlast,HPE,DL380 Gen11,,8');
  return lines.join('\n');
}

describe('heavy bodies are parsed off the request thread, under documented caps', () => {
  let h: ApiHarness;
  beforeAll(async () => {
    h = await openApiHarness();
  });
  afterAll(async () => h?.close());

  it('an EBOM of several MB whose last line is bad is refused naming that line, nothing written, while /healthz answers at once', async () => {
    const rows = 80_000;
    const text = ebom(rows, true);
    expect(text.length).toBeGreaterThan(3_000_000);
    const before = await h.head();
    const refused = h.app.inject({ method: 'POST', url: '/v1/ebom', headers: { ...bearer('operator'), 'content-type': 'text/csv' }, payload: text });
    // The request thread is free while the file is read and validated elsewhere.
    await new Promise((resolve) => setTimeout(resolve, 50));
    const started = performance.now();
    const health = await h.app.inject({ method: 'GET', url: '/healthz' });
    expect(health.statusCode).toBe(200);
    expect(performance.now() - started).toBeLessThan(500);
    const answer = await refused;
    expect(answer.statusCode).toBe(400);
    expect(answer.json().error).toMatchObject({ code: 'API_INVALID_REQUEST', details: { field: `body[line ${rows + 2}].serial`, problems: [{ line: rows + 2, field: 'serial' }] } });
    expect(await h.head()).toBe(before);
  });

  it('a large JSON body is judged on the body thread as a small one is on the request thread', async () => {
    const padding = 'x'.repeat(200 * 1024);
    const bad = await h.app.inject({ method: 'POST', url: '/v1/nodes', headers: { ...bearer('operator'), 'content-type': 'application/json' }, payload: JSON.stringify({ ...registration('dc1-big-n01'), bmc: { protocol: 'telnet', address: padding, credentialRef: 'c' } }) });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().error).toMatchObject({ code: 'API_INVALID_REQUEST', details: { field: 'body.bmc.protocol' } });
    const poisoned = await h.app.inject({ method: 'POST', url: '/v1/nodes', headers: { ...bearer('operator'), 'content-type': 'application/json' }, payload: `{"pad":"${padding}","a":{"__proto__":{"admin":true}}}` });
    expect(poisoned.statusCode).toBe(400);
    expect(poisoned.json().error).toMatchObject({ code: 'API_INVALID_REQUEST', details: { field: 'body' } });
    const broken = await h.app.inject({ method: 'POST', url: '/v1/nodes', headers: { ...bearer('operator'), 'content-type': 'application/json' }, payload: `{"pad":"${padding}",` });
    expect(broken.statusCode).toBe(400);
    expect(broken.json().error).toMatchObject({ code: 'API_INVALID_REQUEST', details: { field: 'body' } });
  });

  it('a body over its cap is 413 naming the cap, for JSON and for an EBOM', async () => {
    const json = await h.app.inject({ method: 'POST', url: '/v1/nodes', headers: { ...bearer('operator'), 'content-type': 'application/json' }, payload: `{"pad":"${'x'.repeat(bodyCaps.jsonBodyBytes)}"}` });
    expect(json.statusCode).toBe(413);
    expect(json.json().error).toEqual({ code: 'API_PAYLOAD_TOO_LARGE', message: expect.stringContaining('jsonBodyBytes'), details: { cap: 'jsonBodyBytes', limitBytes: bodyCaps.jsonBodyBytes } });
    const file = await h.app.inject({ method: 'POST', url: '/v1/ebom', headers: { ...bearer('operator'), 'content-type': 'text/csv' }, payload: `${ebomHeader}\n${'x'.repeat(bodyCaps.ebomBodyBytes)}` });
    expect(file.statusCode).toBe(413);
    expect(file.json().error.details).toEqual({ cap: 'ebomBodyBytes', limitBytes: bodyCaps.ebomBodyBytes });
  });
});
