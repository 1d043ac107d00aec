import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { registerSimulatedFleet } from '../../src/demo/demo-fleet.js';
import { EventStore } from '../../src/ledger/index.js';
import { startSimulator, type Simulator } from '../../src/sim/index.js';
import { applyRolloutVerb, loadProvision, previewRollout, requestRollout, SagaSupervisor, startProvisioning, type Candidate } from '../../sagas/index.js';
import { backends, freshDatabase } from '../support/backends.js';

/**
 * Two processes running sagas on one database, each with a store of its own (its own pool, its own sessions, named by
 * `application_name`) and a supervisor, as two `fleet-ledger start` processes have. Every saga is driven by one of
 * them at a time, and the other stands by without holding anything for it.
 */
describe('sagas shared by two processes', () => {
  let sim: Simulator;
  const operator = { kind: 'operator' as const, id: 'ops@fleet-ledger', role: 'operator' };
  const fast = { timing: { pollIntervalMs: 150, readIntervalMs: 150, probeIntervalMs: 300, retryBackoffMs: 200 }, tickMs: 150, gateRetryMs: 300, requestTimeoutMs: 3_000 };
  const access = (nodeId: string) => {
    const bmc = sim.fleet().find((candidate) => candidate.id === nodeId);
    return bmc ? { baseUrl: bmc.baseUrl, username: bmc.username, password: bmc.password } : undefined;
  };
  const until = async (what: string, check: () => Promise<boolean>, ms: number): Promise<void> => {
    const end = Date.now() + ms;
    while (!(await check())) {
      if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  };
  /** Two stores on a fresh database, named `process-a` and `process-b` to PostgreSQL. */
  const twoProcesses = async (poolSize: number): Promise<{ a: EventStore; b: EventStore; close: () => Promise<void> }> => {
    const db = await freshDatabase(backends()[0]!.adminUrl!);
    const named = (name: string): string => {
      const url = new URL(db.url);
      url.searchParams.set('application_name', name);
      return url.toString();
    };
    const a = await EventStore.open({ connectionString: named('process-a'), migrate: true, poolSize });
    const b = await EventStore.open({ connectionString: named('process-b'), migrate: false, poolSize });
    return {
      a,
      b,
      close: async () => {
        await a.close();
        await b.close();
        await db.drop();
      },
    };
  };

  beforeAll(async () => {
    sim = await startSimulator({ bmcs: 3, seed: 11, behaviour: { latencyScale: 0.02, firmwareUpdateMs: 600, resetDarkMs: 400, darkMode: 'refuse' } });
  });
  afterAll(async () => sim?.close());

  it('a node being provisioned is driven by one process at a time, never by both', async () => {
    const { a, b, close } = await twoProcesses(4);
    // Who wrote each stream as the saga, from each process's side (a refused append counts for nobody).
    const writers = new Map<string, Set<string>>();
    for (const [name, store] of [['process-a', a], ['process-b', b]] as const) {
      const append = store.append.bind(store);
      store.append = async (stream, events, options) => {
        const result = await append(stream, events, options);
        // Who drives the saga: its own appends (the operator's start, made through process a, is nobody's drive).
        if (events.some((event) => event.actor.kind === 'saga')) writers.set(stream, (writers.get(stream) ?? new Set()).add(name));
        return result;
      };
    }
    const supervisors = [a, b].map((store, i) => new SagaSupervisor({ store, access, scanMs: 200, engine: { ...fast, quietPeriodMs: 2_000 }, log: (m, f) => process.env['DEBUG_SAGAS'] && process.stderr.write(`${i} ${new Date().toISOString()} ${m} ${JSON.stringify(f)}\n`) }));
    try {
      await registerSimulatedFleet(a, sim.bmcs, 2);
      const nodes = sim.bmcs.slice(0, 2);
      for (const node of nodes) {
        await startProvisioning(
          a,
          { nodeId: node.id, declared: {}, baseline: [{ component: 'BMC', version: '9.6.0', imageUri: `${sim.controlUrl}/sim/images/bmc-9.6.0.bin` }], burnInMs: 1_500, burnInIntervalMs: 200 },
          operator,
        );
      }
      for (const supervisor of supervisors) supervisor.start();
      // Ready, or quarantined in burn-in by the health some simulated vendors report: either way the saga ran to its end.
      const ended = async (): Promise<boolean> => (await Promise.all(nodes.map((node) => loadProvision(a, node.id)))).every((state) => state.stage === 'ready' || state.stage === 'quarantined');
      await until('both provisionings to end', ended, 45_000);
      for (const node of nodes) expect((await loadProvision(a, node.id)).settled.get('BMC')).toBe('updated');
      for (const node of nodes) {
        const mine = [...writers].filter(([stream]) => stream === `provision-${node.id}` || (stream.startsWith('fwstep-prov') && stream.endsWith(`-${node.id}`)));
        expect(mine.length).toBeGreaterThanOrEqual(2);
        for (const [stream, by] of mine) expect({ stream, by: [...by] }).toEqual({ stream, by: [expect.any(String)] });
      }
      expect(sim.updateStats().duplicateSubmissions).toBe(0);
    } finally {
      await Promise.all(supervisors.map((supervisor) => supervisor.stop()));
      await close();
    }
  }, 60_000);

  it('a provisioning saga that ended without giving its slot back (its process died between the two) has the slot released by the next supervisor', async () => {
    const { a, b, close } = await twoProcesses(4);
    const supervisor = new SagaSupervisor({ store: b, access, scanMs: 200, engine: fast });
    try {
      await registerSimulatedFleet(a, sim.bmcs, 2);
      const node = sim.bmcs[2]!;
      const started = await startProvisioning(a, { nodeId: node.id, declared: {}, baseline: [], burnInMs: 1_000 }, operator);
      const site = started.spec!.site;
      // What the dead process left: its slot taken, and the saga's last step written, but not the release.
      const saga = { kind: 'saga' as const, id: `provision:${node.id}` };
      await a.append(`capacity-${site}`, [{ type: 'SlotAcquired', data: { site, slotId: `provision-${node.id}:1`, sagaId: `provision-${node.id}`, nodeId: node.id, rack: started.spec!.rack, pdu: '', tor: '', cdu: '' }, actor: saga }]);
      await a.append(`provision-${node.id}`, [{ type: 'NodeReady', data: { nodeId: node.id }, actor: saga }], { expectedVersion: started.version });
      expect((await loadProvision(a, node.id)).stage).toBe('ready');
      supervisor.start();
      const released = async (): Promise<boolean> => (await a.readStream(`capacity-${site}`)).some((event) => event.type === 'SlotReleased' && (event.data as { nodeId: string }).nodeId === node.id);
      await until('the slot to be released', released, 15_000);
      const release = (await a.readStream(`capacity-${site}`)).find((event) => event.type === 'SlotReleased')!;
      expect(release.data).toMatchObject({ sagaId: `provision-${node.id}`, why: 'provisioning ready' });
      expect(release.actor).toMatchObject({ kind: 'saga', id: `provision:${node.id}`, lease: { saga: `fleet-ledger:provision:${node.id}`, epoch: 1 } });
    } finally {
      await supervisor.stop();
      await close();
    }
  }, 30_000);

  it('a process keeps its pooled connections for its own work, however many rollouts it drives or stands by for', async () => {
    const { a, b, close } = await twoProcesses(4);
    const supervisors: SagaSupervisor[] = [];
    try {
      // Six rollouts (awaiting approval, so they dispatch nothing): more than either pool of 4. A lock held on, or
      // waited for on, a pooled connection would leave A unable to take them all, and B with no connection at all.
      const candidates: Candidate[] = sim.bmcs.map((bmc) => ({ nodeId: bmc.id, site: bmc.site, rack: bmc.rack, pdu: bmc.pdu, tor: bmc.tor, cdu: bmc.cdu, vendor: bmc.vendor, model: bmc.model, fromVersion: bmc.firmware }));
      for (let i = 0; i < 6; i++) {
        const plan = previewRollout({ firmware: { component: 'BMC', version: `9.7.${i}`, imageUri: `${sim.controlUrl}/sim/images/bmc-9.7.${i}.bin`, method: 'SimpleUpdate', applyTime: 'Immediate' }, selector: {}, seed: i }, candidates);
        await requestRollout(a, `standby-${i}`, plan, operator);
      }
      const locksOf = async (name: string, granted: boolean): Promise<number> =>
        Number(
          (
            await sql<{ n: string }>`SELECT count(*) AS n FROM pg_locks l JOIN pg_stat_activity s ON s.pid = l.pid
              WHERE l.locktype = 'advisory' AND l.granted = ${granted} AND s.application_name = ${name}`.execute(a.db)
          ).rows[0]!.n,
        );
      supervisors.push(new SagaSupervisor({ store: a, access, scanMs: 200, engine: fast }));
      supervisors[0]!.start();
      await until('process A to hold the six rollouts', async () => (await locksOf('process-a', true)) === 6, 15_000);
      supervisors.push(new SagaSupervisor({ store: b, access, scanMs: 200, engine: fast }));
      supervisors[1]!.start();
      await new Promise((resolve) => setTimeout(resolve, 1_500));
      // B still answers its own queries, and none of its sessions sits waiting on a rollout's lock.
      const head = await Promise.race([b.head().then(() => 'answered'), new Promise((resolve) => setTimeout(() => resolve('no connection left'), 3_000))]);
      expect(head).toBe('answered');
      expect(await locksOf('process-b', false)).toBe(0);
      expect(await locksOf('process-b', true)).toBe(0);
      // B takes the rollouts over once A lets them go (one aborted meanwhile, so five are left).
      await applyRolloutVerb(a, 'standby-0', { verb: 'abort', reason: 'test over' }, operator);
      await supervisors[0]!.stop();
      await until('process B to hold the five rollouts left', async () => (await locksOf('process-b', true)) === 5, 15_000);
    } finally {
      await Promise.all(supervisors.map((supervisor) => supervisor.stop()));
      await close();
    }
  }, 60_000);
});
