/**
 * One authorization policy answers for every door: each role (and an anonymous caller) appends each family of event
 * to its derived stream, to another node's stream and to a stream the system owns, through the HTTP API
 * (`fastify.inject`, `POST /v1/streams/:stream`) and through the KurrentDB face (`@eventstore/db-client`), and the
 * verdicts (accepted, or the refusal's stable code) are identical and are the policy's own. The same for what each
 * caller reads of the log (payloads, envelopes, nothing).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jsonEvent, type EventStoreDBClient, type ResolvedEvent } from '@eventstore/db-client';
import { appendRefusal, buildApi, logView, roles, type Role, type ZodApp } from '../../src/api/index.js';
import { bearer, tokenTable } from '../api/support/api-harness.js';
import { openKurrentHarness, openssl, principals, registration, tokens, type KurrentHarness } from './support/kurrent-harness.js';

type Caller = Role | 'anonymous';
const callers: readonly Caller[] = ['anonymous', ...roles];

/** One node the test speaks about (X, in the agent's `dc1-*` scope) and another (Y). */
const nodeX = 'dc1-r09-n01';
const nodeY = 'dc1-r09-n02';
const now = '2026-12-07T12:00:00.000Z';

interface Sample {
  family: string;
  type: string;
  data: Record<string, unknown>;
  /** The stream its content derives (for observations: the node it is about, which only the stream names). */
  derived: string;
}

const samples: readonly Sample[] = [
  { family: 'driver observation (in-band GPU)', type: 'GpuXidObserved', data: { source: 'agent', dialect: 'generic', unrecognized: [], events: [] }, derived: `node-${nodeX}` },
  { family: 'driver observation (BMC firmware)', type: 'FirmwareInventoryObserved', data: { source: 'redfish', dialect: 'generic', unrecognized: [], components: [] }, derived: `node-${nodeX}` },
  { family: 'operator intent (registration)', type: 'NodeRegistered', data: registration(nodeX, 'r09'), derived: `node-${nodeX}` },
  { family: 'operator intent (cordon)', type: 'NodeCordoned', data: { nodeId: nodeX, reason: 'fan swap' }, derived: `node-${nodeX}` },
  { family: 'operator intent (rack topology)', type: 'TopologyDeclared', data: { site: 'dc1', rack: 'r09', pdu: ['pdu-a'], tor: [] }, derived: 'rack-r09' },
  { family: 'operator intent (alarm ack)', type: 'AlarmAcknowledged', data: { alarmId: 'dark:dc1-r09-n01' }, derived: 'alarm-dark:dc1-r09-n01' },
  { family: 'EBOM declaration', type: 'NodeDeclared', data: { importId: 'i1', declaration: { nodeId: nodeX, site: 'dc1', rack: 'r09', manufacturer: 'Dell', model: 'R760', serial: 'S1', firmwareBaseline: {} } }, derived: `node-${nodeX}` },
  { family: 'poll outcomes', type: 'PollOutcomesRecorded', data: { site: 'dc1', outcomes: [{ nodeId: nodeX, outcome: 'ok', latencyMs: 3 }] }, derived: 'polls-dc1' },
  { family: 'liveness', type: 'NodeWentDark', data: { nodeId: nodeX, lastContactAt: null, consecutiveMisses: 10, detectedAt: now }, derived: `node-${nodeX}` },
  { family: 'saga progress', type: 'RolloutPaused', data: { rolloutId: 'fw-9', reason: 'operator', detail: '' }, derived: 'rollout-fw-9' },
  { family: 'system', type: 'ProjectionEventSetAside', data: { projection: 'liveness', projectionVersion: 1, position: 1, eventId: 'e', type: 'NodeWentDark', stream: `node-${nodeX}`, reason: 'x' }, derived: 'projection-liveness' },
];

/** The stream kinds every sample is sent to. */
const streamKinds = (sample: Sample): Array<{ kind: string; stream: string }> => [
  { kind: 'its derived stream', stream: sample.derived },
  { kind: "another node's stream", stream: `node-${nodeY}` },
  { kind: 'a system-owned stream', stream: sample.derived === 'polls-dc1' ? 'capacity-dc1' : 'polls-dc1' },
];

const principalOf = (caller: Caller) => (caller === 'anonymous' ? null : tokenTable.resolve(tokens[caller]));

/** The refusal's stable code from a KurrentDB client error (its trailers), or what the client said. */
function kurrentCode(error: unknown): string {
  const raw = (error as { _raw?: { metadata?: { get(key: string): unknown[] } } })._raw;
  const code = raw?.metadata?.get('fleet-ledger-code')[0];
  return typeof code === 'string' ? code : `untyped: ${String((error as Error).message)}`;
}

describe.skipIf(!openssl.runnable)(openssl.title('one authorization policy for every door'), () => {
  let h: KurrentHarness;
  let api: ZodApp;
  let base: string;
  let anonymousClient: EventStoreDBClient;
  const clients = new Map<Role, EventStoreDBClient>();

  beforeAll(async () => {
    h = await openKurrentHarness();
    api = await buildApi({ store: h.store, tokens: tokenTable });
    await api.ready();
    base = await api.listen({ port: 0, host: '127.0.0.1' });
    anonymousClient = await h.plaintextClient({ anonymousReads: 'none' });
    for (const role of roles) clients.set(role, h.client(role));
    for (const nodeId of [nodeX, nodeY]) await h.store.append(`node-${nodeId}`, [{ type: 'NodeRegistered', data: registration(nodeId, 'r09'), actor: { kind: 'operator', id: 'setup' } }]);
  });
  afterAll(async () => {
    await api?.close();
    await h?.close();
  });

  async function httpAppend(caller: Caller, stream: string, sample: Sample): Promise<string> {
    const answer = await api.inject({
      method: 'POST',
      url: `/v1/streams/${encodeURIComponent(stream)}`,
      headers: caller === 'anonymous' ? {} : bearer(caller),
      payload: { events: [{ type: sample.type, data: sample.data }] },
    });
    return answer.statusCode === 201 ? 'accepted' : String(answer.json<{ error: { code: string } }>().error.code);
  }

  async function kurrentAppend(caller: Caller, stream: string, sample: Sample): Promise<string> {
    const event = jsonEvent({ type: sample.type, data: sample.data });
    try {
      // Credentials on the call make the client use Streams.Append, whose trailers carry the code (BatchAppend's
      // AccessDenied detail reaches the client without them); the anonymous caller is on the plaintext face.
      if (caller === 'anonymous') await anonymousClient.appendToStream(stream, event);
      else await clients.get(caller)!.appendToStream(stream, event, { credentials: { username: principals[caller], password: tokens[caller] } });
      return 'accepted';
    } catch (error) {
      return kurrentCode(error);
    }
  }

  it('every caller x event family x stream kind gets the same verdict through HTTP and KurrentDB, and it is the policy\'s', async () => {
    const rows: Array<{ caller: Caller; family: string; kind: string; policy: string; http: string; kurrent: string }> = [];
    for (const caller of callers) {
      for (const sample of samples) {
        for (const { kind, stream } of streamKinds(sample)) {
          const policy = appendRefusal({ principal: principalOf(caller), type: sample.type, stream, data: sample.data })?.code ?? 'accepted';
          rows.push({ caller, family: sample.family, kind, policy, http: await httpAppend(caller, stream, sample), kurrent: await kurrentAppend(caller, stream, sample) });
        }
      }
    }
    expect(rows).toHaveLength(callers.length * samples.length * 3);
    const disagreements = rows.filter((row) => row.http !== row.kurrent || row.http !== row.policy);
    expect(disagreements, JSON.stringify(disagreements, null, 1)).toEqual([]);
    // The table is not vacuous: it holds each answer the policy gives.
    expect(new Set(rows.map((row) => row.policy))).toEqual(new Set(['accepted', 'API_UNAUTHORIZED', 'API_FORBIDDEN', 'API_STREAM_MISMATCH', 'API_STREAM_RESERVED']));
    const verdict = (caller: Caller, type: string, kind: string) => rows.find((row) => row.caller === caller && samples.find((s) => s.family === row.family)!.type === type && row.kind === kind)!.http;
    expect(verdict('operator', 'NodeCordoned', 'its derived stream')).toBe('accepted');
    expect(verdict('operator', 'NodeCordoned', "another node's stream")).toBe('API_STREAM_MISMATCH');
    expect(verdict('operator', 'NodeRegistered', 'a system-owned stream')).toBe('API_STREAM_RESERVED');
    expect(verdict('agent', 'GpuXidObserved', 'its derived stream')).toBe('accepted');
    expect(verdict('agent', 'FirmwareInventoryObserved', 'its derived stream')).toBe('API_FORBIDDEN');
    expect(verdict('analyst', 'NodeCordoned', 'its derived stream')).toBe('API_FORBIDDEN');
    expect(verdict('anonymous', 'NodeCordoned', 'its derived stream')).toBe('API_UNAUTHORIZED');
  });

  /** The route people use to record each sample over HTTP, which derives the stream itself (none: no such route). */
  function intentRoute(sample: Sample): { url: string; payload: Record<string, unknown> } | null {
    switch (sample.type) {
      case 'NodeRegistered':
        return { url: '/v1/nodes', payload: registration(nodeX, 'r09') };
      case 'NodeCordoned':
        return { url: `/v1/nodes/${nodeX}/cordon`, payload: { reason: 'fan swap' } };
      case 'TopologyDeclared':
        return { url: '/v1/racks/r09/topology', payload: { site: 'dc1', pdu: ['pdu-a'], tor: [] } };
      case 'GpuXidObserved':
      case 'FirmwareInventoryObserved':
        return { url: '/v1/observations', payload: { nodeId: nodeX, source: 'agent', observations: [{ type: sample.type, data: sample.data }] } };
      default:
        return null;
    }
  }

  it('the intent routes, which derive the stream themselves, give every caller the policy\'s verdict for the derived stream', async () => {
    const rows = [];
    for (const caller of callers) {
      for (const sample of samples) {
        const route = intentRoute(sample);
        if (!route) continue;
        const answer = await api.inject({ method: 'POST', url: route.url, headers: caller === 'anonymous' ? {} : bearer(caller), payload: route.payload });
        const http = answer.statusCode === 201 || answer.statusCode === 200 ? 'accepted' : String(answer.json<{ error: { code: string } }>().error.code);
        const policy = appendRefusal({ principal: principalOf(caller), type: sample.type, stream: sample.derived, data: sample.data })?.code ?? 'accepted';
        rows.push({ caller, type: sample.type, http, policy });
      }
    }
    expect(rows).toHaveLength(callers.length * 5);
    expect(rows.filter((row) => row.http !== row.policy)).toEqual([]);
  });

  async function httpView(caller: Caller): Promise<string> {
    const headers = caller === 'anonymous' ? {} : bearer(caller);
    const page = await api.inject({ method: 'GET', url: '/v1/events?limit=1', headers });
    if (page.statusCode === 200) return page.json<{ items: Array<{ data: unknown }> }>().items[0]!.data === null ? 'envelopes' : 'payloads';
    // The live feed (SSE) over real HTTP: the first event's data says the view.
    const abort = new AbortController();
    try {
      const feed = await fetch(`${base}/v1/events/live?from=1`, { headers, signal: abort.signal });
      if (feed.status !== 200) return String(((await feed.json()) as { error: { code: string } }).error.code);
      const reader = feed.body!.getReader();
      let text = '';
      while (!/^data: .*$/m.test(text)) text += new TextDecoder().decode((await reader.read()).value);
      const event = JSON.parse(/^data: (.*)$/m.exec(text)![1]!) as { data: unknown };
      return event.data === null ? 'envelopes' : 'payloads';
    } finally {
      abort.abort();
    }
  }

  async function kurrentView(caller: Caller): Promise<string> {
    const client = caller === 'anonymous' ? anonymousClient : clients.get(caller)!;
    try {
      const events: ResolvedEvent[] = [];
      for await (const resolved of client.readAll({ maxCount: 1 })) events.push(resolved);
      return events[0]!.event!.data === null ? 'envelopes' : 'payloads';
    } catch (error) {
      return kurrentCode(error);
    }
  }

  it('what each caller reads of the log (payloads, envelopes or nothing) is the same through both doors, and the policy\'s', async () => {
    const rows = [];
    for (const caller of callers) {
      const view = logView(principalOf(caller));
      const policy = view !== 'none' ? view : caller === 'anonymous' ? 'API_UNAUTHORIZED' : 'API_FORBIDDEN';
      rows.push({ caller, policy, http: await httpView(caller), kurrent: await kurrentView(caller) });
    }
    expect(rows.filter((row) => row.http !== row.kurrent || row.http !== row.policy)).toEqual([]);
    expect(Object.fromEntries(rows.map((row) => [row.caller, row.policy]))).toEqual({
      anonymous: 'API_UNAUTHORIZED',
      // Operators read what they act on: envelopes (the dashboard's live feed), never payloads.
      operator: 'envelopes',
      analyst: 'envelopes',
      auditor: 'payloads',
      admin: 'payloads',
      agent: 'API_FORBIDDEN',
    });
  });
});
