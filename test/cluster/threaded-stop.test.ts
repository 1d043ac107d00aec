import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ThreadedClusterMember } from '../../src/cluster/index.js';
import { EventStore } from '../../src/ledger/index.js';
import { backends, freshDatabase } from '../support/backends.js';

/**
 * A clean stop of a process in a cluster hands its shards over: each is drained (its visits cut) and released, so the
 * others take it at once. A shard whose drain does not end (a visit that never lets go) must not hold the stop: past
 * a bound the lease is left to run out, as after a crash, instead of the stop waiting a minute (as it once did).
 */
describe('a clean stop of the lease keeper thread', () => {
  let url: string;
  let drop: () => Promise<void>;
  let observer: pg.Client;
  beforeAll(async () => {
    const db = await freshDatabase(backends()[0]!.adminUrl!);
    ({ url, drop } = db);
    await (await EventStore.open({ connectionString: url })).close(); // the schema
    observer = new pg.Client({ connectionString: url });
    await observer.connect();
  });
  afterAll(async () => {
    await observer?.end();
    await drop?.();
  });

  const leaseOf = async (shard: string): Promise<{ owner: string | null; released: boolean }> =>
    (await observer.query<{ owner: string | null; released: boolean }>('SELECT owner, released FROM cluster_leases WHERE shard = $1', [shard])).rows[0]!;

  const holding = async (member: ThreadedClusterMember, shard: string): Promise<void> => {
    await member.start();
    member.shardOf(shard, 'n1');
    for (let i = 0; i < 100 && !member.held().some((lease) => lease.shard === shard); i++) await new Promise((resolve) => setTimeout(resolve, 100));
    expect(member.held().map((lease) => lease.shard)).toContain(shard);
  };

  it('releases every shard whose visits end, at once', async () => {
    const member = new ThreadedClusterMember({ connectionString: url, processId: 'stops-cleanly', pinned: ['site-quick'], leaseTtlMs: 60_000, onRelease: async () => undefined });
    await holding(member, 'site-quick');
    const started = Date.now();
    await member.stop();
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(await leaseOf('site-quick')).toMatchObject({ owner: 'stops-cleanly', released: true });
  });

  it('does not wait past its bound for a shard whose drain never ends: that lease is left to run out', async () => {
    const member = new ThreadedClusterMember({ connectionString: url, processId: 'stuck-visit', pinned: ['site-stuck'], leaseTtlMs: 60_000, onRelease: () => new Promise<void>(() => undefined) });
    await holding(member, 'site-stuck');
    const started = Date.now();
    await member.stop();
    const took = Date.now() - started;
    expect(took).toBeGreaterThanOrEqual(9_000);
    expect(took).toBeLessThan(15_000);
    expect(await leaseOf('site-stuck')).toMatchObject({ owner: 'stuck-visit', released: false });
  }, 30_000);
});
