import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  decideRollout,
  decideStep,
  defaultStepTiming,
  domainOf,
  evolveCapacity,
  evolveRollout,
  evolveStep,
  initialCapacity,
  initialRollout,
  initialStep,
  planRollout,
  probeVerdict,
  gateVerdict,
  type Candidate,
  type RolloutRequest,
  type SagaEvent,
  type StepContext,
} from '../../sagas/index.js';

const sha = (text: string): string => createHash('sha256').update(text).digest('hex');
const firmware = { component: 'BMC', version: '9.9.9', imageUri: 'http://img/9.9.9.bin', method: 'SimpleUpdate' as const, applyTime: 'Immediate' as const };
const actor = { kind: 'saga' as const, id: 'test' };
const ev = (type: string, data: unknown, recordedAt = 0): SagaEvent => ({ type, data, actor, recordedAt });

const candidateArb = fc.record({
  rack: fc.integer({ min: 0, max: 9 }),
  pdu: fc.integer({ min: 0, max: 4 }),
  model: fc.constantFrom('R750', 'DL385', 'GB200'),
  fromVersion: fc.constantFrom('1.0', '1.1', '2.0'),
  cordoned: fc.boolean(),
});
const fleetArb = fc.array(candidateArb, { minLength: 1, maxLength: 120 }).map((items) =>
  items.map<Candidate>((item, i) => ({ nodeId: `n${i}`, site: 's1', rack: `r${item.rack}`, pdu: `p${item.pdu}`, tor: `t${item.rack}`, cdu: 'c0', vendor: item.model === 'R750' ? 'dell' : 'other', model: item.model, fromVersion: item.fromVersion, cordoned: item.cordoned && i % 7 === 0 })),
);

describe('the rollout planner', () => {
  it('never puts more nodes of a domain in one wave than its limit, and the canary holds at most one node per rack', () => {
    fc.assert(
      fc.property(fleetArb, fc.integer(), fc.integer({ min: 1, max: 3 }), (fleet, seed, limit) => {
        const plan = planRollout({ firmware, selector: {}, seed, waveDomainLimits: { rack: limit, pdu: limit + 1 } }, fleet, sha);
        for (const wave of plan.waves) {
          const members = plan.targets.filter((t) => t.wave === wave.index);
          for (const [domain, max] of [['rack', wave.canary ? 1 : limit], ['pdu', limit + 1]] as const) {
            const counts = new Map<string, number>();
            for (const m of members) counts.set(domainOf(m, domain), (counts.get(domainOf(m, domain)) ?? 0) + 1);
            expect(Math.max(0, ...counts.values())).toBeLessThanOrEqual(max);
          }
        }
      }),
    );
  });

  it('accounts for every selected node once: a target or excluded with its reason (cordoned nodes are excluded)', () => {
    fc.assert(
      fc.property(fleetArb, fc.integer(), (fleet, seed) => {
        const plan = planRollout({ firmware, selector: {}, seed }, fleet, sha);
        const ids = [...plan.targets.map((t) => t.nodeId), ...plan.excluded.map((e) => e.nodeId)].sort();
        expect(ids).toEqual(fleet.map((c) => c.nodeId).sort());
        for (const excluded of plan.excluded) expect(excluded.reason).toBe('cordoned');
      }),
    );
  });

  it('a node whose BMC states the component is not updateable is excluded with that reason, never a target', () => {
    const fleet: Candidate[] = Array.from({ length: 6 }, (_, i) => ({ nodeId: `n${i}`, site: 's', rack: `r${i}`, notUpdateable: i % 3 === 0 }));
    const plan = planRollout({ firmware, selector: {}, seed: 1 }, fleet, sha);
    expect(plan.targets.map((t) => t.nodeId).sort()).toEqual(['n1', 'n2', 'n4', 'n5']);
    expect(plan.excluded).toEqual([
      { nodeId: 'n0', reason: expect.stringMatching(/^not updateable/) },
      { nodeId: 'n3', reason: expect.stringMatching(/^not updateable/) },
    ]);
  });

  it('puts one node of every stratum (vendor, model, from-version) in the canary when racks allow', () => {
    const fleet: Candidate[] = Array.from({ length: 60 }, (_, i) => ({ nodeId: `n${i}`, site: 's', rack: `r${i}`, vendor: 'v', model: i % 2 ? 'A' : 'B', fromVersion: i % 3 ? '1' : '2' }));
    const plan = planRollout({ firmware, selector: {}, seed: 1 }, fleet, sha);
    const canary = plan.targets.filter((t) => t.wave === 0);
    expect(new Set(canary.map((t) => t.stratum)).size).toBe(4);
  });

  it('is reproducible from its seed (the plan hash is the same)', () => {
    const fleet: Candidate[] = Array.from({ length: 50 }, (_, i) => ({ nodeId: `n${i}`, site: 's', rack: `r${i % 5}` }));
    expect(planRollout({ firmware, selector: {}, seed: 42 }, fleet, sha).planHash).toBe(planRollout({ firmware, selector: {}, seed: 42 }, fleet, sha).planHash);
  });
});

describe('the rollout decider', () => {
  it('never lets the slots held pass the cap or a rack limit, whatever order steps finish in, and replaying its events rebuilds its state', () => {
    fc.assert(
      fc.property(fleetArb, fc.integer({ min: 1, max: 6 }), fc.array(fc.nat(), { minLength: 50, maxLength: 400 }), (fleet, cap, choices) => {
        const request: RolloutRequest = { firmware, selector: {}, seed: 3, capPerSite: cap, inFlightDomainLimits: { rack: 2 }, bakeMs: 0, budgets: { canaryFailures: 1000, waveFailureRatio: 1, cumulativeFailureRatio: 1 } };
        const plan = planRollout(request, fleet, sha);
        if (plan.targets.length === 0) return;
        const log: SagaEvent[] = [];
        const state = initialRollout('r');
        const capacity = initialCapacity('s1');
        const apply = (event: SagaEvent): void => {
          log.push(event);
          evolveRollout(state, event);
        };
        apply(ev('RolloutPlanned', { rolloutId: 'r', plan }));
        apply(ev('RolloutApproved', { rolloutId: 'r', reason: 'x' }));
        const steps = new Map<string, { phase: 'started' | 'succeeded'; outcome?: 'updated'; released: boolean }>();
        for (const choice of choices) {
          const commands = decideRollout(state, { now: 1, capacity: new Map([['s1', capacity]]), steps: steps as never });
          let ownReleases = 0;
          for (const command of commands) {
            if (command.kind === 'start') apply(ev('RolloutStarted', { rolloutId: 'r' }));
            if (command.kind === 'open-wave') apply(ev('WaveOpened', { rolloutId: 'r', wave: command.wave, nodes: command.nodes }));
            if (command.kind === 'acquire-slots') {
              // The decision was made before this batch's own releases; nobody else wrote in between.
              expect(command.expectedVersion + ownReleases).toBe(capacity.version);
              for (const slot of command.slots) {
                evolveCapacity(capacity, ev('SlotAcquired', slot));
                apply(ev('NodeDispatched', { rolloutId: 'r', nodeId: slot.nodeId, wave: 0, slotId: slot.slotId }));
                steps.set(slot.nodeId, { phase: 'started', released: false });
              }
            }
            if (command.kind === 'record-outcome') apply(ev('NodeOutcomeRecorded', { rolloutId: 'r', nodeId: command.nodeId, wave: command.wave, outcome: command.outcome }));
            if (command.kind === 'release-slot') ownReleases++;
            if (command.kind === 'release-slot') evolveCapacity(capacity, ev('SlotReleased', { site: 's1', slotId: command.slot.slotId, sagaId: 'r', nodeId: command.slot.nodeId, why: 'x' }));
            if (command.kind === 'evaluate-gate') apply(ev('GateEvaluated', { rolloutId: 'r', wave: command.wave, inputs: [], values: {}, verdict: 'pass', reason: '' }));
            if (command.kind === 'advance-wave') apply(ev('WaveAdvanced', { rolloutId: 'r', from: command.from, to: command.to, by: 'gate' }));
            if (command.kind === 'complete') apply(ev('RolloutCompleted', { rolloutId: 'r', ...command.counts }));
          }
          expect(capacity.slots.size).toBeLessThanOrEqual(cap);
          const perRack = new Map<string, number>();
          for (const slot of capacity.slots.values()) perRack.set(slot.rack, (perRack.get(slot.rack) ?? 0) + 1);
          expect(Math.max(0, ...perRack.values())).toBeLessThanOrEqual(2);
          // Some step in flight finishes.
          const running = [...steps.entries()].filter(([, s]) => s.phase === 'started');
          const finished = running[choice % Math.max(1, running.length)];
          if (finished) steps.set(finished[0], { phase: 'succeeded', outcome: 'updated', released: false });
        }
        const replayed = initialRollout('r');
        for (const event of log) evolveRollout(replayed, event);
        expect(replayed).toEqual(state);
      }),
      { numRuns: 60 },
    );
  });

  it('halts when a canary node fails and dispatches nothing of wave 1 afterwards', () => {
    const fleet: Candidate[] = Array.from({ length: 20 }, (_, i) => ({ nodeId: `n${i}`, site: 's1', rack: `r${i}` }));
    const plan = planRollout({ firmware, selector: {}, seed: 1, capPerSite: 5 }, fleet, sha);
    const state = initialRollout('r');
    for (const e of [ev('RolloutPlanned', { rolloutId: 'r', plan }), ev('RolloutApproved', { rolloutId: 'r', reason: 'x' }), ev('RolloutStarted', { rolloutId: 'r' }), ev('WaveOpened', { rolloutId: 'r', wave: 0, nodes: 1 })]) evolveRollout(state, e);
    const canary = plan.targets.find((t) => t.wave === 0)!.nodeId;
    evolveRollout(state, ev('NodeDispatched', { rolloutId: 'r', nodeId: canary, wave: 0, slotId: `r:${canary}` }));
    evolveRollout(state, ev('NodeOutcomeRecorded', { rolloutId: 'r', nodeId: canary, wave: 0, outcome: 'failed' }));
    const commands = decideRollout(state, { now: 1, capacity: new Map([['s1', initialCapacity('s1')]]), steps: new Map() });
    expect(commands.map((c) => c.kind)).toEqual(['halt']);
    evolveRollout(state, ev('RolloutHalted', { rolloutId: 'r', reason: 'canary-failed', detail: '' }));
    expect(decideRollout(state, { now: 1, capacity: new Map([['s1', initialCapacity('s1')]]), steps: new Map() })).toEqual([]);
    evolveRollout(state, ev('RolloutAborted', { rolloutId: 'r', reason: 'bad image' }));
    evolveRollout(state, ev('RolloutResumed', { rolloutId: 'r', reason: 'x', acknowledged: 'x' }));
    expect(state.status).toBe('aborted');
  });

  it('holds (does not advance) while the gate is inconclusive, and a lagging projection is inconclusive', () => {
    const gate = { maxLagPositions: 10, maxLagMs: 1000, autoAdvance: true };
    const values = { nodes: 1, healthy: 1, unhealthy: [], unknown: [], openAlarms: 0 };
    expect(gateVerdict([{ projection: 'liveness', checkpointPosition: 1, headPosition: 100, lagPositions: 99, lagMs: 5000 }], values, gate).verdict).toBe('inconclusive');
    expect(gateVerdict([{ projection: 'liveness', checkpointPosition: 100, headPosition: 100, lagPositions: 0, lagMs: 0 }], values, gate).verdict).toBe('pass');
    expect(gateVerdict([{ projection: 'liveness', checkpointPosition: 100, headPosition: 100, lagPositions: 0, lagMs: 0 }], { ...values, healthy: 0, unknown: ['n1'] }, gate).verdict).toBe('inconclusive');
  });
});

describe('the node step decider', () => {
  const context: StepContext = { rolloutId: 'r', nodeId: 'n1', plan: { firmware, verifyReads: 3, retryBudget: 1, stepDeadlineMs: 3_600_000, quietPeriodMs: 60_000 }, timing: defaultStepTiming };
  const fold = (events: SagaEvent[]) => events.reduce(evolveStep, initialStep());
  const started = [ev('StepStarted', { rolloutId: 'r', nodeId: 'n1', slotId: 'r:n1', component: 'BMC', targetVersion: '9.9.9' }, 0), ev('VersionObserved', { version: '1.0', matches: false, readNo: 0 }, 1)];
  const intent = ev('UpdateIntentRecorded', { idempotencyKey: 'r:n1:BMC:9.9.9:1', attempt: 1, method: 'SimpleUpdate', imageUri: firmware.imageUri, applyTime: 'Immediate', at: 2 }, 2);

  it('given an intent with no recorded submission (a crash), when it decides, then it probes and never submits', () => {
    expect(decideStep(fold([...started, intent]), 10, context).action.kind).toBe('probe');
  });

  it('given a probe that finds neither the version nor a task, it re-submits only after the quiet period, under a new key', () => {
    const state = fold([...started, intent]);
    expect(probeVerdict(state, { reachable: true, version: '1.0', matchingTask: null }, 30_000, context)).toBe('wait');
    expect(probeVerdict(state, { reachable: true, version: '1.0', matchingTask: null }, 70_000, context)).toBe('not-accepted');
    const after = fold([...started, intent, ev('ReconcileProbed', { reachable: true, version: '1.0', matchingTask: null, verdict: 'not-accepted' }, 70_000)]);
    const retry = decideStep(after, 70_001, context).action;
    expect(retry).toMatchObject({ kind: 'retry', attempt: 2 });
  });

  it('an attempt that left no trace on the BMC (killed before the request went out) does not spend the retry budget, up to its own bound', () => {
    // retryBudget 1: two attempts the BMC saw. Here every attempt is killed before its request, a probe finds nothing.
    const untraced = (attempt: number, at: number) => [
      ev('UpdateIntentRecorded', { idempotencyKey: `r:n1:BMC:9.9.9:${attempt}`, attempt, method: 'SimpleUpdate', imageUri: firmware.imageUri, applyTime: 'Immediate', at }, at),
      ev('ReconcileProbed', { reachable: true, version: '1.0', matchingTask: null, verdict: 'not-accepted' }, at + 70_000),
      ev('RetryScheduled', { attempt: attempt + 1, notBefore: at + 70_001, cause: 'untraced' }, at + 70_000),
    ];
    let events = [...started];
    for (let attempt = 1; attempt <= defaultStepTiming.maxUntracedAttempts; attempt++) events = [...events, ...untraced(attempt, attempt * 100_000)];
    const n = defaultStepTiming.maxUntracedAttempts + 1;
    const last = [...events, ...untraced(n, n * 100_000).slice(0, 2)];
    // Five untraced attempts were retried; the sixth is one too many: held by name, not failed.
    expect(decideStep(fold(last), n * 100_000 + 70_001, context).action).toMatchObject({ kind: 'hold', hold: 'reconcile-required' });
    const fifth = [...events.slice(0, -1)];
    expect(decideStep(fold(fifth), n * 100_000, context).action).toMatchObject({ kind: 'retry', attempt: defaultStepTiming.maxUntracedAttempts + 1 });
    // An attempt the BMC saw and failed, after those, still has the whole budget: the retry comes, then the failure.
    const seen = (attempt: number, at: number) => [
      ev('UpdateIntentRecorded', { idempotencyKey: `r:n1:BMC:9.9.9:${attempt}`, attempt, method: 'SimpleUpdate', imageUri: firmware.imageUri, applyTime: 'Immediate', at }, at),
      ev('UpdateSubmissionFailed', { idempotencyKey: `r:n1:BMC:9.9.9:${attempt}`, code: 'DRIVER_HTTP', message: 'refused', outcomeKnown: true }, at + 1),
    ];
    const firstSeen = fold([...events, ...seen(n, n * 100_000)]);
    expect(decideStep(firstSeen, n * 100_000 + 2, context).action).toMatchObject({ kind: 'retry', attempt: n + 1 });
    const secondSeen = fold([...events, ...seen(n, n * 100_000), ev('RetryScheduled', { attempt: n + 1, notBefore: 0, cause: 'x' }, n * 100_000 + 2), ...seen(n + 1, n * 100_000 + 3)]);
    expect(decideStep(secondSeen, n * 100_000 + 5, context).action).toMatchObject({ kind: 'fail', cause: expect.stringContaining('attempt 2 of 2') });
  });

  it('given a probe that finds the task, it adopts it; given the target version, it verifies', () => {
    const state = fold([...started, intent]);
    expect(probeVerdict(state, { reachable: true, version: '1.0', matchingTask: '/t/1' }, 5, context)).toBe('adopt-task');
    expect(probeVerdict(state, { reachable: true, version: '9.9.9', matchingTask: null }, 5, context)).toBe('at-target');
  });

  it('given a task Completed awaiting activation, it resets to activate before reading the version', () => {
    const state = fold([...started, intent, ev('UpdateSubmitted', { idempotencyKey: 'k', taskMonitor: '/t/1', httpStatus: 202, adopted: false }, 3), ev('BmcTaskObserved', { taskMonitor: '/t/1', taskState: 'Completed', taskStatus: 'OK', messages: ['Update.1.0.AwaitToActivate: staged'] }, 4)]);
    expect(decideStep(state, 5, context).action.kind).toBe('activate');
  });

  it('given Completed with Critical status, it retries at once: no reset, no settle wait', () => {
    const events = [...started, intent, ev('UpdateSubmitted', { idempotencyKey: 'k', taskMonitor: '/t/1', httpStatus: 202, adopted: false }, 3), ev('BmcTaskObserved', { taskMonitor: '/t/1', taskState: 'Completed', taskStatus: 'Critical', messages: ['Update.1.0.AwaitToActivate: reset to activate'] }, 4)];
    expect(decideStep(fold(events), 5, context).action).toMatchObject({ kind: 'retry', attempt: 2 });
  });

  it('given Completed OK and the version unchanged after activation, it retries only once the settle time has passed', () => {
    let events = [...started, intent, ev('UpdateSubmitted', { idempotencyKey: 'k', taskMonitor: '/t/1', httpStatus: 202, adopted: false }, 3), ev('BmcTaskObserved', { taskMonitor: '/t/1', taskState: 'Completed', taskStatus: 'OK', messages: [] }, 4), ev('ActivationRequested', { resetType: 'x', target: 'y', at: 5 }, 5)];
    for (let i = 1; i <= 6; i++) events = [...events, ev('VersionObserved', { version: '1.0', matches: false, readNo: i }, 5 + i)];
    // Not before the BMC had time to come back from the reset: until then another read is due.
    expect(decideStep(fold(events), 100, context).action.kind).toBe('read-version');
    expect(decideStep(fold(events), 5 + defaultStepTiming.settleMs, context).action).toMatchObject({ kind: 'retry', attempt: 2 });
  });

  it('completes only after three consecutive reads of the target version', () => {
    const base = [...started, intent, ev('UpdateSubmitted', { idempotencyKey: 'k', taskMonitor: '/t/1', httpStatus: 202, adopted: false }, 3), ev('BmcTaskObserved', { taskMonitor: '/t/1', taskState: 'Completed', taskStatus: 'OK', messages: [] }, 4)];
    const two = [...base, ev('VersionObserved', { version: '9.9.9', matches: true, readNo: 1 }, 5), ev('VersionObserved', { version: '9.9.9', matches: true, readNo: 2 }, 6)];
    expect(decideStep(fold(two), 100_000, context).action.kind).toBe('read-version');
    const three = [...two, ev('VersionObserved', { version: '9.9.9', matches: true, readNo: 3 }, 7)];
    expect(decideStep(fold(three), 100_000, context).action.kind).toBe('verified');
  });

  it('a vanished task is neither success nor failure: it is reconciled by reading the BMC', () => {
    const state = fold([...started, intent, ev('UpdateSubmitted', { idempotencyKey: 'k', taskMonitor: '/t/1', httpStatus: 202, adopted: false }, 3), ev('BmcTaskVanished', { taskMonitor: '/t/1' }, 4)]);
    expect(decideStep(state, 5, context).action.kind).toBe('probe');
  });

  it('past the step deadline a step is held by name (its slot kept), never released silently', () => {
    const state = fold([...started, intent]);
    expect(decideStep(state, 3_600_001, context).action).toMatchObject({ kind: 'hold', hold: 'deadline-exceeded' });
  });
});
