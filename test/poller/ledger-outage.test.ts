/**
 * PostgreSQL stopped for 20 s in the middle of a 2,000-BMC poll, then started again. The BMCs keep answering; only
 * the ledger is gone. The poller keeps polling and holds its outcomes within a bounded, reported budget; once the
 * ledger is back they are all recorded (nothing acknowledged before is lost, nothing recorded twice), the
 * projections resume by themselves, and no node is read as dark because the ledger, not the node, was away.
 */
import type { ChildProcess } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { simJson, startSimProcess, type SimBmc } from '../../bench/support/sim-process.js';
import { fleetProjections } from '../../projections/index.js';
import { EventStore, ProjectionRunner, startEmbeddedPostgres, type EmbeddedPostgresHandle } from '../../src/ledger/index.js';
import { Poller } from '../../src/poller/index.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const INTERVAL_S = 5;
/** Four intervals: long enough that every BMC is checked several times while the ledger is away. */
const OUTAGE_S = 20;

describe('the ledger stopped for 20 s during a 2,000-BMC poll', { timeout: 300_000 }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'fl-outage-'));
  chmodSync(dir, 0o755); // as root, PostgreSQL runs as the postgres user, which must enter the folder
  let postgres: EmbeddedPostgresHandle;
  let sim: { child: ChildProcess; controlUrl: string };
  let store: EventStore;
  let runner: ProjectionRunner;
  let poller: Poller;
  const during = { pendingPeak: 0, headBefore: 0 };

  beforeAll(async () => {
    postgres = await startEmbeddedPostgres({ dataDir: join(dir, 'data') });
    sim = await startSimProcess(['--bmcs', '2000', '--seed', '11']);
    const fleet = (await simJson<{ bmcs: SimBmc[] }>(`${sim.controlUrl}/sim/fleet`)).bmcs;
    store = await EventStore.open({ connectionString: postgres.connectionString, poolSize: 4, pollIntervalMs: 500 });
    runner = new ProjectionRunner(store, fleetProjections().filter((projection) => projection.name === 'liveness'));
    await runner.start();
    await Promise.all(
      fleet.map((bmc) =>
        store.append(`node-${bmc.id}`, [
          {
            type: 'NodeRegistered',
            data: { nodeId: bmc.id, site: bmc.site, rack: bmc.rack, bmc: { protocol: 'redfish', address: bmc.baseUrl, credentialRef: bmc.id, sessionLimit: bmc.sessionLimit }, expectedIntervalS: INTERVAL_S },
            actor: { kind: 'operator', id: 'outage-test' },
          },
        ]),
      ),
    );
    const credentials = new Map(fleet.map((bmc) => [bmc.id, { username: bmc.username, password: bmc.password, version: '1', endpoints: [new URL(bmc.baseUrl).origin] }]));
    poller = new Poller({
      store,
      credentials: { get: (ref) => credentials.get(ref) },
      plainHttpSites: ['*'],
      policy: { intervals: { health: 86_400, inventory: 86_400, firmware: 86_400 }, firstReadSpreadS: 86_400, flushIntervalMs: 1_000, requestTimeoutMs: 2_500, maxConcurrentVisits: 512 },
    });
    for (const bmc of fleet) {
      poller.addTarget({ nodeId: bmc.id, site: bmc.site, rack: bmc.rack, baseUrl: bmc.baseUrl, credentialRef: bmc.id, sessionLimit: bmc.sessionLimit, expectedIntervalS: INTERVAL_S }, { spreadFirstVisit: true });
    }
    poller.start();
    await sleep(2 * INTERVAL_S * 1000);
    await poller.flush();
    during.headBefore = (await store.head()).position;

    await postgres.stop();
    for (let second = 0; second < OUTAGE_S; second += 1) {
      await sleep(1000);
      during.pendingPeak = Math.max(during.pendingPeak, poller.stats().pendingOutcomes);
    }
    postgres = await startEmbeddedPostgres({ dataDir: join(dir, 'data'), port: postgres.port });

    // Back: the held outcomes go in while the polling goes on, and the liveness projection resumes by itself.
    const waitUntil = async (what: string, done: () => Promise<boolean>): Promise<void> => {
      const deadline = Date.now() + 120_000;
      while (!(await done().catch(() => false))) {
        if (Date.now() > deadline) throw new Error(`${what} not within 120 s: ${JSON.stringify({ stats: poller.stats(), status: await runner.status().catch(() => null) })}`);
        await sleep(500);
      }
    };
    await waitUntil('the held outcomes recorded', async () => poller.stats().pendingOutcomes < 2_000 && (await runner.status())[0]?.state === 'running');
    await poller.stop();
    await poller.flush();
    const head = (await store.head()).position;
    await waitUntil('the liveness projection caught up', async () => ((await runner.status())[0]?.position ?? 0) >= head);
    process.stdout.write(`ledger outage: ${JSON.stringify({ bmcs: 2000, outageS: OUTAGE_S, pendingPeak: during.pendingPeak, outcomes: poller.stats().outcomes.success + poller.stats().outcomes['not-modified'], dropped: poller.stats().outcomesDropped })}\n`);
  }, 300_000);

  afterAll(async () => {
    await poller?.stop().catch(() => undefined);
    await runner?.stop().catch(() => undefined);
    await store?.close().catch(() => undefined);
    sim?.child.kill('SIGTERM');
    await postgres?.stop().catch(() => undefined);
    rmSync(dir, { recursive: true, force: true });
  });

  it('the poller kept polling and held its outcomes within its bounded budget, reported, none dropped', () => {
    expect(during.pendingPeak).toBeGreaterThan(2_000 * 2); // 20 s of checks of 2,000 BMCs every 5 s: about 8,000
    expect(poller.stats().outcomesDropped).toBe(0);
    expect(poller.stats().pendingOutcomes).toBe(0);
  });

  it('every outcome the poller recorded is in the log once, after everything acknowledged before the outage, and the chain verifies', async () => {
    const recorded = Object.values(poller.stats().outcomes).reduce((sum, count) => sum + count, 0);
    let inLog = 0;
    for (let from = 1; ; ) {
      const page = await store.readAll({ fromPosition: from, types: ['PollOutcomesRecorded'], limit: 1000 });
      for (const event of page) inLog += (event.data as { nodeIds: string[] }).nodeIds.length;
      if (page.length < 1000) break;
      from = page[page.length - 1]!.position + 1;
    }
    expect(inLog).toBe(recorded);
    expect((await store.head()).position).toBeGreaterThan(during.headBefore);
    expect((await store.verifyChain()).ok).toBe(true);
  });

  it('no node is dark because the ledger was away: all 2,000 healthy', async () => {
    const rows = await store.db.selectFrom('liveness_nodes' as never).select(['state' as never]).execute();
    const states = rows.map((row) => (row as { state: string }).state);
    expect(states).toHaveLength(2_000);
    expect(states.filter((state) => state !== 'healthy')).toEqual([]);
  });
});
