/**
 * The fuzz pass over the API: every route that takes a body gets valid bodies damaged at random (fields dropped,
 * retyped, nulled, blown up, strings carrying NUL or lone surrogates, whole bodies replaced, broken JSON, the wrong
 * content type), every path parameter and query parameter gets hostile text. The rule for each request: never a 5xx,
 * a refusal is a typed error of the API's catalogue, and a refused request writes nothing. After the pass the
 * projections are still running and the chain verifies.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { documentedErrorCodes } from '../../src/api/api-error.js';
import { bearer, openApiHarness, registration, type ApiHarness } from './support/api-harness.js';
import type { Role } from '../../src/api/index.js';
import { jsonPlaces } from '../support/json-places.js';

interface BodyRoute {
  /** The route as OpenAPI names it, to hold the table against the published document. */
  route: string;
  url: string;
  role: Role;
  body: unknown;
  contentType?: string;
}

const node = 'dc1-r01-n01';
const xid = {
  source: 'agent',
  dialect: 'kernel-log',
  unrecognized: [],
  events: [{ xid: 79, pciBusId: '0000:17:00.0', message: 'GPU has fallen off the bus', meaning: 'GPU has fallen off the bus', severity: 'critical', recommendedAction: 'reset the GPU' }],
};
const firmware = { component: 'BMC', version: '9.1.0', imageUri: 'https://images.example/bmc-9.1.0.bin' };

/** One valid body per route that takes one. A route added to the API without a line here fails the first test. */
const bodyRoutes: BodyRoute[] = [
  { route: '/v1/nodes', url: '/v1/nodes', role: 'operator', body: registration('dc1-r02-n01', 'r02') },
  ...['decommission', 'cordon', 'uncordon', 'quarantine', 'release', 'clear-latch'].map((verb) => ({ route: `/v1/nodes/{nodeId}/${verb}`, url: `/v1/nodes/${node}/${verb}`, role: 'operator' as const, body: { reason: 'fuzz' } })),
  { route: '/v1/nodes/{nodeId}/accept-certificate', url: `/v1/nodes/${node}/accept-certificate`, role: 'operator', body: { fingerprint: 'ab'.repeat(32), reason: 'fuzz' } },
  { route: '/v1/nodes/{nodeId}/maintenance', url: `/v1/nodes/${node}/maintenance`, role: 'operator', body: { from: '2026-03-02T08:00:00Z', until: '2026-03-02T09:00:00Z', reason: 'fuzz' } },
  { route: '/v1/racks/{rack}/topology', url: '/v1/racks/r01/topology', role: 'operator', body: { site: 'dc1', pdu: ['pdu-r01-a'], tor: ['tor-r01'], cdu: 'cdu-1' } },
  { route: '/v1/alarms/{alarmId}/ack', url: '/v1/alarms/no-such-alarm/ack', role: 'operator', body: { note: 'seen' } },
  { route: '/v1/streams/{stream}', url: `/v1/streams/node-${node}`, role: 'operator', body: { expectedVersion: 'any', events: [{ type: 'NodeCordoned', data: { nodeId: node, reason: 'fuzz' } }] } },
  { route: '/v1/observations', url: '/v1/observations', role: 'agent', body: { nodeId: node, source: 'agent', observedAt: '2026-03-02T08:00:00Z', observations: [{ type: 'GpuXidObserved', data: xid }] } },
  { route: '/v1/rollouts/preview', url: '/v1/rollouts/preview', role: 'operator', body: { firmware, selector: { nodes: [node] }, seed: 1, canaryFraction: 0.1, waveFractions: [0.5, 1], capPerSite: 2, inFlightDomainLimits: { rack: 1 }, budgets: { canaryFailures: 0 }, gate: { maxLagMs: 1000 } } },
  { route: '/v1/rollouts', url: '/v1/rollouts', role: 'operator', body: { firmware, selector: { nodes: [node] }, seed: 1, bakeMs: 0 } },
  ...['advance', 'approve', 'pause', 'resume', 'abort'].map((verb) => ({ route: `/v1/rollouts/{rolloutId}/${verb}`, url: `/v1/rollouts/fuzz-rollout/${verb}`, role: 'operator' as const, body: { reason: 'fuzz', expectedRevision: 1 } })),
  { route: '/v1/rollouts/{rolloutId}/cap', url: '/v1/rollouts/fuzz-rollout/cap', role: 'operator', body: { reason: 'fuzz', cap: 1 } },
  { route: '/v1/rollouts/{rolloutId}/nodes/{nodeId}/{action}', url: `/v1/rollouts/fuzz-rollout/nodes/${node}/skip`, role: 'operator', body: { reason: 'fuzz' } },
  { route: '/v1/provisioning', url: '/v1/provisioning', role: 'operator', body: { nodeId: node, declared: { model: 'X', gpuCount: 8 }, baseline: [firmware], burnInMs: 0 } },
  { route: '/v1/provisioning/{nodeId}/release', url: `/v1/provisioning/${node}/release`, role: 'operator', body: { reason: 'fuzz', resumeAt: 'validating' } },
  { route: '/v1/provisioning/{nodeId}/abandon', url: `/v1/provisioning/${node}/abandon`, role: 'operator', body: { reason: 'fuzz' } },
  { route: '/v1/credential-rotations/preview', url: '/v1/credential-rotations/preview', role: 'operator', body: { selector: { nodes: [node], latchedOnly: false }, seed: 1, capPerSite: 2, waveFractions: [0.5], fenceGraceMs: 1000, lockoutThreshold: 3, factoryFallback: null } },
  { route: '/v1/credential-rotations', url: '/v1/credential-rotations', role: 'operator', body: { selector: { nodes: [node] }, seed: 1, bakeMs: 0 } },
  ...['approve', 'pause', 'resume', 'abort'].map((verb) => ({ route: `/v1/credential-rotations/{rotationId}/${verb}`, url: `/v1/credential-rotations/fuzz-rotation/${verb}`, role: 'operator' as const, body: { reason: 'fuzz', expectedRevision: 1 } })),
  { route: '/v1/credential-rotations/{rotationId}/nodes/{nodeId}/skip', url: `/v1/credential-rotations/fuzz-rotation/nodes/${node}/skip`, role: 'operator', body: { reason: 'fuzz' } },
  { route: '/v1/ebom', url: '/v1/ebom', role: 'operator', contentType: 'text/csv', body: 'nodeId,site,rack,manufacturer,model\ndc1-r01-n01,dc1,r01,Dell Inc.,PowerEdge XE9680\n' },
];

/** Hostile strings: NUL (PostgreSQL's jsonb refuses it), lone surrogates, control bytes, huge, SQL and path text. */
const hostileStrings = fc.oneof(
  fc.constantFrom('\u0000', 'a\u0000b', '\uD800', 'x\uDFFFy', '\u0007\u001b[2J', "'; DROP TABLE ledger_events; --", '../../etc/passwd', '%00', '0000-01-01T00:00:00Z', '+275760-09-13T00:00:00Z', 'NaN', '-0', '1e999', '', ' ', '\u202e', '🚀'.repeat(300)),
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.constantFrom(5_000, 70_000, 1_200_000).map((size) => 'x'.repeat(size)),
);
const hostileValues: fc.Arbitrary<unknown> = fc.oneof(
  hostileStrings,
  fc.constantFrom(0, -1, 1e308, -1e308, 2 ** 63, Number.MAX_SAFE_INTEGER + 2, 0.5, true, false, null, [], {}, [[[[]]]], { __proto__: { admin: true } }, { constructor: { prototype: 1 } }),
  fc.jsonValue({ maxDepth: 3 }),
);

type Damage =
  | { kind: 'drop'; pick: number }
  | { kind: 'set'; pick: number; value: unknown }
  | { kind: 'add'; pick: number; key: string; value: unknown }
  | { kind: 'replace'; value: unknown }
  | { kind: 'raw'; text: string }
  | { kind: 'content-type'; type: string }
  | { kind: 'deep'; depth: number };

const damageArbitrary: fc.Arbitrary<Damage> = fc.oneof(
  fc.record({ kind: fc.constant('drop' as const), pick: fc.nat() }),
  { arbitrary: fc.record({ kind: fc.constant('set' as const), pick: fc.nat(), value: hostileValues }), weight: 4 },
  fc.record({ kind: fc.constant('add' as const), pick: fc.nat(), key: fc.constantFrom('__proto__', 'constructor', 'actor', 'position', 'hash', 'x'), value: hostileValues }),
  fc.record({ kind: fc.constant('replace' as const), value: hostileValues }),
  fc.record({ kind: fc.constant('raw' as const), text: fc.constantFrom('', '{', '{"reason": ', 'null', '[]', '"x"', '{"reason":"a"}garbage', '\uFEFF{"reason":"a"}', '{"reason":"\\ud800"}', '{"reason":"\\u0000"}') }),
  fc.record({ kind: fc.constant('content-type' as const), type: fc.constantFrom('text/plain', 'application/xml', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/json; charset=latin1', '') }),
  fc.record({ kind: fc.constant('deep' as const), depth: fc.constantFrom(64, 5_000, 100_000) }),
);


/** The request a damage makes of a valid body: its payload text and its content type. */
function damaged(route: BodyRoute, damage: Damage): { payload: string; contentType: string } {
  const contentType = route.contentType ?? 'application/json';
  if (typeof route.body === 'string') {
    // The EBOM takes CSV: damage the text itself.
    const text = route.body;
    switch (damage.kind) {
      case 'raw':
        return { payload: damage.text, contentType };
      case 'content-type':
        return { payload: text, contentType: damage.type };
      case 'deep':
        return { payload: `${text}${'dc1-r01-n01,dc1,r01,X,Y\n'.repeat(Math.min(damage.depth, 20_000))}`, contentType };
      case 'replace':
        return { payload: typeof damage.value === 'string' ? damage.value : JSON.stringify(damage.value) ?? '', contentType };
      default: {
        const at = ('pick' in damage ? damage.pick : 0) % (text.length + 1);
        const insert = 'value' in damage ? (typeof damage.value === 'string' ? damage.value : JSON.stringify(damage.value) ?? '') : '';
        return { payload: damage.kind === 'drop' ? text.slice(0, at) : text.slice(0, at) + insert + text.slice(at), contentType };
      }
    }
  }
  const body = structuredClone(route.body);
  const places = jsonPlaces(body);
  const place = 'pick' in damage && places.length > 0 ? places[damage.pick % places.length]! : undefined;
  switch (damage.kind) {
    case 'drop':
      if (place && Array.isArray(place.holder)) place.holder.splice(place.key as number, 1);
      else if (place) delete (place.holder as Record<string, unknown>)[place.key as string];
      return { payload: JSON.stringify(body), contentType };
    case 'set':
      if (place) (place.holder as Record<string | number, unknown>)[place.key] = damage.value;
      return { payload: JSON.stringify(body), contentType };
    case 'add': {
      const target = place && typeof place.holder === 'object' && !Array.isArray(place.holder) ? place.holder : (body as Record<string, unknown>);
      // Written as text so `__proto__` arrives as an own key, the way an attacker sends it.
      const text = JSON.stringify(body);
      const key = JSON.stringify(damage.key);
      const value = JSON.stringify(damage.value) ?? 'null';
      if (target === body) return { payload: `{${key}:${value},${text.slice(1)}`, contentType };
      (target as Record<string, unknown>)[damage.key === '__proto__' ? 'x' : damage.key] = damage.value;
      return { payload: JSON.stringify(body), contentType };
    }
    case 'replace':
      return { payload: JSON.stringify(damage.value) ?? 'null', contentType };
    case 'raw':
      return { payload: damage.text, contentType };
    case 'content-type':
      return { payload: JSON.stringify(body), contentType: damage.type };
    case 'deep':
      return { payload: `${'['.repeat(damage.depth)}${']'.repeat(damage.depth)}`, contentType };
  }
}

/** Percent-encodes every UTF-8 byte (a lone surrogate becomes U+FFFD, as a client would send it), plus raw bytes that are not UTF-8. */
function percentEncoded(text: string, rawBytes: boolean): string {
  const encoded = [...Buffer.from(text)].map((byte) => `%${byte.toString(16).padStart(2, '0')}`).join('');
  return rawBytes ? `${encoded}%ff%fe%c0%80` : encoded;
}

describe('the fuzz pass over every API body, path and query', () => {
  let h: ApiHarness;
  const apiCodes = new Set(documentedErrorCodes().map((entry) => entry.code));
  let served: { bodyRoutes: string[]; queryRoutes: Array<{ route: string; params: Array<{ in: string; name: string }> }> };

  beforeAll(async () => {
    h = await openApiHarness();
    const created = await h.app.inject({ method: 'POST', url: '/v1/nodes', headers: bearer('operator'), payload: registration(node) });
    expect(created.statusCode).toBe(201);
    const doc = (await h.app.inject({ method: 'GET', url: '/openapi.json' })).json() as { paths: Record<string, Record<string, { requestBody?: unknown; parameters?: Array<{ in: string; name: string }> }>> };
    served = { bodyRoutes: [], queryRoutes: [] };
    for (const [route, operations] of Object.entries(doc.paths)) {
      for (const [method, operation] of Object.entries(operations)) {
        if (method === 'post') served.bodyRoutes.push(route);
        // The live feed answers with a stream that stays open (operators may follow it): an injected request would never
        // end. Its parameters are held by test/api/live-feed.test.ts.
        if (method === 'get' && route !== '/v1/events/live') served.queryRoutes.push({ route, params: (operation.parameters ?? []).filter((p) => p.in === 'query' || p.in === 'path') });
      }
    }
  });
  afterAll(async () => h?.close());

  /** What every answer to bad input must be: not a 5xx; a refusal carries a documented code. */
  function expectTypedAnswer(response: { statusCode: number; body: string; headers: Record<string, unknown> }, what: string) {
    expect(response.statusCode, `${what} answered ${response.statusCode}: ${response.body.slice(0, 300)}`).toBeLessThan(500);
    if (response.statusCode >= 400) {
      const parsed = JSON.parse(response.body) as { error?: { code?: string; message?: string } };
      expect(apiCodes.has(parsed.error?.code ?? ''), `${what}: ${response.body.slice(0, 300)}`).toBe(true);
      expect(parsed.error?.message, what).toBeTruthy();
    }
  }

  it('the table holds one valid body for every POST route the API publishes', () => {
    expect(bodyRoutes.map((r) => r.route).sort()).toEqual([...served.bodyRoutes].sort());
  });

  it('a damaged body is answered with a typed refusal or accepted whole, never a 5xx, and a refusal writes nothing', async () => {
    const statuses = new Map<number, number>();
    await fc.assert(
      fc.asyncProperty(fc.nat(), damageArbitrary, async (pick, damage) => {
        const route = bodyRoutes[pick % bodyRoutes.length]!;
        const { payload, contentType } = damaged(route, damage);
        const before = await h.head();
        const response = await h.app.inject({ method: 'POST', url: route.url, headers: { ...bearer(route.role), ...(contentType ? { 'content-type': contentType } : {}) }, payload });
        statuses.set(response.statusCode, (statuses.get(response.statusCode) ?? 0) + 1);
        const what = `POST ${route.url} ${damage.kind} ${JSON.stringify(damage).slice(0, 200)}`;
        expectTypedAnswer(response, what);
        if (response.statusCode >= 400) {
          // Nothing the caller asked for was written. (The projections running beside may append on their own, as
          // the system, in reaction to an earlier accepted request: those are not this request's.)
          const written = (await h.store.readAll({ fromPosition: before + 1, limit: 1000 })).filter((event) => event.actor.kind !== 'system');
          expect(written.map((event) => `${event.type} by ${event.actor.id}`), `${what} wrote events although refused`).toEqual([]);
        }
      }),
      { numRuns: 1_000 },
    );
    // The pass reached past validation too: some damaged bodies are still valid and were accepted.
    expect([...statuses.keys()].some((status) => status < 300)).toBe(true);
    expect(statuses.get(400) ?? 0).toBeGreaterThan(500);
  }, 240_000);

  it('hostile path and query text on every GET route is answered with a typed refusal or an answer, never a 5xx', async () => {
    const substitutes: Record<string, string> = { nodeId: node, alarmId: 'no-such-alarm', rolloutId: 'fuzz-rollout', rotationId: 'fuzz-rotation', component: 'BMC', size: '1', stream: `node-${node}` };
    await fc.assert(
      fc.asyncProperty(fc.nat(), fc.nat(), hostileStrings, fc.boolean(), fc.boolean(), async (pickRoute, pickParam, text, asPath, rawBytes) => {
        const { route, params } = served.queryRoutes[pickRoute % served.queryRoutes.length]!;
        const param = params.length > 0 ? params[pickParam % params.length] : undefined;
        const value = percentEncoded(text.slice(0, 20_000), rawBytes);
        let url = route.replace(/\{(\w+)\}/g, (_m, name: string) => (param?.in === 'path' && param.name === name && asPath ? percentEncoded(text.slice(0, 2_000), rawBytes) : encodeURIComponent(substitutes[name] ?? 'x')));
        if (param?.in === 'query') url += `?${param.name}=${value}`;
        const response = await h.app.inject({ method: 'GET', url, headers: bearer(route.startsWith('/v1/audit') ? 'auditor' : 'operator') });
        expectTypedAnswer(response, `GET ${url.slice(0, 200)}`);
      }),
      { numRuns: 800 },
    );
  }, 240_000);

  it('after the pass every projection is still running and the chain verifies', async () => {
    await h.caughtUp();
    for (const status of await h.runner.status()) expect(status.state, status.name).toBe('running');
    const verified = await h.app.inject({ method: 'GET', url: '/v1/verify', headers: bearer('auditor') });
    expect(verified.statusCode).toBe(200);
    expect(verified.json()).toMatchObject({ ok: true });
  });
});
