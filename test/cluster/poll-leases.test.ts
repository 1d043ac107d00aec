import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ClusterMember } from '../../src/cluster/index.js';
import { registerSimulatedFleet, simulatorCredentials } from '../../src/demo/demo-fleet.js';
import { EventStore, isLedgerError } from '../../src/ledger/index.js';
import { Poller } from '../../src/poller/index.js';
import { parseScenario, startSimulator, type Simulator } from '../../src/sim/index.js';
import { backends, freshDatabase } from '../support/backends.js';
import { until } from '../poller/support/until.js';

/**
 * Poll leases in one process: members of a cluster on one database, each with its own poller. What several OS
 * processes do (a SIGKILL, a SIGSTOP past the lease) is in `three-processes.test.ts`.
 */
describe('poll leases and fencing', () => {
  let store: EventStore;
  let drop: () => Promise<void>;
  let sim: Simulator;
  beforeAll(async () => {
    const db = await freshDatabase(backends()[0]!.adminUrl!);
    drop = db.drop;
    store = await EventStore.open({ connectionString: db.url });
    sim = await startSimulator({
      scenario: parseScenario({
        name: 'three sites',
        fleet: { mix: [{ fixture: 'dell' }] },
        sites: ['ams1', 'fra1', 'par1'].map((id) => ({ id, racks: 2, nodesPerRack: 10 })),
        behaviour: { latencyScale: 0.02 },
      }),
    });
    await registerSimulatedFleet(store, sim.bmcs, 1);
  });
  afterAll(async () => {
    await sim?.close();
    await store?.close();
    await drop?.();
  });

  const event = (epoch: number, shard = 'ams1') => ({
    type: 'PollOutcomesRecorded',
    data: { site: 'ams1', windowStart: new Date().toISOString(), nodeIds: ['bmc-0'], work: ['liveness'], outcomes: ['success'], latencyMs: [3], offsetMs: [0] },
    actor: { kind: 'system' as const, id: 'poller', lease: { shard, epoch } },
  });

  it('an append under a superseded lease epoch is refused with LEDGER_STALE_EPOCH and writes nothing; the new epoch writes', async () => {
    const a = new ClusterMember({ pool: store.pool, processId: 'fence-a', leaseTtlMs: 60_000, pinned: ['fence-site'] });
    a.shardOf('fence-site', 'n1');
    await a.tickNow();
    const first = a.held().find((lease) => lease.shard === 'fence-site')!;
    expect(first.reason).toBe('new');
    // `a` is paused past its lease: time passes for everyone else.
    await store.pool.query(`UPDATE cluster_leases SET expires_at = now() - interval '1 second' WHERE shard = 'fence-site'`);
    const b = new ClusterMember({ pool: store.pool, processId: 'fence-b', leaseTtlMs: 60_000, pinned: ['fence-site'], handoverGraceMs: 0 });
    await store.pool.query(`DELETE FROM cluster_members WHERE process_id = 'fence-a'`); // `a` stopped heartbeating too
    b.shardOf('fence-site', 'n1');
    await b.tickNow();
    const second = b.held().find((lease) => lease.shard === 'fence-site')!;
    expect(second).toMatchObject({ epoch: first.epoch + 1, reason: 'expired', previousOwner: 'fence-a' });

    const head = (await store.head()).position;
    const refused = await store.append('polls-fence-site', [event(first.epoch, 'fence-site')]).catch((error: unknown) => error);
    expect(isLedgerError(refused) && refused.code).toBe('LEDGER_STALE_EPOCH');
    expect(isLedgerError(refused) && refused.details).toMatchObject({ shard: 'fence-site', epoch: first.epoch, currentEpoch: second.epoch, owner: 'fence-b' });
    expect((await store.head()).position).toBe(head);
    // A shard nobody ever leased is refused the same way.
    const unleased = await store.append('polls-fence-site', [event(1, 'no-such-shard')]).catch((error: unknown) => error);
    expect(isLedgerError(unleased) && unleased.code).toBe('LEDGER_STALE_EPOCH');

    const accepted = await store.append('polls-fence-site', [event(second.epoch, 'fence-site')]);
    expect(accepted.positions).toHaveLength(1);
    const [stored] = await store.readStream('polls-fence-site');
    expect(stored!.actor).toEqual({ kind: 'system', id: 'poller', lease: { shard: 'fence-site', epoch: second.epoch } });
    await b.stop();
    expect((await store.pool.query(`SELECT released FROM cluster_leases WHERE shard = 'fence-site'`)).rows[0].released).toBe(true);
    await store.pool.query(`DELETE FROM cluster_leases WHERE shard = 'fence-site'`); // not a site of the next test's fleet
  });

  it('two members split the sites, never poll one BMC at once, and a member leaving hands its shards over at once', async () => {
    const credentials = simulatorCredentials(sim);
    const members: ClusterMember[] = [];
    const pollers: Poller[] = [];
    const aborts: AbortController[] = [];
    const start = async (processId: string): Promise<{ member: ClusterMember; poller: Poller }> => {
      let poller: Poller | null = null;
      const member = new ClusterMember({
        pool: store.pool,
        processId,
        leaseTtlMs: 3_000,
        handoverGraceMs: 500,
        onAcquired: (shard, lease) => poller?.activateShard(shard, lease.epoch, lease.pollAfter, 300),
        onRelease: (shard) => poller!.deactivateShard(shard),
        onLost: (shard) => void poller?.deactivateShard(shard),
      });
      poller = new Poller({ store, credentials, plainHttpSites: ['*'], cluster: member, policy: { jitter: 0, flushIntervalMs: 200, intervals: { health: 600, inventory: 600, firmware: 600 } } });
      const abort = new AbortController();
      void poller.followIntents(abort.signal);
      poller.start();
      await member.start();
      members.push(member);
      pollers.push(poller);
      aborts.push(abort);
      return { member, poller };
    };
    const one = await start('split-1');
    await until(() => one.poller.activeShards().length === 3 && one.poller.activeShards().every((s) => s.targets === 20), 10_000, 'the only member polls all three sites');
    const two = await start('split-2');
    // The assignment moves one or two sites to the newcomer, released by the first member and taken at once.
    await until(() => two.poller.activeShards().length >= 1 && one.poller.activeShards().length + two.poller.activeShards().length === 3, 10_000, 'the sites are split');
    const split = [one.poller.activeShards().map((s) => s.shard), two.poller.activeShards().map((s) => s.shard)];
    expect(new Set(split.flat()).size).toBe(3);
    expect(Math.abs(split[0]!.length - split[1]!.length)).toBe(1);
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    // The second member leaves cleanly: the first takes its sites back without waiting for the lease to run out.
    const leftAt = Date.now();
    aborts[1]!.abort();
    await two.member.stop();
    await two.poller.stop();
    await until(() => one.poller.activeShards().length === 3, 5_000, 'the first member polls all three sites again');
    expect(Date.now() - leftAt).toBeLessThan(3_000);
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    aborts[0]!.abort();
    await one.member.stop();
    await one.poller.stop();

    expect(sim.stats().doublePolled).toBe(0);
    expect(sim.stats().rejections).toBe(0);
    // Every outcome batch names the lease it was written under, and the epochs of a site only grow along the log.
    const batches = (await store.readAll({ fromPosition: 1, limit: 100_000 })).filter((e) => e.type === 'PollOutcomesRecorded' && e.stream !== 'polls-fence-site');
    expect(batches.length).toBeGreaterThan(10);
    const lastEpoch = new Map<string, number>();
    for (const batch of batches) {
      const lease = (batch.actor as { lease?: { shard: string; epoch: number } }).lease;
      expect(lease?.shard).toBe((batch.data as { site: string }).site);
      expect(lease!.epoch).toBeGreaterThanOrEqual(lastEpoch.get(lease!.shard) ?? 0);
      lastEpoch.set(lease!.shard, lease!.epoch);
    }
    expect(Math.max(...lastEpoch.values())).toBeGreaterThanOrEqual(2); // at least one site changed hands and back
  }, 60_000);

  it('a hand-over whose drain never ends stops renewing the lease, and the next member takes the shard when it runs out', async () => {
    const ttl = 1_500;
    const stuck = new ClusterMember({ pool: store.pool, processId: 'drain-stuck', leaseTtlMs: ttl, drainBoundMs: 600, onRelease: () => new Promise<void>(() => undefined) });
    for (const site of ['drain-1', 'drain-2']) stuck.shardOf(site, 'n1');
    await stuck.start();
    await until(() => ['drain-1', 'drain-2'].every((shard) => stuck.held().some((lease) => lease.shard === shard)), 5_000, 'the only member holds both shards');
    // The newcomer is pinned to one of them (the assignment gives it that one, whatever else the database holds); the
    // stuck member's drain of it never ends.
    const next = new ClusterMember({ pool: store.pool, processId: 'drain-next', leaseTtlMs: ttl, handoverGraceMs: 0, pinned: ['drain-1'] });
    next.shardOf('drain-1', 'n1');
    await next.start();
    try {
      await until(() => next.held().some((lease) => lease.shard === 'drain-1'), 10 * ttl, 'the newcomer takes the shard the stuck member could not drain');
      const taken = next.held().find((lease) => lease.shard === 'drain-1')!;
      expect(taken.reason).toBe('expired');
      expect(taken.previousOwner).toBe('drain-stuck');
      expect(stuck.stats.drainsAbandoned).toBeGreaterThanOrEqual(1);
      expect(stuck.held().some((lease) => lease.shard === taken.shard)).toBe(false);
    } finally {
      await next.stop();
      await Promise.race([stuck.stop(), new Promise((resolve) => setTimeout(resolve, 3_000))]);
    }
  }, 30_000);
});
