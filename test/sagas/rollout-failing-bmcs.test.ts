import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EventStore } from '../../src/ledger/index.js';
import { startSimulator, type Simulator } from '../../src/sim/index.js';
import { applyRolloutVerb, loadRollout, previewRollout, requestRollout, RolloutEngine, stepStream, type Candidate, type RolloutRequest } from '../../sagas/index.js';
import { backends, freshDatabase } from '../support/backends.js';

/**
 * A rollout against simulated BMCs that fail the way real ones do, on a profile whose update takes 30 s. The
 * simulator's clock runs 10 times faster than the wall clock and the rollout's policy (its step timing and quiet
 * period) is scaled down by the same factor, so every figure below is in simulated time: what an operator with a
 * 30-s update would see. The engine is stopped once while tasks run and started again (a restart of the process).
 */
const factor = 10;
const sim = (simulatedMs: number): number => simulatedMs / factor;
const updateMs = 30_000;
const verdictBoundMs = 180_000;
const retryBudget = 1;

const fates = {
  'task-lost-after-running': 'lost-after-running',
  'reset-mid-update': 'reset-mid-update',
  'completed-critical': 'completed-critical',
  'refused-naming-the-image': 'refuse-image',
} as const;
type FateName = keyof typeof fates;

describe('a rollout over BMCs that acknowledge an update and then fail it', () => {
  let simulator: Simulator;
  let store: EventStore;
  let drop: () => Promise<void>;
  const nodeOf = new Map<FateName | 'healthy', string>();
  const verdicts = new Map<string, { outcome: string; simulatedMs: number; cause: string }>();
  let duplicateReadings = 0;
  let runningReadingsBeforeRestart = 0;

  beforeAll(async () => {
    const db = await freshDatabase(backends()[0]!.adminUrl!);
    drop = db.drop;
    simulator = await startSimulator({ bmcs: 5, seed: 40, clockFactor: factor, behaviour: { latencyScale: 0.02, firmwareUpdateMs: updateMs, resetDarkMs: 20_000, darkMode: 'refuse' } });
    const ids = simulator.bmcs.map((bmc) => bmc.id);
    const names = [...(Object.keys(fates) as FateName[]), 'healthy' as const];
    names.forEach((name, i) => nodeOf.set(name, ids[i]!));
    for (const name of Object.keys(fates) as FateName[]) simulator.injectFault({ fault: 'update-fault', mode: fates[name], count: 10, target: { bmc: [nodeOf.get(name)!] } });
    store = await EventStore.open({ connectionString: db.url, migrate: true, poolSize: 4 });

    // One rack per node: the whole fleet is the canary, dispatched at once.
    const candidates: Candidate[] = simulator.bmcs.map((bmc) => ({ nodeId: bmc.id, site: bmc.site, rack: `rack-${bmc.id}`, vendor: bmc.vendor, model: bmc.model, fromVersion: bmc.firmware }));
    const request: RolloutRequest = {
      firmware: { component: 'BMC', version: '9.90.10.01', imageUri: `${simulator.controlUrl}/sim/images/bmc/9.90.10.01.bin`, method: 'SimpleUpdate', applyTime: 'Immediate' },
      selector: {},
      seed: 40,
      canaryFraction: 1,
      capPerSite: 10,
      inFlightDomainLimits: { rack: 1 },
      budgets: { canaryFailures: 10, waveFailureRatio: 1, cumulativeFailureRatio: 1 },
      retryBudget,
      stepDeadlineMs: sim(30 * 60_000),
      // What an operator sets for a 30-s update (`--quiet-period 15s --retry-backoff 15s --poll-interval 5s ...`),
      // scaled to the clock.
      quietPeriodMs: sim(15_000),
      stepTiming: { pollIntervalMs: sim(5_000), readIntervalMs: sim(5_000), probeIntervalMs: sim(5_000), settleMs: sim(60_000), retryBackoffMs: sim(15_000), requestTimeoutMs: 2_000 },
    };
    const plan = previewRollout(request, candidates);
    expect(plan.waves).toHaveLength(1);
    const operator = { kind: 'operator' as const, id: 'test@fleet-ledger', role: 'operator' };
    await requestRollout(store, 'failing-bmcs', plan, operator);
    await applyRolloutVerb(store, 'failing-bmcs', { verb: 'approve', reason: 'test' }, operator);

    const access = (nodeId: string) => {
      const bmc = simulator.bmcs.find((candidate) => candidate.id === nodeId);
      return bmc ? { baseUrl: bmc.baseUrl, username: bmc.username, password: bmc.password } : undefined;
    };
    const engineOptions = { store, rolloutId: 'failing-bmcs', access, tickMs: 100 };
    const runningReadings = async (): Promise<number> => {
      let count = 0;
      for (const id of ids) for (const event of await store.readStreamToEnd(stepStream('failing-bmcs', id))) if (event.type === 'BmcTaskObserved' && (event.data as { taskState: string }).taskState === 'Running') count++;
      return count;
    };

    // First process: stopped once every acknowledged task has been read Running (a restart mid-task).
    const first = new AbortController();
    const firstRun = new RolloutEngine(engineOptions).run(first.signal);
    const until = Date.now() + 15_000;
    while ((runningReadingsBeforeRestart = await runningReadings()) < 3 && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 100));
    first.abort();
    await firstRun;

    // Second process: runs until every node has its outcome.
    const second = new AbortController();
    const secondRun = new RolloutEngine(engineOptions).run(second.signal);
    const deadline = Date.now() + 30_000;
    while (Date.now() < deadline) {
      const rollout = await loadRollout(store, 'failing-bmcs');
      if (rollout.outcomes.size === ids.length) break;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    second.abort();
    await secondRun;

    for (const id of ids) {
      const events = await store.readStreamToEnd(stepStream('failing-bmcs', id));
      const started = events.find((event) => event.type === 'StepStarted');
      const end = events.find((event) => event.type === 'StepFailed' || event.type === 'StepSucceeded' || event.type === 'StepHeld');
      if (started && end) {
        verdicts.set(id, {
          outcome: end.type,
          simulatedMs: (end.recordedAt.getTime() - started.recordedAt.getTime()) * factor,
          cause: String((end.data as { cause?: string; reason?: string }).cause ?? (end.data as { reason?: string }).reason ?? ''),
        });
      }
      // The same task reading recorded twice in a row (the restart must not record again what the log holds).
      let last = '';
      for (const event of events) {
        if (event.type === 'UpdateIntentRecorded') last = '';
        if (event.type !== 'BmcTaskObserved') continue;
        const { taskMonitor, taskState, taskStatus, messages } = event.data as { taskMonitor: string; taskState: string; taskStatus: string; messages: string[] };
        const signature = JSON.stringify([taskMonitor, taskState, taskStatus, messages]);
        if (signature === last) duplicateReadings++;
        last = signature;
      }
    }
    process.stderr.write(`rollout over failing BMCs: ${JSON.stringify({ verdicts: Object.fromEntries([...nodeOf].map(([name, id]) => [name, verdicts.get(id)])), posts: Object.fromEntries([...nodeOf].map(([name, id]) => [name, simulator.bmcStats(id)?.updateRequests])), runningReadingsBeforeRestart, duplicateReadings, updates: simulator.updateStats() })}\n`);
  }, 60_000);

  afterAll(async () => {
    await store?.close();
    await simulator?.close();
    await drop?.();
  });

  it('a node whose BMC fails every attempt (task lost after Running, reset mid-update, Completed+Critical, refusal naming the image) is failed well within 3 minutes of a 30-s update', () => {
    for (const name of Object.keys(fates) as FateName[]) {
      const verdict = verdicts.get(nodeOf.get(name)!);
      expect(verdict, name).toBeDefined();
      expect(verdict!.outcome, `${name}: ${verdict!.cause}`).toBe('StepFailed');
      expect(verdict!.simulatedMs, name).toBeLessThan(verdictBoundMs);
    }
    expect(verdicts.get(nodeOf.get('healthy')!)?.outcome).toBe('StepSucceeded');
  });

  it('the POSTs each BMC received never exceed 1 + the retry budget; a refusal naming the image is sent once', () => {
    for (const name of Object.keys(fates) as FateName[]) {
      const posts = simulator.bmcStats(nodeOf.get(name)!)!.updateRequests;
      expect(posts, name).toBe(name === 'refused-naming-the-image' ? 1 : 1 + retryBudget);
    }
    expect(simulator.bmcStats(nodeOf.get('healthy')!)!.updateRequests).toBe(1);
    expect(simulator.updateStats().duplicateSubmissions).toBe(0);
  });

  it('a Completed+Critical task never leads to a reset of the BMC', () => {
    expect(simulator.bmcStats(nodeOf.get('completed-critical')!)!.resets).toBe(0);
  });

  it('a task reading recorded before a restart is not recorded again after it', () => {
    expect(runningReadingsBeforeRestart).toBeGreaterThanOrEqual(3);
    expect(duplicateReadings).toBe(0);
  });
});
