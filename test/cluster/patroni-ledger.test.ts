/**
 * `fleet-ledger start` on a Patroni cluster whose primary's postmaster is SIGKILLed (bench/support/failover-run.ts, the
 * small version of `npm run bench:failover`):
 * synchronous (Patroni synchronous_mode strict, synchronous_commit on), the primary's replication cut for 3 s and then
 * the primary killed under writers: appends wait instead of being acknowledged by the primary alone, nothing
 * acknowledged is lost, nothing is stored twice, and everything resumes by itself (projections, the Merkle tree and
 * its checkpoints, the live feed and a KurrentDB subscription, each position once); the polled fleet, its held
 * outcomes and a rollout through three failovers are the bench's (`npm run bench:failover`). The asynchronous
 * counterpart (what is lost without synchronous_mode, and that the ledger notices) is
 * `patroni-asynchronous.heavy.test.ts`, run by `npm run test:heavy`.
 * Off CI without patroni, etcd and haproxy these skip, naming the install command.
 */
import { describe, expect, it } from 'vitest';
import { runFailover } from '../../bench/support/failover-run.js';
import { patroniRequirement } from '../../bench/support/patroni-cluster.js';

const patroni = patroniRequirement();
const log = process.env.FLEET_LEDGER_DEBUG_FAILOVER ? (line: string) => process.stderr.write(`[failover] ${line}\n`) : undefined;

describe.skipIf(!patroni.runnable)(patroni.title('the ledger on a Patroni cluster'), () => {
  it('synchronous: the primary\'s replication cut, then the primary killed under writers: appends wait instead of being acknowledged alone, nothing acknowledged is lost, nothing is stored twice, and every follower resumes', async () => {
    patroni.require();
    const row = await runFailover({ bmcs: 0, fleet: false, intervalS: 10, writers: 4, failovers: 1, settleS: 3, cutReplicationS: 3, catchUpS: 60, ...(log ? { log } : {}) });
    process.stdout.write(`${JSON.stringify(row)}\n`);
    expect(row.failovers).toBe(1);
    expect(row.acknowledged).toBeGreaterThan(0);
    expect(row).toMatchObject({ lost: 0, duplicates: 0, chain_ok: true, checkpoints_consistent: true });
    // Nothing is acknowledged while no standby can confirm it (a moment's grace for what was in flight at the cut).
    expect(row.acknowledged_while_cut).toBeLessThanOrEqual(row.writers);
    expect(row.max_unavailable_s).toBeGreaterThanOrEqual(3);
    expect(row.max_unavailable_s).toBeLessThanOrEqual(30);
    for (const feed of [row.live_feed, row.kurrent_subscription]) expect(feed).toMatchObject({ gaps: 0, repeats: 0 });
    expect(row.projections_lag_max).toBe(0);
    expect(row.merkle_lag).toBe(0);
  }, 180_000);
});
