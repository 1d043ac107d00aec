/**
 * DATABASE_READ_URL against a real streaming replica on loopback: a primary cluster and a hot standby cloned from it
 * (test/support/streaming-replica.ts), the ledger and its projections on the primary, the API reading the read models
 * on the standby.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fleetProjections } from '../../projections/index.js';
import { buildApi, type ZodApp } from '../../src/api/index.js';
import { EventStore, ProjectionRunner } from '../../src/ledger/index.js';
import { findReplicationBinaries, startReplicatedPair, type ReplicatedPair } from '../support/streaming-replica.js';
import { bearer, openApiHarness, registration, tokenTable } from './support/api-harness.js';
import { freePort as closedPort } from '../../bench/support/free-port.js';

const lookup = await findReplicationBinaries();
const title = (name: string) => (lookup.found ? name : `${name} (skipped: ${lookup.reason})`);

const poller = { kind: 'system', id: 'poller' } as const;
const nodes = ['dc1-r01-n01', 'dc1-r01-n02', 'dc1-r02-n01', 'dc1-r02-n02'];

function polls(at: Date, outcomes: Array<[string, string]>) {
  return {
    type: 'PollOutcomesRecorded',
    data: {
      site: 'dc1',
      windowStart: at.toISOString(),
      nodeIds: outcomes.map(([n]) => n),
      work: outcomes.map(() => 'liveness'),
      outcomes: outcomes.map(([, o]) => o),
      latencyMs: outcomes.map(() => 10),
      offsetMs: outcomes.map((_, i) => i),
    },
    actor: poller,
  };
}

async function until<T>(what: string, probe: () => Promise<T | undefined | false>, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

type Checkpoints = Record<string, number>;
async function checkpoints(client: pg.Client): Promise<Checkpoints> {
  const { rows } = await client.query<{ name: string; position: string }>('SELECT name, position FROM projection_checkpoints ORDER BY name');
  return Object.fromEntries(rows.map((row) => [row.name, Number(row.position)]));
}

function withoutOrigin(body: Record<string, unknown>): Record<string, unknown> {
  const { readFrom: _readFrom, ...rest } = body;
  return rest;
}

describe.skipIf(!lookup.found)(title(`query routes on a streaming replica (${lookup.found?.source ?? 'none'})`), () => {
  let pair: ReplicatedPair;
  let store: EventStore;
  let runner: ProjectionRunner;
  /** Reads the replica (DATABASE_READ_URL). */
  let api: ZodApp;
  /** The same ledger without a replica: what the primary answers. */
  let primaryApi: ZodApp;
  /** Superuser sessions on each copy's ledger database (the test's own eyes, not the API's). */
  let onPrimary: pg.Client;
  let onReplica: pg.Client;
  // One instant for both APIs, so "seconds since last contact" agree between them.
  const clock = () => new Date('2030-01-01T00:00:00Z');

  const get = (app: ZodApp, url: string) => app.inject({ method: 'GET', url, headers: bearer('analyst') });

  /** The primary's projections have applied everything in the log. */
  async function primaryCaughtUp(): Promise<void> {
    const head = (await store.head()).position;
    await until(`projections reach ${head}`, async () => (await runner.status()).every((s) => s.position >= head && s.state === 'running'));
  }

  /** The replica shows the primary's checkpoints (read models and checkpoints replicate together). */
  async function replicaCaughtUp(): Promise<Checkpoints> {
    await primaryCaughtUp();
    const expected = await checkpoints(onPrimary);
    return until('the replica replays the primary', async () => {
      const seen = await checkpoints(onReplica);
      return JSON.stringify(seen) === JSON.stringify(expected) ? seen : undefined;
    });
  }

  /** Runs `body` with the replica's WAL replay paused (it still receives WAL), and resumes it, whatever happens. */
  async function withReplayPaused(body: () => Promise<void>): Promise<void> {
    await onReplica.query('SELECT pg_wal_replay_pause()');
    try {
      await until('replay is paused', async () => (await onReplica.query<{ state: string }>('SELECT pg_get_wal_replay_pause_state() AS state')).rows[0]!.state === 'paused');
      await body();
    } finally {
      await onReplica.query('SELECT pg_wal_replay_resume()');
    }
  }

  beforeAll(async () => {
    pair = await startReplicatedPair(lookup.found!);
    const admin = new pg.Client({ connectionString: pair.primaryUrl });
    await admin.connect();
    await admin.query('CREATE DATABASE fleet_ledger');
    await admin.end();
    const primaryUrl = pair.database(pair.primaryUrl, 'fleet_ledger');
    const replicaUrl = pair.database(pair.replicaUrl, 'fleet_ledger');
    store = await EventStore.open({ connectionString: primaryUrl, pollIntervalMs: 100 });
    runner = new ProjectionRunner(store, fleetProjections({ liveness: { darkAfterMisses: 3 } }));
    await runner.start();
    api = await buildApi({ store, runner, tokens: tokenTable, clock, readDatabaseUrl: replicaUrl });
    primaryApi = await buildApi({ store, runner, tokens: tokenTable, clock });
    onPrimary = new pg.Client({ connectionString: primaryUrl });
    await onPrimary.connect();
    // The database is created on the primary; the standby has it once it has replayed that far.
    await until('the ledger database reaches the replica', async () => {
      const probe = new pg.Client({ connectionString: replicaUrl });
      try {
        await probe.connect();
        await probe.query('SELECT 1 FROM projection_checkpoints LIMIT 1');
        return true;
      } catch {
        return false;
      } finally {
        await probe.end().catch(() => undefined);
      }
    });
    onReplica = new pg.Client({ connectionString: replicaUrl });
    await onReplica.connect();

    for (const node of nodes) {
      const response = await api.inject({ method: 'POST', url: '/v1/nodes', headers: bearer('operator'), payload: registration(node, node.split('-')[1]) });
      expect(response.statusCode, response.body).toBe(201);
    }
    const t0 = Date.parse('2029-12-31T23:50:00Z');
    await store.append('polls-dc1', [polls(new Date(t0), nodes.map((n) => [n, 'success']))]);
    // r02 goes dark: three misses after one contact.
    for (let i = 1; i <= 3; i += 1) await store.append('polls-dc1', [polls(new Date(t0 + i * 60_000), nodes.map((n) => [n, n.includes('-r02-') ? 'timeout' : 'success']))]);
    await replicaCaughtUp();
  });

  afterAll(async () => {
    // Each step runs whatever the one before did: the clusters must not outlive the run.
    await onReplica?.query('SELECT pg_wal_replay_resume()').catch(() => undefined);
    await onReplica?.end().catch(() => undefined);
    await onPrimary?.end().catch(() => undefined);
    await api?.close().catch(() => undefined);
    await primaryApi?.close().catch(() => undefined);
    await runner?.stop().catch(() => undefined);
    await store?.close().catch(() => undefined);
    await pair?.stop();
  });

  it('the query routes read the standby, and every answer states the position it reflects and the replica lag', async () => {
    const { rows } = await onReplica.query<{ standby: boolean }>('SELECT pg_is_in_recovery() AS standby');
    expect(rows[0]!.standby).toBe(true);
    const replicaCheckpoints = await checkpoints(onReplica);

    const summary = await get(api, '/v1/liveness/summary');
    expect(summary.statusCode, summary.body).toBe(200);
    expect(summary.headers['fleet-ledger-read-from']).toBe('replica');
    // The position is the liveness checkpoint the replica shows: every event up to it is in the answer.
    expect(Number(summary.headers['fleet-ledger-position'])).toBe(replicaCheckpoints.liveness);
    expect(summary.headers['fleet-ledger-replica-lag-positions']).toBe('0');
    expect(Number(summary.headers['fleet-ledger-replica-lag-ms'])).toBeGreaterThanOrEqual(0);
    expect(Number(summary.headers['fleet-ledger-replica-lag-bytes'])).toBeGreaterThanOrEqual(0);
    expect(summary.json()).toMatchObject({
      states: { healthy: 2, dark: 2 },
      readFrom: { source: 'replica', position: replicaCheckpoints.liveness, head: (await store.head()).position, lag: { positions: 0 } },
    });

    // A route reading several projections states the least of their checkpoints.
    const node = await get(api, '/v1/nodes/dc1-r02-n01');
    expect(node.statusCode, node.body).toBe(200);
    expect(node.json().readFrom.position).toBe(Math.min(replicaCheckpoints.liveness!, replicaCheckpoints.inventory!, replicaCheckpoints.drift!, replicaCheckpoints.alarms!));

    const ready = await api.inject({ method: 'GET', url: '/readyz' });
    expect(ready.statusCode, ready.body).toBe(200);
    expect(ready.json().replica).toMatchObject({ reachable: true, inRecovery: true, replayPaused: false, head: (await store.head()).position, lag: { positions: 0 } });
    expect(ready.json().replica.location).toMatch(/^postgres:\/\/postgres@127\.0\.0\.1:\d+\/fleet_ledger$/);
  });

  it('a replica answer equals the primary answer once the replica has replayed the same position', async () => {
    await replicaCaughtUp();
    for (const url of ['/v1/liveness/summary', '/v1/liveness/nodes', '/v1/liveness/dark', '/v1/liveness/gaps?rack=r02&from=2029-01-01T00:00:00Z', '/v1/nodes/dc1-r01-n01', '/v1/inventory?by=manufacturer', '/v1/drift', '/v1/compliance', '/v1/alarms?includeFolded=true']) {
      const [fromReplica, fromPrimary] = [await get(api, url), await get(primaryApi, url)];
      expect(fromReplica.statusCode, `${url}: ${fromReplica.body}`).toBe(200);
      expect(fromReplica.headers['fleet-ledger-read-from'], url).toBe('replica');
      expect(fromPrimary.headers['fleet-ledger-read-from'], url).toBeUndefined();
      expect(withoutOrigin(fromReplica.json()), url).toEqual(fromPrimary.json());
    }
    // The dark nodes are there (the comparison is not one of two empty answers).
    expect((await get(api, '/v1/liveness/dark')).json().items).toHaveLength(2);
  });

  it('while replay is paused the replica answers keep their position and the reported lag grows; after resume it returns to about zero', async () => {
    const before = await replicaCaughtUp();
    const answeredBefore = (await get(api, '/v1/liveness/summary')).json();
    expect(answeredBefore.states).toEqual({ healthy: 2, dark: 2 });
    await withReplayPaused(async () => {
      // r02 answers again (twice: recovery has hysteresis): on the primary the fleet is all healthy.
      for (const at of ['2029-12-31T23:55:00Z', '2029-12-31T23:56:00Z']) await store.append('polls-dc1', [polls(new Date(at), nodes.map((n) => [n, 'success']))]);
      await primaryCaughtUp();
      expect((await get(primaryApi, '/v1/liveness/summary')).json().states).toEqual({ healthy: 4 });
      await new Promise((resolve) => setTimeout(resolve, 400));

      const paused = await get(api, '/v1/liveness/summary');
      expect(paused.headers['fleet-ledger-read-from']).toBe('replica');
      expect(Number(paused.headers['fleet-ledger-position'])).toBe(before.liveness);
      expect(paused.json().states).toEqual({ healthy: 2, dark: 2 });
      const head = (await store.head()).position;
      expect(Number(paused.headers['fleet-ledger-replica-lag-positions'])).toBe(head - Number(paused.headers['fleet-ledger-replica-head']));
      expect(Number(paused.headers['fleet-ledger-replica-lag-positions'])).toBeGreaterThan(0);
      expect(Number(paused.headers['fleet-ledger-replica-lag-bytes'])).toBeGreaterThan(0);
      expect(Number(paused.headers['fleet-ledger-replica-lag-ms'])).toBeGreaterThanOrEqual(400);

      const ready = (await api.inject({ method: 'GET', url: '/readyz' })).json();
      expect(ready.replica).toMatchObject({ reachable: true, replayPaused: true, primaryHead: head });
      expect(ready.replica.lag.positions).toBeGreaterThan(0);
      const metrics = (await api.inject({ method: 'GET', url: '/metrics' })).body;
      expect(metrics).toMatch(/^fleet_ledger_replica_up 1$/m);
      expect(Number(/^fleet_ledger_replica_lag_positions (\S+)$/m.exec(metrics)?.[1])).toBeGreaterThan(0);
      expect(Number(/^fleet_ledger_replica_lag_seconds (\S+)$/m.exec(metrics)?.[1])).toBeGreaterThanOrEqual(0.4);
      expect(Number(/^fleet_ledger_replica_lag_bytes (\S+)$/m.exec(metrics)?.[1])).toBeGreaterThan(0);
    });

    const after = await replicaCaughtUp();
    expect(after.liveness).toBeGreaterThan(before.liveness!);
    const resumed = await until('the reported lag returns to zero', async () => {
      const response = await get(api, '/v1/liveness/summary');
      return response.headers['fleet-ledger-replica-lag-positions'] === '0' && Number(response.headers['fleet-ledger-replica-lag-ms']) < 1000 ? response : undefined;
    });
    expect(Number(resumed.headers['fleet-ledger-position'])).toBe(after.liveness);
    expect(resumed.json().states).toEqual({ healthy: 4 });
    const metrics = (await api.inject({ method: 'GET', url: '/metrics' })).body;
    expect(/^fleet_ledger_replica_lag_positions (\S+)$/m.exec(metrics)?.[1]).toBe('0');
  });

  it("an intent's own read (minPosition: the position the intent answered) goes to the primary while the replica has not reached it", async () => {
    await replicaCaughtUp();
    const nodeId = 'dc1-r03-n01';
    await withReplayPaused(async () => {
      const intent = await api.inject({ method: 'POST', url: '/v1/nodes', headers: bearer('operator'), payload: registration(nodeId, 'r03') });
      expect(intent.statusCode, intent.body).toBe(201);
      const position = intent.json().position as number;
      await primaryCaughtUp();

      // The replica has not replayed the registration: without minPosition the node is not there yet, and the answer
      // says how far it reflects.
      const stale = await get(api, `/v1/liveness/nodes/${nodeId}`);
      expect(stale.statusCode).toBe(404);
      expect(stale.headers['fleet-ledger-read-from']).toBe('replica');
      expect(Number(stale.headers['fleet-ledger-position'])).toBeLessThan(position);

      const own = await get(api, `/v1/liveness/nodes/${nodeId}?minPosition=${position}`);
      expect(own.statusCode, own.body).toBe(200);
      expect(own.headers['fleet-ledger-read-from']).toBe('primary');
      expect(own.headers['fleet-ledger-primary-reason']).toBe('min-position');
      expect(own.json()).toMatchObject({ nodeId, state: 'never-contacted', readFrom: { source: 'primary', reason: 'min-position' } });
      expect(own.json().readFrom.position).toBeGreaterThanOrEqual(position);
    });
    // Once the replica has replayed it, the same read is the replica's again.
    const position = (await store.head()).position;
    await replicaCaughtUp();
    const later = await get(api, `/v1/liveness/nodes/${nodeId}?minPosition=${position}`);
    expect(later.statusCode, later.body).toBe(200);
    expect(later.headers['fleet-ledger-read-from']).toBe('replica');
  });
});


describe('a read replica that does not answer', () => {
  it('costs the caller only latency: the primary answers and says why; readiness and metrics show the replica down', async () => {
    const h = await openApiHarness({ readDatabaseUrl: `postgres://fleet_ledger_app:s3cret@127.0.0.1:${await closedPort()}/fleet_ledger` });
    try {
      await h.app.inject({ method: 'POST', url: '/v1/nodes', headers: bearer('operator'), payload: registration('dc1-r01-n01') });
      await h.caughtUp();
      const summary = await h.app.inject({ method: 'GET', url: '/v1/liveness/summary', headers: bearer('analyst') });
      expect(summary.statusCode, summary.body).toBe(200);
      expect(summary.headers['fleet-ledger-read-from']).toBe('primary');
      expect(summary.headers['fleet-ledger-primary-reason']).toBe('replica-unavailable');
      expect(summary.json()).toMatchObject({ states: { 'never-contacted': 1 }, readFrom: { source: 'primary', reason: 'replica-unavailable', position: await h.head() } });

      const ready = await h.app.inject({ method: 'GET', url: '/readyz' });
      expect(ready.statusCode).toBe(200);
      expect(ready.json().replica).toMatchObject({ reachable: false, error: 'ECONNREFUSED', primaryHead: await h.head() });
      // The password never leaves the process.
      expect(ready.body).not.toContain('s3cret');
      expect(ready.json().replica.location).toContain(':***@');
      const metrics = (await h.app.inject({ method: 'GET', url: '/metrics' })).body;
      expect(metrics).toMatch(/^fleet_ledger_replica_up 0$/m);
      expect(metrics).toMatch(/^fleet_ledger_replica_lag_positions nan$/im);
    } finally {
      await h.close();
    }
  });
});
