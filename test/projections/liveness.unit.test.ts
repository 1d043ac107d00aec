import { describe, expect, it } from 'vitest';
import {
  forEachLivenessFact,
  evolveLiveness,
  initialLiveness,
  type LivenessFact,
  type LivenessStep,
  type NodeLiveness,
} from '../../projections/index.js';
import { at, decommissioned, maintenance, polls, registered, T0, type Outcome } from './support/fleet-events.js';

/** Given facts, the state and every transition they produced. */
function given(facts: LivenessFact[], options?: Parameters<typeof evolveLiveness>[2]): { state: NodeLiveness; steps: LivenessStep[] } {
  let state = initialLiveness('n1');
  const steps: LivenessStep[] = [];
  for (const fact of facts) {
    const step = evolveLiveness(state, fact, options);
    steps.push(step);
    state = step.state;
  }
  return { state, steps };
}

const reg: LivenessFact = { kind: 'registered', at: T0, site: 'dc1', rack: 'r1', expectedIntervalS: 60 };
const poll = (i: number, outcome: Outcome): LivenessFact => ({ kind: 'outcome', at: T0 + i * 60_000, outcome });
/** lv-d is the fourth row of each flush: its polls are 3 ms after the window start. */
const plus3ms = (seconds: number): string => new Date(Date.parse(at(seconds)) + 3).toISOString();
const run = (from: number, count: number, outcome: Outcome): LivenessFact[] => Array.from({ length: count }, (_, k) => poll(from + k, outcome));

describe('liveness evolve', () => {
  it('a node is dark only after ten consecutive misses', () => {
    const nine = given([reg, poll(1, 'success'), ...run(2, 9, 'timeout')]);
    expect(nine.state.status).toBe('late');
    expect(nine.steps.flatMap((s) => s.transitions)).toEqual([]);
    const ten = given([reg, poll(1, 'success'), ...run(2, 10, 'timeout')]);
    expect(ten.state.status).toBe('dark');
    expect(ten.steps.flatMap((s) => s.transitions)).toEqual([
      { kind: 'went-dark', nodeId: 'n1', at: T0 + 11 * 60_000, lastContactAt: T0 + 60_000, consecutiveMisses: 10 },
    ]);
  });

  it('a contact between misses starts the count again', () => {
    const { state } = given([reg, poll(1, 'success'), ...run(2, 9, 'timeout'), poll(11, 'success'), ...run(12, 9, 'refused')]);
    expect(state.status).toBe('late');
    expect(state.consecutiveMisses).toBe(9);
  });

  it('the dark threshold is configurable', () => {
    const { state } = given([reg, poll(1, 'success'), ...run(2, 3, 'timeout')], { darkAfterMisses: 3, recoverAfterSuccesses: 2, defaultIntervalS: 60 });
    expect(state.status).toBe('dark');
  });

  it('a dark node needs two consecutive contacts to be healthy again (hysteresis)', () => {
    const dark = [reg, poll(1, 'success'), ...run(2, 10, 'timeout')];
    const once = given([...dark, poll(12, 'success')]);
    expect(once.state.status).toBe('dark');
    const flapping = given([...dark, poll(12, 'success'), poll(13, 'timeout'), poll(14, 'success')]);
    expect(flapping.state.status).toBe('dark');
    const twice = given([...dark, poll(12, 'success'), poll(13, 'not-modified')]);
    expect(twice.state.status).toBe('healthy');
    expect(twice.steps.at(-1)!.transitions).toEqual([{ kind: 'recovered', nodeId: 'n1', at: T0 + 13 * 60_000, darkSince: T0 + 11 * 60_000, consecutiveSuccesses: 2 }]);
  });

  it('a gap runs from the last contact to the next one, never interpolated', () => {
    const { steps } = given([reg, poll(1, 'success'), ...run(2, 3, 'timeout'), poll(5, 'success')]);
    const gap = steps.at(-1)!.gaps[0]!;
    expect(gap).toMatchObject({ startAt: T0 + 60_000, endAt: T0 + 5 * 60_000, misses: 3, wentDark: false, endedBy: 'contact' });
  });

  it('a latched BMC is not a miss of the node', () => {
    const { state } = given([reg, poll(1, 'success'), ...run(2, 20, 'latched')]);
    expect(state.status).toBe('healthy');
    expect(state.consecutiveMisses).toBe(0);
    expect(state.latched).toBe(true);
  });

  it('a node never contacted is never-contacted, not dark', () => {
    const { state, steps } = given([reg, ...run(1, 30, 'timeout')]);
    expect(state.status).toBe('never-contacted');
    expect(steps.flatMap((s) => s.transitions)).toEqual([]);
  });

  it('silence inside a maintenance window is maintenance, not darkness', () => {
    const window: LivenessFact = { kind: 'maintenance', at: T0 + 90_000, from: T0 + 90_000, until: T0 + 30 * 60_000 };
    const { state, steps } = given([reg, poll(1, 'success'), window, ...run(2, 20, 'timeout')]);
    expect(state.status).toBe('maintenance');
    expect(steps.flatMap((s) => s.transitions)).toEqual([]);
    const after = given([reg, poll(1, 'success'), window, ...run(2, 20, 'timeout'), ...run(31, 10, 'timeout')]);
    expect(after.state.status).toBe('dark');
  });

  it("a decommissioned node's silence raises nothing", () => {
    const { state, steps } = given([reg, poll(1, 'success'), { kind: 'decommissioned', at: T0 + 100_000 }, ...run(2, 20, 'timeout')]);
    expect(state.status).toBe('decommissioned');
    expect(steps.flatMap((s) => s.transitions)).toEqual([]);
  });
});

describe('liveness facts from poll outcomes', () => {
  const batch = (work: string[], outcomes: string[]) =>
    ({
      type: 'PollOutcomesRecorded',
      recordedAt: new Date(T0),
      data: { site: 'dc1', windowStart: new Date(T0).toISOString(), nodeIds: work.map(() => 'n1'), work, outcomes, latencyMs: work.map(() => 5), offsetMs: work.map((_, i) => i) },
    }) as unknown as Parameters<typeof forEachLivenessFact>[0];
  const facts = (work: string[], outcomes: string[]): LivenessFact[] => {
    const out: LivenessFact[] = [];
    forEachLivenessFact(batch(work, outcomes), (_nodeId, fact) => out.push(fact));
    return out;
  };

  it('a heavy read that failed is not a miss: only liveness checks measure absence', () => {
    expect(facts(['inventory', 'firmware', 'health'], ['timeout', 'session-limit', 'protocol'])).toEqual([]);
  });

  it('a heavy read that succeeded is a contact, and every liveness check counts', () => {
    expect(facts(['inventory', 'liveness', 'liveness'], ['success', 'timeout', 'success']).map((fact) => (fact as { outcome?: string }).outcome)).toEqual([
      'success',
      'timeout',
      'success',
    ]);
  });
});
