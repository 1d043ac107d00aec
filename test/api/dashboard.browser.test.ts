import { spawnSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it, inject } from 'vitest';
import { systemTools } from '../support/system-tool.js';
import { fleetProjections } from '../../projections/index.js';
import { buildApi, type ZodApp } from '../../src/api/index.js';
import { ClusterMember } from '../../src/cluster/index.js';
import { registerSimulatedFleet, simulatorCredentials } from '../../src/demo/demo-fleet.js';
import { EventStore, ProjectionRunner } from '../../src/ledger/index.js';
import { Poller } from '../../src/poller/index.js';
import { startSimulator, type Simulator } from '../../src/sim/index.js';
import { freshDatabase } from '../support/backends.js';
import { previewRollout, requestRollout } from '../../sagas/index.js';
import { tokens, tokenTable } from './support/api-harness.js';

const chromiumArgs = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];

const chromiumPath = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const browserTools = systemTools([chromiumPath], 'apt-get install chromium');
const promtool = systemTools(['promtool'], 'apt-get install prometheus');

describe.skipIf(!browserTools.runnable)(browserTools.title('the dashboard in a browser'), () => {
  let drop: () => Promise<void>;
  let store: EventStore;
  let runner: ProjectionRunner;
  let simulator: Simulator;
  let poller: Poller;
  let app: ZodApp;
  let browser: Browser;
  let base: string;
  const intents = new AbortController();
  let following: Promise<void>;

  beforeAll(async () => {
    browserTools.require();
    const started = Date.now();
    const mark = (what: string) => process.env.FLEET_LEDGER_TEST_TIMING && process.stderr.write(`setup ${what}: ${Date.now() - started} ms\n`);
    const database = await freshDatabase(inject('embeddedAdminUrl'));
    drop = database.drop;
    store = await EventStore.open({ connectionString: database.url, pollIntervalMs: 200 });
    runner = new ProjectionRunner(store, fleetProjections({ liveness: { darkAfterMisses: 3 } }), { batchSize: 500 });
    await runner.start();
    mark('ledger');
    // A dark BMC drops connections at once, so misses are recorded within the test's time.
    simulator = await startSimulator({ bmcs: 60, seed: 42, behaviour: { darkMode: 'refuse', latencyScale: 0.1 } });
    mark('simulator');
    await registerSimulatedFleet(store, simulator.bmcs, 1);
    mark('registered');
    poller = new Poller({
      store,
      credentials: simulatorCredentials(simulator),
      plainHttpSites: ['*'],
      // Short deadlines everywhere: a read in flight when the PDU fails must not hold the teardown for minutes.
      policy: { requestTimeoutMs: 1000, firmwareTimeoutMs: 3000, flushIntervalMs: 500, breakerThreshold: 1000, maxRetries: 0, intervals: { health: 3600, inventory: 10, firmware: 3600 } },
    });
    following = poller.followIntents(intents.signal);
    poller.start();
    app = await buildApi({ store, runner, poller, simulator, tokens: tokenTable });
    base = await app.listen({ port: 0, host: '127.0.0.1' });
    browser = await chromium.launch({ executablePath: chromiumPath, args: chromiumArgs });
    mark('browser');
  });

  afterAll(async () => {
    const timed = async (what: string, run: () => Promise<unknown> | undefined) => {
      const started = Date.now();
      await run();
      if (process.env.FLEET_LEDGER_TEST_TIMING) process.stderr.write(`teardown ${what}: ${Date.now() - started} ms\n`);
    };
    await timed('browser', () => browser?.close());
    await timed('api', () => app?.close());
    intents.abort();
    await timed('intents', () => following?.catch(() => undefined));
    await timed('poller', () => poller?.stop());
    await timed('simulator', () => simulator?.close());
    await timed('runner', () => runner?.stop());
    await timed('store', () => store?.close());
    await timed('database', () => drop?.());
  });

  it('shows every node, turns a rack dark when its PDU fails, and raises one root-cause alarm', async () => {
    const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
    const errors: string[] = [];
    page.on('pageerror', (error) => errors.push(String(error)));
    await page.goto(`${base}/?token=${tokens.analyst}`);
    await page.waitForFunction(() => document.getElementById('node-count')?.textContent === '60', undefined, { timeout: 15_000 });
    await page.waitForFunction(() => Number(document.getElementById('count-healthy')?.textContent) === 60, undefined, { timeout: 20_000, polling: 250 });
    await page.waitForFunction(() => document.getElementById('feed-status')?.dataset.state === 'live', undefined, { timeout: 5_000 });

    const pdu = simulator.bmcs[0]!.pdu;
    const racks = [...new Set(simulator.bmcs.filter((b) => b.pdu === pdu).map((b) => b.rack))];
    const fed = simulator.bmcs.filter((b) => b.pdu === pdu).length;
    simulator.injectFault({ fault: 'dark', target: { pdu }, duration: '5m' });

    await page.waitForFunction(
      (rackIds) => rackIds.every((rack) => {
        const states = (window as any).fleetDashboard.rackStates(rack) as string[];
        return states.length > 0 && states.every((s) => s === 'dark');
      }),
      racks,
      { timeout: 25_000, polling: 250 },
    );
    expect(Number(await page.textContent('#count-dark'))).toBe(fed);
    await page.waitForSelector('#alarms li[data-kind="root-cause"]', { timeout: 10_000 });
    // One line for the whole PDU: the node alarms are folded under it.
    await page.waitForFunction(() => document.querySelectorAll('#alarms li[data-kind="node-dark"]').length === 0, undefined, { timeout: 10_000 });
    expect(await page.locator('#alarms li[data-kind="root-cause"]').count()).toBe(1);
    expect(await page.textContent('#alarms li[data-kind="root-cause"]')).toContain(pdu);

    // The gap timeline of the dark rack.
    await page.evaluate(() => document.getElementById('fleet-section')?.scrollIntoView());
    const canvas = await page.locator('#fleet').boundingBox();
    await page.mouse.click(canvas!.x + 20, canvas!.y + 40);
    await page.waitForFunction(() => /gaps/.test(document.getElementById('timeline-title')?.textContent ?? ''), undefined, { timeout: 5_000 });

    // The metrics of a running fleet (poller, simulator, projections) pass promtool too.
    const metrics = await (await fetch(`${base}/metrics`)).text();
    expect(metrics).toMatch(/fleet_ledger_polls_total\{outcome="success"\} [1-9]/);
    expect(metrics).toMatch(/fleet_ledger_dark_nodes [1-9]/);
    expect(metrics).toContain('fleet_ledger_open_alarms{kind="root-cause"} 1');
    // promtool is required on CI; off CI without it this one check is left out (the title of the promtool test
    // in health-and-metrics.test.ts names the reason).
    if (promtool.runnable) {
      promtool.require();
      const check = spawnSync('promtool', ['check', 'metrics'], { input: metrics, encoding: 'utf8' });
      expect(`${check.stdout ?? ''}${check.stderr ?? ''}${check.error ?? ''}`.trim()).toBe('');
    }

    mkdirSync('test-artifacts', { recursive: true });
    await page.screenshot({ path: 'test-artifacts/dashboard.png', fullPage: true });
    expect(errors).toEqual([]);
  }, 60_000);

  it('shows a rollout with a row per wave and a cell per node, coloured by what became of it', async () => {
    const candidates = simulator.bmcs.map((bmc) => ({ nodeId: bmc.id, site: bmc.site, rack: bmc.rack, pdu: bmc.pdu, tor: bmc.tor, cdu: bmc.cdu }));
    const plan = previewRollout({ firmware: { component: 'BMC', version: '9.9.9', imageUri: 'http://images.example/bmc-9.9.9.bin', method: 'SimpleUpdate', applyTime: 'Immediate' }, selector: {}, seed: 4 }, candidates);
    await requestRollout(store, 'panel-1', plan, { kind: 'operator', id: 'alice' });
    const canary = plan.targets.filter((target) => target.wave === 0);
    const saga = { kind: 'saga' as const, id: 'rollout:panel-1' };
    await store.append('rollout-panel-1', [
      { type: 'RolloutApproved', data: { rolloutId: 'panel-1', reason: 'test' }, actor: { kind: 'operator', id: 'alice' } },
      { type: 'RolloutStarted', data: { rolloutId: 'panel-1' }, actor: saga },
      { type: 'WaveOpened', data: { rolloutId: 'panel-1', wave: 0, nodes: canary.length }, actor: saga },
      { type: 'NodeDispatched', data: { rolloutId: 'panel-1', nodeId: canary[0]!.nodeId, wave: 0, slotId: `panel-1:${canary[0]!.nodeId}` }, actor: saga },
      { type: 'NodeOutcomeRecorded', data: { rolloutId: 'panel-1', nodeId: canary[0]!.nodeId, wave: 0, outcome: 'failed', detail: 'task Exception' }, actor: saga },
      { type: 'RolloutHalted', data: { rolloutId: 'panel-1', reason: 'canary-failed', detail: '1 of 1 canary nodes failed' }, actor: saga },
    ]);
    const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
    await page.goto(`${base}/?token=${tokens.analyst}`);
    await page.waitForSelector('.rollout[data-rollout="panel-1"]', { timeout: 15_000 });
    expect(await page.textContent('.rollout[data-rollout="panel-1"] .status')).toBe('halted (canary-failed)');
    expect(await page.locator('.rollout[data-rollout="panel-1"] .wave').count()).toBe(plan.waves.length);
    expect(await page.locator('.rollout[data-rollout="panel-1"] .cell').count()).toBe(plan.targets.length);
    expect(await page.locator('.rollout[data-rollout="panel-1"] .cell[data-state="failed"]').count()).toBe(1);
    await page.close();
  }, 60_000);

  it('the cluster panel shows which process polls which site, under which lease epoch', async () => {
    const member = new ClusterMember({ pool: store.pool, processId: 'panel-proc', leaseTtlMs: 60_000 });
    member.shardOf('panel-site', 'panel-n01');
    await member.tickNow();
    try {
      const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
      await page.goto(`${base}/?token=${tokens.analyst}`);
      const row = page.locator('#cluster tr[data-shard="panel-site"]');
      await row.waitFor({ timeout: 15_000 });
      expect(await row.getAttribute('data-state')).toBe('held');
      expect(await row.locator('td').allTextContents()).toEqual(expect.arrayContaining(['panel-site', 'panel-proc', '1']));
      await page.close();
    } finally {
      await member.stop();
    }
  }, 60_000);
});
