import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerSimulatedFleet, simulatorCredentials } from '../../src/demo/demo-fleet.js';
import { Poller } from '../../src/poller/index.js';
import { startSimulator, type Simulator } from '../../src/sim/index.js';
import { SagaSupervisor } from '../../sagas/index.js';
import { bearer, openApiHarness, type ApiHarness } from '../api/support/api-harness.js';

/**
 * Rollouts as operators and analysts drive them through the API, against 12 simulated BMCs, with the engine
 * running in a supervisor (as in `fleet-ledger start`) that is stopped and started again like a restarted process.
 */
describe('rollouts through the API', () => {
  let harness: ApiHarness;
  let sim: Simulator;
  let poller: Poller;
  let supervisor: SagaSupervisor | undefined;
  const intents = new AbortController();
  const fast = { timing: { pollIntervalMs: 150, readIntervalMs: 150, probeIntervalMs: 300, retryBackoffMs: 200 }, tickMs: 150, gateRetryMs: 300, requestTimeoutMs: 3_000 };
  const startSupervisor = (): void => {
    supervisor = new SagaSupervisor({
      store: harness.store,
      scanMs: 300,
      engine: fast,
      access: (nodeId) => {
        const bmc = sim.fleet().find((candidate) => candidate.id === nodeId);
        return bmc ? { baseUrl: bmc.baseUrl, username: bmc.username, password: bmc.password } : undefined;
      },
    });
    supervisor.start();
  };
  const get = async (id: string, role: 'operator' | 'analyst' = 'operator') => (await harness.app.inject({ method: 'GET', url: `/v1/rollouts/${id}`, headers: bearer(role) })).json();
  const post = (url: string, body: unknown, role: 'operator' | 'analyst' = 'operator') => harness.app.inject({ method: 'POST', url, headers: bearer(role), payload: body as Record<string, unknown> });
  const until = async (what: string, check: () => Promise<boolean>, ms = 30_000): Promise<void> => {
    const end = Date.now() + ms;
    while (Date.now() < end) {
      if (await check()) return;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    throw new Error(`timed out waiting for ${what}`);
  };

  beforeAll(async () => {
    harness = await openApiHarness();
    sim = await startSimulator({ bmcs: 14, seed: 5, behaviour: { latencyScale: 0.02, firmwareUpdateMs: 800, resetDarkMs: 500, darkMode: 'refuse', imageFailureRates: { 'bad-image': 1 } } });
    await registerSimulatedFleet(harness.store, sim.bmcs, 2);
    poller = new Poller({ store: harness.store, credentials: simulatorCredentials(sim), plainHttpSites: ['*'], policy: { intervals: { health: 86_400, inventory: 86_400, firmware: 86_400 }, flushIntervalMs: 500 } });
    void poller.followIntents(intents.signal);
    poller.start();
    await harness.caughtUp();
    startSupervisor();
  }, 60_000);
  afterAll(async () => {
    await supervisor?.stop();
    intents.abort();
    await poller?.stop();
    await sim?.close();
    await harness?.close();
  });

  const image = (name: string) => `${sim.controlUrl}/sim/images/${name}`;
  /** Rollouts take the first 12 BMCs; the last two are left to provisioning. */
  const rolloutNodes = () => ({ nodes: sim.bmcs.slice(0, 12).map((bmc) => bmc.id) });

  it('a preview plans without recording anything; an analyst may read rollouts but not start one', async () => {
    const before = await harness.head();
    const preview = await post('/v1/rollouts/preview', { firmware: { component: 'BMC', version: '9.1.0', imageUri: image('bmc-9.1.0.bin') }, selector: rolloutNodes(), seed: 1 });
    expect(preview.statusCode).toBe(200);
    expect(preview.json().targetCount).toBe(12);
    // The poller records its outcomes meanwhile (a batch every 500 ms); the preview itself records nothing.
    const since = await harness.store.readAll({ fromPosition: before + 1, limit: 1_000 });
    expect(since.filter((event) => !event.stream.startsWith('polls-')).map((event) => `${event.stream} ${event.type}`)).toEqual([]);
    const refused = await post('/v1/rollouts', { firmware: { component: 'BMC', version: '9.1.0', imageUri: image('bmc-9.1.0.bin') } }, 'analyst');
    expect(refused.statusCode).toBe(403);
    expect((await harness.app.inject({ method: 'GET', url: '/v1/rollouts', headers: bearer('analyst') })).statusCode).toBe(200);
  });

  it('a canary whose image fails on the BMC halts the rollout before wave 1, and abort stays in force after a restart', async () => {
    const created = await post('/v1/rollouts', { rolloutId: 'bad-canary', firmware: { component: 'BMC', version: '9.2.0', imageUri: image('bad-image-9.2.0.bin') }, selector: rolloutNodes(), seed: 2, retryBudget: 0, bakeMs: 0 });
    expect(created.statusCode).toBe(201);
    expect(created.json().status).toBe('awaiting-approval');
    // The engine picks the rollout up before it is approved; the approval must reach it while it runs.
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    const approved = await post('/v1/rollouts/bad-canary/approve', { reason: 'vendor advisory 2026-17', expectedRevision: created.json().revision });
    expect(approved.statusCode).toBe(200);
    await until('the halt', async () => (await get('bad-canary')).status === 'halted');
    const halted = await get('bad-canary', 'analyst');
    expect(halted.stopReason).toBe('canary-failed');
    expect(halted.nodes.filter((node: { wave: number; state: string }) => node.wave > 0 && node.state !== 'pending')).toEqual([]);
    expect(sim.updateStats().failed).toBeGreaterThan(0);

    const aborted = await post('/v1/rollouts/bad-canary/abort', { reason: 'bad image; a new rollout will follow' });
    expect(aborted.json().status).toBe('aborted');
    const resumed = await post('/v1/rollouts/bad-canary/resume', { reason: 'try again' });
    expect(resumed.statusCode).toBe(409);
    expect(resumed.json().error.code).toBe('API_CONFLICT');

    await supervisor!.stop();
    const dispatchedBefore = (await get('bad-canary')).nodes.filter((node: { state: string }) => node.state !== 'pending').length;
    startSupervisor();
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    const after = await get('bad-canary');
    expect(after.status).toBe('aborted');
    expect(after.nodes.filter((node: { state: string }) => node.state !== 'pending').length).toBe(dispatchedBefore);
  }, 60_000);

  it('a gate whose projection lags holds the rollout at the wave, and it advances once the projection catches up', async () => {
    await harness.runner.stop();
    const created = await post('/v1/rollouts', { rolloutId: 'lagging-gate', firmware: { component: 'BMC', version: '9.3.0', imageUri: image('bmc-9.3.0.bin') }, selector: rolloutNodes(), seed: 3, bakeMs: 0, capPerSite: 2, gate: { maxLagMs: 1_500 } });
    expect(created.statusCode).toBe(201);
    await post('/v1/rollouts/lagging-gate/approve', { reason: 'routine' });
    const gates = async () => (await harness.store.readStream('rollout-lagging-gate')).filter((event) => event.type === 'GateEvaluated').map((event) => (event.data as { verdict: string }).verdict);
    await until('an inconclusive gate', async () => (await gates()).includes('inconclusive'));
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect((await get('lagging-gate')).currentWave).toBe(0);
    expect(await gates()).not.toContain('pass');
    await harness.runner.start();
    await until('the gate to pass and the wave to advance', async () => (await get('lagging-gate')).currentWave > 0, 40_000);
    expect(await gates()).toContain('pass');
  }, 90_000);

  it('provisioning takes a node through access, inventory, BOM validation, a firmware baseline and burn-in to ready', async () => {
    const node = sim.bmcs[10]!;
    const started = await post('/v1/provisioning', {
      nodeId: node.id,
      declared: node.model ? { model: node.model } : {},
      baseline: [{ component: 'BMC', version: '9.4.0', imageUri: image('bmc-9.4.0.bin') }],
      burnInMs: 1_500,
      burnInIntervalMs: 300,
    });
    expect(started.statusCode).toBe(201);
    await until('ready', async () => (await harness.app.inject({ method: 'GET', url: `/v1/provisioning/${node.id}`, headers: bearer('analyst') })).json().stage === 'ready', 60_000).catch(async (error) => {
      const streams = await harness.store.readAll({});
      for (const event of streams.filter((e) => e.stream.includes(node.id) && !e.stream.startsWith('polls'))) process.stderr.write(`DBG ${event.stream} ${event.type} ${JSON.stringify(event.data).slice(0, 200)}\n`);
      throw error;
    });
    const ready = (await harness.app.inject({ method: 'GET', url: `/v1/provisioning/${node.id}`, headers: bearer('operator') })).json();
    expect(ready.baseline).toEqual([{ component: 'BMC', version: '9.4.0', outcome: 'updated' }]);
    expect(sim.fleet().find((bmc) => bmc.id === node.id)!.firmware).toBe('9.4.0');
    const types = (await harness.store.readStream(`provision-${node.id}`)).map((event) => event.type);
    expect(types).toEqual(expect.arrayContaining(['BmcAccessVerified', 'InventoryCollected', 'BomValidated', 'BaselineComponentSettled', 'BurnInStarted', 'BurnInObserved', 'NodeReady']));
    await until('the slot to be released', async () => {
      const capacity = await harness.store.readStream(`capacity-${node.site}`);
      const mine = capacity.filter((event) => (event.data as { nodeId: string }).nodeId === node.id && (event.data as { sagaId: string }).sagaId === `provision-${node.id}`);
      return mine.some((event) => event.type === 'SlotReleased');
    });
  }, 90_000);

  it('a node that differs from its bill of materials is quarantined with the differences, and stays so until an operator acts', async () => {
    const node = sim.bmcs[11]!;
    await post('/v1/provisioning', { nodeId: node.id, declared: { model: 'NOT-THIS-MODEL-9000' }, burnInMs: 0 });
    await until('the quarantine', async () => (await harness.app.inject({ method: 'GET', url: `/v1/provisioning/${node.id}`, headers: bearer('operator') })).json().stage === 'quarantined');
    const quarantined = (await harness.app.inject({ method: 'GET', url: `/v1/provisioning/${node.id}`, headers: bearer('operator') })).json();
    expect(quarantined.quarantine.stage).toBe('validating');
    expect(quarantined.quarantine.reason).toContain('NOT-THIS-MODEL-9000');
    const mismatch = (await harness.store.readStream(`provision-${node.id}`)).find((event) => event.type === 'BomMismatchDetected');
    expect((mismatch!.data as { differences: Array<{ field: string }> }).differences[0]!.field).toBe('model');
    const wrongVerb = await post(`/v1/provisioning/${node.id}/release`, { reason: 'x', resumeAt: 'nowhere' });
    expect(wrongVerb.statusCode).toBe(400);
    const abandoned = await post(`/v1/provisioning/${node.id}/abandon`, { reason: 'wrong chassis delivered; RMA 4411' });
    expect(abandoned.json().stage).toBe('abandoned');
    const again = await post(`/v1/provisioning/${node.id}/abandon`, { reason: 'twice' });
    expect(again.statusCode).toBe(409);
  }, 60_000);
});
