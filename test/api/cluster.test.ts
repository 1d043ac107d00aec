import { spawnSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, inject, it, vi } from 'vitest';
import { buildApi, type ZodApp } from '../../src/api/index.js';
import * as clusterCommand from '../../src/cli/commands/cluster.js';
import { ClusterMember } from '../../src/cluster/index.js';
import { EventStore } from '../../src/ledger/index.js';
import { Poller } from '../../src/poller/index.js';
import { SagaOwnership } from '../../sagas/index.js';
import { freshDatabase } from '../support/backends.js';
import { systemTools } from '../support/system-tool.js';
import { until } from '../poller/support/until.js';
import { bearer, tokens, tokenTable } from './support/api-harness.js';

const promtool = systemTools(['promtool'], 'apt-get install prometheus');

/** Runs a command in-process and captures what it prints. */
async function cli(argv: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const out = vi.spyOn(process.stdout, 'write').mockImplementation((chunk: any) => ((stdout += String(chunk)), true));
  const err = vi.spyOn(process.stderr, 'write').mockImplementation((chunk: any) => ((stderr += String(chunk)), true));
  try {
    return { code: await clusterCommand.run(argv), stdout, stderr };
  } finally {
    out.mockRestore();
    err.mockRestore();
  }
}

/**
 * The cluster's faces: `/v1/cluster`, `fleet-ledger cluster status` and the cluster metrics, all read from the
 * database's tables, so any process answers for every process. Three members on one database: `proc-a` (answering,
 * with a poller), `proc-b` (takes a shard over from `proc-a`, then stops), `proc-c` (stops renewing: a dead process).
 */
describe('the cluster as the API, the command line and the metrics show it', () => {
  let store: EventStore;
  let drop: () => Promise<void>;
  let app: ZodApp;
  let url: string;
  let poller: Poller;
  let a: ClusterMember;
  let b: ClusterMember;
  let c: ClusterMember;

  const cluster = async (role: 'analyst' | 'operator' | 'auditor' = 'analyst') => {
    const response = await app.inject({ method: 'GET', url: '/v1/cluster', headers: bearer(role) });
    expect(response.statusCode, response.body).toBe(200);
    return response.json();
  };
  const shard = (answer: any, name: string) => answer.shards.find((s: any) => s.shard === name);
  const member = (answer: any, processId: string) => answer.processes.find((p: any) => p.processId === processId);

  beforeAll(async () => {
    const database = await freshDatabase(inject('embeddedAdminUrl'));
    drop = database.drop;
    store = await EventStore.open({ connectionString: database.url });
    a = new ClusterMember({
      pool: store.pool,
      processId: 'proc-a',
      leaseTtlMs: 60_000,
      apiUrl: 'http://127.0.0.1:8081',
      // Its poller is never started and its shards' first visits are an hour away: no BMC is contacted.
      onAcquired: (name, lease) => void poller.activateShard(name, lease.epoch, Date.now() + 3_600_000),
      onRelease: (name) => poller.deactivateShard(name),
    });
    poller = new Poller({ store, credentials: { get: () => undefined }, cluster: a });
    poller.addTarget({ nodeId: 'ams1-n01', site: 'ams1', rack: 'r01', baseUrl: 'https://ams1-n01.bmc', credentialRef: 'bmc', expectedIntervalS: 60 });
    a.shardOf('fra1', 'fra1-n01');
    await a.tickNow(); // alone: it takes both sites

    b = new ClusterMember({ pool: store.pool, processId: 'proc-b', leaseTtlMs: 60_000 });
    b.shardOf('ams1', 'ams1-n01');
    b.shardOf('fra1', 'fra1-n01');
    await b.tickNow(); // fra1 falls to it, but proc-a holds it live: proc-a hands it over first
    await a.tickNow();
    await until(async () => (await store.pool.query(`SELECT released FROM cluster_leases WHERE shard = 'fra1'`)).rows[0]?.released === true, 5_000, 'proc-a released fra1');
    await b.tickNow();

    // proc-c polls par1 (pinned) under a short lease, then never renews: a process that died.
    c = new ClusterMember({ pool: store.pool, processId: 'proc-c', leaseTtlMs: 300, pinned: ['par1'] });
    c.shardOf('par1', 'par1-n01');
    c.shardOf('lon1', 'lon1-n01'); // a site known but not leased by anyone yet
    await c.tickNow();

    app = await buildApi({ store, poller, cluster: a, tokens: tokenTable });
    url = await app.listen({ port: 0, host: '127.0.0.1' });
  });

  afterAll(async () => {
    await app?.close();
    await a?.stop();
    await b?.stop();
    await poller?.stop();
    await store?.close();
    await drop?.();
  });

  it('lists every process with the shards it holds, and every shard with its owner, epoch, state and hand-overs', async () => {
    await until(async () => shard(await cluster(), 'par1')?.state === 'expired', 5_000, "proc-c's lease on par1 ran out");
    const answer = await cluster();
    expect(answer.answeredBy).toBe('proc-a');
    expect(Date.parse(answer.at)).not.toBeNaN();
    expect(answer.processes.map((p: any) => p.processId)).toEqual(['proc-a', 'proc-b', 'proc-c']);
    expect(member(answer, 'proc-a')).toMatchObject({ alive: true, apiUrl: 'http://127.0.0.1:8081', pinned: null, pid: process.pid, shards: [{ shard: 'ams1', site: 'ams1', epoch: 1, state: 'held', targets: 1 }] });
    expect(member(answer, 'proc-a').shards[0].expiresInS).toBeGreaterThan(50);
    expect(member(answer, 'proc-b')).toMatchObject({ alive: true, shards: [{ shard: 'fra1', epoch: 2, state: 'held' }] });
    expect(member(answer, 'proc-b').shards[0].targets).toBeUndefined(); // polled in another process: not known here
    expect(member(answer, 'proc-c')).toMatchObject({ alive: false, pinned: ['par1'], shards: [{ shard: 'par1', epoch: 1, state: 'expired' }] });
    expect(member(answer, 'proc-c').shards[0].expiresInS).toBeLessThan(0);

    expect(answer.shards.map((s: any) => s.shard)).toEqual(['ams1', 'fra1', 'lon1', 'par1']);
    expect(shard(answer, 'ams1')).toMatchObject({ owner: 'proc-a', epoch: 1, state: 'held', released: false, previousOwner: null, handovers: 0, targets: 1 });
    expect(shard(answer, 'fra1')).toMatchObject({ owner: 'proc-b', epoch: 2, state: 'held', released: false, previousOwner: 'proc-a', handovers: 1 });
    expect(shard(answer, 'lon1')).toMatchObject({ owner: null, epoch: 0, state: 'unheld', expiresAt: null, expiresInS: null, handovers: 0 });
    expect(shard(answer, 'par1')).toMatchObject({ owner: 'proc-c', epoch: 1, state: 'expired' });
  });

  it("a stopped process's shards show released, and the process leaves the list", async () => {
    await b.stop();
    const answer = await cluster();
    expect(shard(answer, 'fra1')).toMatchObject({ owner: 'proc-b', epoch: 2, state: 'released', released: true, handovers: 1 });
    expect(answer.processes.map((p: any) => p.processId)).toEqual(['proc-a', 'proc-c']);
  });

  it('every person may read it, an agent may not, and nobody without a token', async () => {
    for (const role of ['operator', 'auditor'] as const) expect((await cluster(role)).answeredBy).toBe('proc-a');
    expect((await app.inject({ method: 'GET', url: `/v1/cluster?token=${tokens.analyst}` })).statusCode).toBe(200); // the dashboard's way
    const agent = await app.inject({ method: 'GET', url: '/v1/cluster', headers: bearer('agent') });
    expect(agent.statusCode).toBe(403);
    expect(agent.json().error.code).toBe('API_FORBIDDEN');
    expect((await app.inject({ method: 'GET', url: '/v1/cluster' })).json().error.code).toBe('API_UNAUTHORIZED');
    const document = (await app.inject({ method: 'GET', url: '/openapi.json' })).json();
    expect(Object.keys(document.paths['/v1/cluster'].get.responses['200'].content['application/json'].schema.properties).sort()).toEqual(['answeredBy', 'at', 'processes', 'sagas', 'shards']);
  });

  it('the metrics count processes alive and shards by state, and give each shard its epoch and hand-overs', async () => {
    const text = (await app.inject({ method: 'GET', url: '/metrics' })).body;
    for (const line of [
      'fleet_ledger_cluster_processes 1',
      'fleet_ledger_cluster_shards{state="held"} 1',
      'fleet_ledger_cluster_shards{state="expired"} 1',
      'fleet_ledger_cluster_shards{state="released"} 1',
      'fleet_ledger_cluster_shards{state="unheld"} 1',
      'fleet_ledger_cluster_lease_epoch{shard="fra1"} 2',
      'fleet_ledger_cluster_lease_epoch{shard="lon1"} 0',
      'fleet_ledger_cluster_handovers_total{shard="fra1"} 1',
      'fleet_ledger_cluster_handovers_total{shard="ams1"} 0',
      'fleet_ledger_cluster_shards_held 1',
      'fleet_ledger_cluster_drains_abandoned_total 0',
      'fleet_ledger_poll_appends_fenced_total 0',
    ]) {
      expect(text.split('\n'), line).toContain(line);
    }
    if (promtool.runnable) {
      promtool.require();
      const check = spawnSync('promtool', ['check', 'metrics'], { input: text, encoding: 'utf8' });
      expect(`${check.stdout ?? ''}${check.stderr ?? ''}${check.error ?? ''}`.trim()).toBe('');
    }
  });

  it('fleet-ledger cluster status prints the processes and the shards, or the JSON answer', async () => {
    const shown = await cli(['status', '--url', url, '--token', tokens.analyst]);
    expect(shown.code, shown.stderr).toBe(0);
    expect(shown.stdout).toContain('answered by proc-a');
    expect(shown.stdout).toMatch(/^proc-a\s+\S+:\d+\s+yes\s+.*ams1 \(epoch 1, \d+s\)/m);
    expect(shown.stdout).toMatch(/^proc-c\s+\S+:\d+\s+no\s+.*par1 \(epoch 1, expired \d+s ago\)/m);
    expect(shown.stdout).toMatch(/^fra1\s+fra1\s+proc-b\s+2\s+released\s+-\s+1\s+proc-a/m);
    const json = await cli(['status', '--json', '--url', url, '--token', tokens.auditor]);
    expect(JSON.parse(json.stdout)).toMatchObject({ answeredBy: 'proc-a', shards: expect.arrayContaining([expect.objectContaining({ shard: 'ams1', owner: 'proc-a' })]) });
  });

  it('every saga shows the epoch its appends are fenced with, who took it, and whether a process drives it now', async () => {
    const first = new SagaOwnership(store.connectionString);
    const second = new SagaOwnership(store.connectionString);
    try {
      const taken = await first.tryTake('rollout:fw-cluster');
      expect(taken?.epoch).toBe(1);
      const driven = (await cluster()).sagas.find((s: any) => s.saga === 'rollout:fw-cluster');
      expect(driven).toMatchObject({ epoch: 1, held: true, owner: expect.stringMatching(/:\d+$/) });
      await taken!.release();
      expect((await cluster()).sagas.find((s: any) => s.saga === 'rollout:fw-cluster')).toMatchObject({ epoch: 1, held: false });
      // Another process takes it: a new epoch, driven again.
      const again = await second.tryTake('rollout:fw-cluster');
      expect((await cluster()).sagas.find((s: any) => s.saga === 'rollout:fw-cluster')).toMatchObject({ epoch: 2, held: true });
      const shown = await cli(['status', '--url', url, '--token', tokens.analyst]);
      expect(shown.stdout).toMatch(/^sagas\n/m);
      expect(shown.stdout).toMatch(/^rollout:fw-cluster\s+2\s+\S+:\d+\s+\S+\s+yes/m);
      await again!.release();
    } finally {
      await first.close();
      await second.close();
    }
  });

  it('fleet-ledger cluster status says plainly when the API cannot be reached, and refuses a bad verb', async () => {
    const unreachable = await cli(['status', '--url', 'http://127.0.0.1:1', '--token', tokens.analyst]);
    expect(unreachable.code).toBe(1);
    expect(unreachable.stderr).toMatch(/^cluster: CLI_UNREACHABLE: cannot reach http:\/\/127\.0\.0\.1:1: .*is a fleet-ledger start running there\?/);
    expect((await cli(['status', '--url', url, '--token', tokens.agent])).code).toBe(3);
    expect((await cli(['frobnicate', '--url', url])).code).toBe(2);
  });
});
