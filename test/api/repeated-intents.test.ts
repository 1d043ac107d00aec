/**
 * An intent that changes nothing records nothing (kubectl's "already cordoned"): for every intent verb of the API,
 * asked once it changes the fleet (201, a position), asked again as it is it is answered 200 with `unchanged: true`
 * and that same position, and the log does not grow. Asked again with something different, it records again.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { xid } from '../projections/support/fleet-events.js';
import { bearer, openApiHarness, registration, type ApiHarness } from './support/api-harness.js';

interface Verb {
  name: string;
  /** Puts the node (or rack, or alarm) in a state where the intent changes something. */
  given?: (h: ApiHarness) => Promise<void>;
  url: string;
  body: Record<string, unknown>;
  /** The same intent with something different, which records again. */
  different?: Record<string, unknown>;
}

const node = (n: number) => `dc1-r05-n${String(n).padStart(2, '0')}`;
const register = (h: ApiHarness, nodeId: string) => h.app.inject({ method: 'POST', url: '/v1/nodes', headers: bearer('operator'), payload: registration(nodeId, 'r05') });
const post = (h: ApiHarness, url: string, body: Record<string, unknown>) => h.app.inject({ method: 'POST', url, headers: bearer('operator'), payload: body });

const verbs: readonly Verb[] = [
  { name: 'register', url: '/v1/nodes', body: registration(node(1), 'r05'), different: { ...registration(node(1), 'r05'), bmc: { protocol: 'redfish', address: 'https://10.0.0.9', credentialRef: 'cred-new' } } },
  { name: 'topology', url: '/v1/racks/r05/topology', body: { site: 'dc1', pdu: ['pdu-a', 'pdu-b'], tor: ['tor-1'] }, different: { site: 'dc1', pdu: ['pdu-a'], tor: ['tor-1'] } },
  { name: 'cordon', given: async (h) => void (await register(h, node(2))), url: `/v1/nodes/${node(2)}/cordon`, body: { reason: 'drain' } },
  { name: 'uncordon', given: async (h) => void (await post(h, `/v1/nodes/${node(2)}/cordon`, { reason: 'drain' })), url: `/v1/nodes/${node(2)}/uncordon`, body: {} },
  { name: 'quarantine', given: async (h) => void (await register(h, node(3))), url: `/v1/nodes/${node(3)}/quarantine`, body: { reason: 'bad DIMM' } },
  { name: 'release', url: `/v1/nodes/${node(3)}/release`, body: { reason: 'DIMM swapped' } },
  {
    name: 'maintenance',
    given: async (h) => void (await register(h, node(4))),
    url: `/v1/nodes/${node(4)}/maintenance`,
    body: { from: '2026-03-02T09:00:00Z', until: '2026-03-02T10:00:00Z', reason: 'PSU swap' },
    different: { from: '2026-03-02T09:00:00Z', until: '2026-03-02T11:00:00Z', reason: 'PSU swap' },
  },
  {
    name: 'clear-latch',
    given: async (h) => {
      await register(h, node(5));
      await h.store.append(`node-${node(5)}`, [{ type: 'LockoutLatched', data: { nodeId: node(5), cause: 'DRIVER_AUTH', credentialFingerprint: 'abc123', at: '2026-03-01T00:00:00Z' }, actor: { kind: 'system', id: 'poller' } }]);
    },
    url: `/v1/nodes/${node(5)}/clear-latch`,
    body: { reason: 'password reset by DC ops' },
  },
  { name: 'decommission', given: async (h) => void (await register(h, node(6))), url: `/v1/nodes/${node(6)}/decommission`, body: { reason: 'end of life' } },
  {
    name: 'alarm ack',
    given: async (h) => {
      await register(h, node(7));
      await h.store.append(`node-${node(7)}`, [xid(79, 'critical', 5)]);
      await h.caughtUp();
    },
    url: 'alarm',
    body: { note: 'on it' },
  },
];

describe('repeated intents', () => {
  let h: ApiHarness;
  beforeAll(async () => {
    h = await openApiHarness();
  });
  afterAll(async () => h?.close());

  it('repeating an intent that changes nothing records nothing and answers 200 with the existing position, for every intent verb', async () => {
    const rows = [];
    for (const verb of verbs) {
      await verb.given?.(h);
      let url = verb.url;
      if (url === 'alarm') {
        const alarms = (await h.app.inject({ method: 'GET', url: '/v1/alarms', headers: bearer('operator') })).json<{ items: Array<{ alarmId: string; nodeId: string }> }>().items;
        url = `/v1/alarms/${encodeURIComponent(alarms.find((alarm) => alarm.nodeId === node(7))!.alarmId)}/ack`;
      }
      const first = await post(h, url, verb.body);
      const head = await h.head();
      const again = await post(h, url, verb.body);
      rows.push({
        verb: verb.name,
        first: first.statusCode,
        firstUnchanged: first.json().unchanged,
        again: again.statusCode,
        againUnchanged: again.json().unchanged,
        samePosition: again.json().position === first.json().position,
        logGrew: (await h.head()) !== head,
      });
      if (verb.different) {
        const different = await post(h, url, verb.different);
        expect(different.statusCode, `${verb.name} with something different: ${different.body}`).toBe(201);
      }
    }
    expect(rows).toEqual(verbs.map((verb) => ({ verb: verb.name, first: 201, firstUnchanged: false, again: 200, againUnchanged: true, samePosition: true, logGrew: false })));
  });

  it('a rack declared again with its feeds in another order changes nothing; a node registered again after its decommission comes back', async () => {
    const first = await post(h, '/v1/racks/r06/topology', { site: 'dc1', pdu: ['pdu-a', 'pdu-b'], tor: [] });
    const reordered = await post(h, '/v1/racks/r06/topology', { site: 'dc1', pdu: ['pdu-b', 'pdu-a'] });
    expect(reordered.json()).toMatchObject({ unchanged: true, position: first.json().position });
    await register(h, node(8));
    await post(h, `/v1/nodes/${node(8)}/decommission`, { reason: 'moved' });
    const back = await register(h, node(8));
    expect(back.statusCode).toBe(201);
    expect(back.json()).toMatchObject({ unchanged: false });
  });

  it("an intent is decided on the node's intents, not its observations: the events read do not grow with what the poller recorded, and the decision is the same", async () => {
    await register(h, node(9));
    await post(h, `/v1/nodes/${node(9)}/cordon`, { reason: 'fan' });
    // The poller's observations pile up in the node's stream while the operator acts on it.
    const observation = { type: 'SensorsObserved', actor: { kind: 'driver', id: 'poller' }, data: { source: 'redfish', dialect: 'generic', unrecognized: [], temperatures: [{ name: 'Inlet', reading: 24, unit: 'Cel' }], fans: [], powerSupplies: [], other: [] } } as const;
    const observing = (async () => {
      for (let batch = 0; batch < 10; batch += 1) await h.store.append(`node-${node(9)}`, Array.from({ length: 200 }, () => observation));
    })();
    const read = { events: 0 };
    const readStream = h.store.readStream.bind(h.store);
    const readStreamToEnd = h.store.readStreamToEnd.bind(h.store);
    h.store.readStream = async (...args) => {
      const events = await readStream(...args);
      read.events += events.length;
      return events;
    };
    h.store.readStreamToEnd = async (...args) => {
      const events = await readStreamToEnd(...args);
      read.events += events.length;
      return events;
    };
    try {
      await observing;
      const again = await post(h, `/v1/nodes/${node(9)}/cordon`, { reason: 'fan' });
      expect(again.json()).toMatchObject({ unchanged: true });
      const uncordoned = await post(h, `/v1/nodes/${node(9)}/uncordon`, {});
      expect(uncordoned.statusCode).toBe(201);
      const keyed = await h.app.inject({ method: 'POST', url: `/v1/nodes/${node(9)}/cordon`, headers: { ...bearer('operator'), 'idempotency-key': 'ops-9' }, payload: { reason: 'fan again' } });
      expect(keyed.statusCode).toBe(201);
      // Three intents on a stream of 2,000 observations: the registration, the cordons and uncordon, never the observations.
      expect(read.events).toBeLessThan(20);
    } finally {
      h.store.readStream = readStream;
      h.store.readStreamToEnd = readStreamToEnd;
    }
  });
});
