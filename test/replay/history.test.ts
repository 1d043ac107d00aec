import fc from 'fast-check';
import type { Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';

import type { PollOutcomeKind, ProposedEvent } from '../../events/index.js';
import { defaultLivenessOptions, fleetProjections, type LivenessFact } from '../../projections/index.js';
import { FoldStartFinder, fleetDiff, historyMigrations, nodeTimeline, replayNodeLiveness, type FleetDiff, type NodeTimeline, type PositionedFact } from '../../replay/history/index.js';
import { buildApi, type ZodApp } from '../../src/api/index.js';
import { runDiff, runTimeline } from '../../src/cli/replay-history.js';
import { EventStore } from '../../src/ledger/index.js';
import { bearer, tokenTable, tokens } from '../api/support/api-harness.js';
import { declared, firmware, inventory, registered } from '../projections/support/fleet-events.js';
import { project } from '../projections/support/projection-harness.js';
import { backends, freshDatabase } from '../support/backends.js';
import { cordon, operator as alice } from '../support/ledger-fixtures.js';

/**
 * An auditor's history, specified on a small fleet whose log is built through the real event types and a ledger
 * clock the test drives: the poller records each minute's outcomes one second after polling, as it does live.
 *
 *   minute 0      n1, n2, n3 registered; n3 declared (BMC baseline 1.0.0) and observed matching; n2 on BMC 1.0.0
 *   minutes 1-3   every node answers                                   ── A (3:30) ──
 *   minutes 4-15  n1 misses 12 polls (dark at the 10th, minute 13)
 *   minute 5      n4 registered by alice          minute 6   alice cordons n1 'PSU swap'
 *   minute 7      n2 observed on BMC 2.0.0       minute 8   n3 observed on BMC 2.0.0 (drift from its baseline)
 *   minutes 9-10  rollout r1 updates n2 (step started, succeeded)       minute 14  bob acknowledges n1's dark alarm
 *   minutes 16-17 n1 answers again (contact at 16, healthy at 17)       ── B (17:30) ──
 *   minute 18     n2 observed on BMC 3.0.0; bob cordons n3; n5 registered
 *   minutes 19-20 n1 misses twice (still silent at the head)
 */
const minute = 60_000;
const T0 = Date.UTC(new Date().getUTCFullYear(), new Date().getUTCMonth(), new Date().getUTCDate() - 2, 3, 0, 0);
const t = (minutes: number): number => T0 + minutes * minute;
const hhmm = (minutes: number): string => new Date(t(minutes)).toISOString().slice(11, 19);
const bob = { kind: 'operator', id: 'bob@example.org', role: 'operator' } as const;
const saga = { kind: 'saga', id: 'rollout:r1' } as const;

/** One scheduler flush at `minutes`: each listed node polled at that minute (in order, 1 ms apart). */
function flush(minutes: number, outcomes: ReadonlyArray<readonly [string, PollOutcomeKind]>): ProposedEvent {
  return {
    type: 'PollOutcomesRecorded',
    data: {
      site: 'dc1',
      windowStart: new Date(t(minutes)).toISOString(),
      nodeIds: outcomes.map(([nodeId]) => nodeId),
      work: outcomes.map(() => 'liveness'),
      outcomes: outcomes.map(([, outcome]) => outcome),
      latencyMs: outcomes.map(([, outcome]) => (outcome === 'timeout' ? 5000 : 12)),
      offsetMs: outcomes.map((_, i) => i),
    },
    actor: { kind: 'system', id: 'poller' },
  };
}

function bmc(version: string, minutes: number): ProposedEvent {
  return { ...firmware([{ component: 'BMC', version }]), observedAt: new Date(t(minutes)).toISOString() };
}

describe("an auditor's history of the fleet", () => {
  let store: EventStore;
  let drop: () => Promise<void>;
  let now = t(0);
  const at = (minutes: number, seconds = 0): void => void (now = t(minutes) + seconds * 1000);
  let darkPosition = 0;
  let cordonPosition = 0;
  const A = new Date(t(3) + 30_000);
  const B = new Date(t(17) + 30_000);

  async function polled(minutes: number, outcomes: ReadonlyArray<readonly [string, PollOutcomeKind]>): Promise<number> {
    at(minutes, 1);
    return (await store.append('polls-dc1', [flush(minutes, outcomes)])).positions[0]!;
  }

  beforeAll(async () => {
    const backend = backends().find((b) => b.name === 'server' && b.adminUrl) ?? backends()[0]!;
    const database = await freshDatabase(backend.adminUrl!);
    drop = database.drop;
    store = await EventStore.open({ connectionString: database.url, poolSize: 4, clock: () => new Date(now) });

    at(0);
    for (const [id, rack] of [['n1', 'r1'], ['n2', 'r1'], ['n3', 'r2']] as const) await store.append(`node-${id}`, [registered(id, rack)]);
    await store.append('node-n3', [
      declared({ nodeId: 'n3', rack: 'r2', firmwareBaseline: { BMC: '1.0.0' } }),
      { ...inventory({ manufacturer: 'HPE', model: 'ProLiant DL380 Gen10 Plus', serial: 'SN-n3' }), observedAt: new Date(t(0)).toISOString() },
      bmc('1.0.0', 0),
    ]);
    await store.append('node-n2', [bmc('1.0.0', 0)]);
    for (const m of [1, 2, 3]) await polled(m, [['n1', 'success'], ['n2', 'success'], ['n3', 'success']]);

    for (let m = 4; m <= 15; m += 1) {
      const position = await polled(m, [['n1', 'timeout'], ['n2', 'success'], ['n3', 'success']]);
      if (m === 13) darkPosition = position; // the tenth miss in a row
      if (m === 5) await store.append('node-n4', [registered('n4', 'r2')]);
      if (m === 6) cordonPosition = (await store.append('node-n1', [cordon('n1', 'PSU swap')])).positions[0]!;
      if (m === 7) await store.append('node-n2', [bmc('2.0.0', 7)]);
      if (m === 8) await store.append('node-n3', [bmc('2.0.0', 8)]);
      if (m === 9) await store.append('fwstep-r1-n2', [{ type: 'StepStarted', data: { rolloutId: 'r1', nodeId: 'n2', slotId: 'dc1:r1:n2', component: 'BMC', targetVersion: '2.0.0' }, actor: saga }]);
      if (m === 10) await store.append('fwstep-r1-n2', [{ type: 'StepSucceeded', data: { outcome: 'updated', version: '2.0.0' }, actor: saga }]);
      if (m === 14) await store.append(`alarm-dark:n1:${darkPosition}`, [{ type: 'AlarmAcknowledged', data: { alarmId: `dark:n1:${darkPosition}`, note: 'on it' }, actor: bob }]);
    }
    for (const m of [16, 17]) await polled(m, [['n1', 'success'], ['n2', 'success'], ['n3', 'success']]);

    at(18);
    await store.append('node-n2', [bmc('3.0.0', 18)]);
    await store.append('node-n3', [{ ...cordon('n3', 'fan swap'), actor: bob }]);
    await store.append('node-n5', [registered('n5', 'r2')]);
    for (const m of [19, 20]) await polled(m, [['n1', 'timeout'], ['n2', 'success'], ['n3', 'success']]);
    // The read models (alarms among them) as the running ledger would have them.
    await project(store, fleetProjections());
  });

  afterAll(async () => {
    await store?.close();
    await drop?.();
  });

  describe('a node timeline', () => {
    let timeline: NodeTimeline;
    beforeAll(async () => {
      timeline = await nodeTimeline(store, 'n1', { now: new Date(t(30)) });
    });

    it("lists every event about the node in log order, and only the node's", () => {
      const positions = timeline.entries.map((e) => e.position);
      expect(positions).toEqual([...positions].sort((a, b) => a - b));
      expect(new Set(positions).size).toBe(positions.length);
      expect(timeline.entries[0]).toMatchObject({ type: 'NodeRegistered', stream: 'node-n1', actor: { id: alice.id } });
      // Every poll batch that names n1 (3 + 12 + 2 + 2), each cut down to n1's own outcome.
      const polls = timeline.entries.filter((e) => e.type === 'PollOutcomesRecorded');
      expect(polls).toHaveLength(19);
      expect(polls.every((e) => e.polls?.length === 1)).toBe(true);
      expect(polls[3]).toMatchObject({ summary: 'poll liveness: timeout (5000 ms)', polls: [{ outcome: 'timeout', at: new Date(t(4)).toISOString() }] });
      expect(timeline.entries.some((e) => e.stream !== 'node-n1' && e.stream !== 'polls-dc1' && !e.stream.startsWith('alarm-'))).toBe(false);
    });

    it('shows who asked for each intent about the node, its own and those on its alarms', () => {
      const intents = timeline.entries.filter((e) => e.actor).map((e) => [e.type, e.actor!.id, e.actor!.role, e.summary]);
      expect(intents).toEqual([
        ['NodeRegistered', alice.id, null, 'register n1 in dc1/r1 (BMC redfish https://n1.bmc, every 60 s)'],
        ['NodeCordoned', alice.id, 'operator', "cordon n1 'PSU swap'"],
        ['AlarmAcknowledged', bob.id, 'operator', `acknowledge alarm dark:n1:${darkPosition} 'on it'`],
      ]);
      expect(timeline.entries.find((e) => e.type === 'PollOutcomesRecorded')!.actor).toBeUndefined();
    });

    it('shows a silence as one interval from the last contact to the contact that ended it, dark once it crossed the threshold', () => {
      expect(timeline.silences).toEqual([
        {
          kind: 'dark',
          from: new Date(t(3)).toISOString(),
          to: new Date(t(16)).toISOString(),
          endedBy: 'contact',
          misses: 12,
          darkAt: new Date(t(13)).toISOString(),
          recoveredAt: new Date(t(17)).toISOString(),
          durationMs: 13 * minute,
          positions: { firstMiss: expect.any(Number), dark: darkPosition, end: expect.any(Number), recovered: expect.any(Number) },
        },
        expect.objectContaining({ kind: 'late', from: new Date(t(17)).toISOString(), to: null, misses: 2, darkAt: null }),
      ]);
      expect(timeline.liveness).toMatchObject({ status: 'late', consecutiveMisses: 2, lastContactAt: new Date(t(17)).toISOString() });
    });

    it("shows the node's alarms with where the log opened them and who acknowledged them", () => {
      expect(timeline.alarmSource).toMatchObject({ available: true, complete: true });
      expect(timeline.alarms).toEqual([
        expect.objectContaining({ alarmId: `dark:n1:${darkPosition}`, kind: 'node-dark', openedPosition: darkPosition, closedAt: new Date(t(17)).toISOString(), acknowledgedBy: bob.id }),
      ]);
    });

    it('asked from inside a silence, it still starts the silence at the last contact before the window', async () => {
      const late = await nodeTimeline(store, 'n1', { from: { position: cordonPosition }, now: new Date(t(30)) });
      expect(late.entries[0]!.position).toBeGreaterThan(cordonPosition);
      expect(late.silences).toEqual(timeline.silences);
      const inside = await nodeTimeline(store, 'n1', { from: { instant: A }, to: { instant: B }, now: new Date(t(30)) });
      expect(inside.silences).toEqual([timeline.silences[0]]);
      expect(inside.liveness.status).toBe('healthy');
    });

    it('answers the same with and without the node indexes', async () => {
      const before = await nodeTimeline(store, 'n1', { from: { instant: A }, now: new Date(t(30)) });
      await historyMigrations['0004-history-node-index']!.up(store.db as unknown as Kysely<any>);
      const after = await nodeTimeline(store, 'n1', { from: { instant: A }, now: new Date(t(30)) });
      expect(after).toEqual(before);
    });
  });

  describe('a fleet diff', () => {
    let diff: FleetDiff;
    beforeAll(async () => {
      diff = await fleetDiff(store, { from: { instant: A }, to: { instant: B }, now: new Date(t(30)) });
    });

    it('holds exactly the changes made between the two instants: nothing before, nothing after', () => {
      expect(diff.joined.map((m) => [m.nodeId, m.by])).toEqual([['n4', alice.id]]);
      expect(diff.left).toEqual([]);
      expect(diff.firmwareChanged.map((f) => [f.nodeId, f.component, f.from, f.to])).toEqual([
        ['n2', 'BMC', '1.0.0', '2.0.0'],
        ['n3', 'BMC', '1.0.0', '2.0.0'],
      ]);
      // Both were versions before the window: changes, not first reads.
      expect(diff.counts.firmwareFirstReads).toBe(0);
      expect(diff.wentDark).toEqual([
        expect.objectContaining({ nodeId: 'n1', lastContactAt: new Date(t(3)).toISOString(), darkAt: new Date(t(13)).toISOString(), darkPosition, endedAt: new Date(t(17)).toISOString(), endedBy: 'recovered', stillDark: false }),
      ]);
      expect(diff.recovered).toEqual([]);
      expect(diff.driftOpened.map((d) => [d.nodeId, d.field, d.kind, d.declared, d.observed])).toEqual([['n3', 'firmware:BMC', 'mismatch', '1.0.0', '2.0.0']]);
      expect(diff.driftClosed).toEqual([]);
      expect(diff.rolloutSteps.map((s) => [s.change, s.rolloutId, s.nodeId, s.targetVersion])).toEqual([
        ['started', 'r1', 'n2', '2.0.0'],
        ['succeeded', 'r1', 'n2', '2.0.0'],
      ]);
      expect(diff.window.from.position).toBeLessThan(diff.window.to.position);
      expect(diff.events).toBe(diff.window.to.position - diff.window.from.position);
    });

    it('lists every operator intent in the window with who asked', () => {
      expect(diff.intents.map((i) => [i.type, i.by, i.role, i.nodeId])).toEqual([
        ['NodeRegistered', alice.id, null, 'n4'],
        ['NodeCordoned', alice.id, 'operator', 'n1'],
        ['AlarmAcknowledged', bob.id, 'operator', null],
      ]);
      expect(diff.intents[1]!.summary).toBe("cordon n1 'PSU swap'");
      expect(diff.counts.intents).toBe(3);
    });

    it('shows alarms opened, closed and acknowledged in the window', () => {
      expect(diff.alarmSource).toMatchObject({ available: true, complete: true });
      expect(diff.alarmsOpened.map((a) => a.kind).sort()).toEqual(['drift', 'node-dark']);
      expect(diff.alarmsClosed.map((a) => a.alarmId)).toEqual([`dark:n1:${darkPosition}`]);
      expect(diff.alarmsAcknowledged).toEqual([expect.objectContaining({ alarmId: `dark:n1:${darkPosition}`, by: bob.id, kind: 'node-dark', nodeId: 'n1', note: 'on it' })]);
    });

    it('a node still dark at the end of the window is shown so, and recovers in the next one', async () => {
      const midSilence = new Date(t(14) + 30_000);
      const first = await fleetDiff(store, { from: { instant: A }, to: { instant: midSilence }, now: new Date(t(30)) });
      expect(first.wentDark).toEqual([expect.objectContaining({ nodeId: 'n1', stillDark: true, endedAt: null })]);
      expect(first.counts.stillDark).toBe(1);
      const second = await fleetDiff(store, { from: { instant: midSilence }, to: { instant: B }, now: new Date(t(30)) });
      expect(second.wentDark).toEqual([]);
      expect(second.recovered).toEqual([expect.objectContaining({ nodeId: 'n1', lastContactAt: new Date(t(3)).toISOString(), endedAt: new Date(t(17)).toISOString() })]);
    });

    it('an empty window holds no change', async () => {
      const empty = await fleetDiff(store, { from: { instant: B }, to: { instant: B }, now: new Date(t(30)) });
      expect(empty.events).toBe(0);
      expect(Object.values(empty.counts).every((count) => count === 0)).toBe(true);
    });
  });

  describe('through the API and the command line', () => {
    let app: ZodApp;
    let url: string;
    beforeAll(async () => {
      app = await buildApi({ store, tokens: tokenTable });
      url = await app.listen({ port: 0, host: '127.0.0.1' });
    });
    afterAll(async () => app?.close());

    it('analysts, auditors and operators may read history; other roles may not', async () => {
      for (const role of ['analyst', 'auditor', 'operator'] as const) {
        const answer = await app.inject({ method: 'GET', url: `/v1/history/diff?from=${A.toISOString()}&to=${B.toISOString()}`, headers: bearer(role) });
        expect(answer.statusCode).toBe(200);
        expect(answer.json().counts.joined).toBe(1);
      }
      expect((await app.inject({ method: 'GET', url: '/v1/history/nodes/n1/timeline', headers: bearer('agent') })).statusCode).toBe(403);
      expect((await app.inject({ method: 'GET', url: '/v1/history/nodes/n1/timeline' })).statusCode).toBe(401);
    });

    it('a malformed, future or reversed window is a typed 400 naming the parameter', async () => {
      const refused = async (query: string, field: string) => {
        const answer = await app.inject({ method: 'GET', url: `/v1/history/diff?${query}`, headers: bearer('auditor') });
        expect(answer.statusCode, query).toBe(400);
        expect(answer.json().error, query).toMatchObject({ code: 'API_INVALID_REQUEST', details: { field } });
      };
      await refused('from=yesterday', 'querystring.from');
      await refused('from=2026-02-30T25:00:00Z', 'querystring.from');
      await refused(`from=${A.toISOString()}&to=-3`, 'querystring.to');
      await refused(`from=${B.toISOString()}&to=${A.toISOString()}`, 'querystring.from');
      await refused('from=0&to=99999999', 'querystring.to');
      await refused(`from=0&to=${new Date(Date.now() + 86_400_000).toISOString()}`, 'querystring.to');
      await refused('to=5', 'querystring.from');
      const timeline = await app.inject({ method: 'GET', url: '/v1/history/nodes/n1/timeline?from=20&to=10', headers: bearer('analyst') });
      expect(timeline.json().error).toMatchObject({ code: 'API_INVALID_REQUEST', details: { field: 'querystring.from' } });
      const unknown = await app.inject({ method: 'GET', url: '/v1/history/nodes/ghost/timeline', headers: bearer('analyst') });
      expect(unknown.statusCode).toBe(404);
    });

    it('the routes are in the OpenAPI document with their answers', async () => {
      const spec = (await app.inject({ method: 'GET', url: '/openapi.json' })).json();
      expect(spec.paths['/v1/history/diff'].get.responses['200'].content['application/json'].schema.properties).toHaveProperty('intents');
      expect(spec.paths['/v1/history/nodes/{nodeId}/timeline'].get.parameters.map((p: any) => p.name).sort()).toEqual(['from', 'limit', 'nodeId', 'to']);
    });

    it('the command line reads well to an operator: silences, firmware and intents', async () => {
      const as = ['--url', url, '--token', tokens.auditor];
      const timeline = await captured(() => runTimeline(['n1', ...as]));
      expect(timeline.code).toBe(0);
      expect(timeline.stdout).toContain(`dark ${hhmm(3)} → ${hhmm(16)} (13 min, 12 missed, dark at ${hhmm(13)}, healthy again ${hhmm(17)})`);
      expect(timeline.stdout).toContain(`late ${hhmm(17)} → still silent`);
      expect(timeline.stdout).toContain("by alice@example.org (operator): cordon n1 'PSU swap'");
      expect(timeline.stdout).toContain(`polls: 3 missed (timeout), ${hhmm(4)} → ${hhmm(6)}`);
      const diff = await captured(() => runDiff(['--from', A.toISOString(), '--to', B.toISOString(), ...as]));
      expect(diff.code).toBe(0);
      expect(diff.stdout).toContain('n2  BMC 1.0.0 → 2.0.0');
      expect(diff.stdout).toContain(`n1  dark ${hhmm(3)} → ${hhmm(17)} (14 min)`);
      expect(diff.stdout).toContain("by alice@example.org (operator): cordon n1 'PSU swap'");
      const json = await captured(() => runDiff(['--from', A.toISOString(), '--to', B.toISOString(), '--json', ...as]));
      expect(JSON.parse(json.stdout).counts.firmwareChanged).toBe(2);
      const reversed = await captured(() => runDiff(['--from', B.toISOString(), '--to', A.toISOString(), ...as]));
      expect(reversed).toMatchObject({ code: 1, stderr: expect.stringContaining('API_INVALID_REQUEST') });
      expect((await captured(() => runDiff(['--to', B.toISOString(), ...as]))).code).toBe(2);
    });
  });
});

/** Runs a command in-process and captures what it prints. */
async function captured(run: () => Promise<number>): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const out = vi.spyOn(process.stdout, 'write').mockImplementation((chunk: any) => ((stdout += String(chunk)), true));
  const err = vi.spyOn(process.stderr, 'write').mockImplementation((chunk: any) => ((stderr += String(chunk)), true));
  try {
    return { code: await run(), stdout, stderr };
  } finally {
    out.mockRestore();
    err.mockRestore();
  }
}

describe('replaying liveness from the last run of contacts', () => {
  type Step = PollOutcomeKind | 'maintenance' | 'decommission' | 'register';
  const step = fc.oneof(
    { weight: 6, arbitrary: fc.constantFrom<Step>('success', 'not-modified', 'timeout', 'refused', 'latched') },
    { weight: 1, arbitrary: fc.constantFrom<Step>('maintenance', 'decommission', 'register') },
  );

  /** A node's facts: registered at position 1, then one or two facts per position, a minute apart. */
  function factsOf(steps: ReadonlyArray<readonly [Step, boolean]>): { lifecycle: PositionedFact[]; outcomes: PositionedFact[] } {
    const lifecycle: PositionedFact[] = [{ position: 1, fact: { kind: 'registered', at: t(0), site: 'dc1', rack: 'r1', expectedIntervalS: 60 } }];
    const outcomes: PositionedFact[] = [];
    steps.forEach(([kind, twice], i) => {
      const position = i + 2;
      const at = t(i + 1);
      const facts: LivenessFact[] =
        kind === 'maintenance'
          ? [{ kind: 'maintenance', at, from: at, until: at + 3 * minute }]
          : kind === 'decommission'
            ? [{ kind: 'decommissioned', at }]
            : kind === 'register'
              ? [{ kind: 'registered', at, site: 'dc1', rack: 'r2', expectedIntervalS: 60 }]
              : twice
                ? [{ kind: 'outcome', at, outcome: kind }, { kind: 'outcome', at: at + 1, outcome: kind }]
                : [{ kind: 'outcome', at, outcome: kind }];
      for (const fact of facts) (fact.kind === 'outcome' ? outcomes : lifecycle).push({ position, fact });
    });
    return { lifecycle, outcomes };
  }

  it('what a replay reports after the window starts does not depend on the outcomes before the run', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(step, fc.boolean()), { minLength: 1, maxLength: 60 }), fc.nat(), (steps, cut) => {
        const { lifecycle, outcomes } = factsOf(steps);
        const windowStart = 1 + (cut % (steps.length + 1));
        const merge = (kept: PositionedFact[]) => [...lifecycle, ...kept].sort((a, b) => a.position - b.position || (a.fact.kind === 'outcome' ? 1 : 0) - (b.fact.kind === 'outcome' ? 1 : 0));
        const options = { ...defaultLivenessOptions, darkAfterMisses: 3, recoverAfterSuccesses: 2 };
        const whole = replayNodeLiveness('n', merge(outcomes), options);

        const finder = new FoldStartFinder(lifecycle, options);
        const before = outcomes.filter((f) => f.position <= windowStart);
        for (let i = before.length - 1; i >= 0 && !finder.older(before[i]!); i -= 1);
        const start = finder.startPosition;
        const kept = outcomes.filter((f) => f.position > windowStart || start === null || f.position >= start);
        const partial = replayNodeLiveness('n', merge(kept), options);

        const after = (r: typeof whole) => ({
          silences: r.silences.filter((s) => s.endPosition === null || s.endPosition > windowStart),
          spells: r.darkSpells.filter((s) => s.darkPosition > windowStart || s.endPosition === null || s.endPosition > windowStart),
          state: { ...r.state, consecutiveSuccesses: Math.min(r.state.consecutiveSuccesses, options.recoverAfterSuccesses), gapCount: 0, openGap: r.state.openGap ? { ...r.state.openGap, gapId: '' } : null },
        });
        expect(after(partial)).toEqual(after(whole));
      }),
      { numRuns: 500 },
    );
  });
});
