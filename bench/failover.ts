/**
 * Issue 45's bar: the ledger on a Patroni-managed PostgreSQL cluster loses nothing acknowledged when its primary dies.
 * Three PostgreSQL 15 nodes under Patroni (synchronous_mode strict, synchronous_commit on), one etcd, HAProxy in front,
 * all on loopback ports in a temp folder (bench/support/patroni-cluster.ts); `fleet-ledger start` on HAProxy with a
 * polled simulated fleet, 16 HTTP writers retrying with idempotency keys, a firmware rollout of 60 nodes, a live feed
 * and a KurrentDB subscription;
 * then the primary's postmaster SIGKILLed `--failovers` times (bench/support/failover-run.ts says what each figure is).
 *
 *   npm run bench:failover -- --json [--failovers 3] [--writers 16] [--bmcs 500] [--interval 15] [--settle 20]
 *                                    [--replication synchronous|asynchronous] [--synchronous-commit on|remote_apply]
 *                                    [--cut S] [--keep]
 *
 * `--replication asynchronous --cut 5` is what Patroni without synchronous_mode can lose: the primary's replication
 * is cut for 5 s before each kill, and the standby promoted lacks what was acknowledged meanwhile.
 * Needs `apt-get install -y patroni etcd-server haproxy postgresql-15`. Prints one JSON row (`--json`) or the row as
 * `key=value`; progress goes to stderr. Exits 1 when a synchronous run misses a goal (lost 0, duplicates 0,
 * max_unavailable_s <= 30, chain_ok, checkpoints_consistent, false_dark 0; the feeds without gap or repeat; the
 * rollout completed with no duplicate submission).
 */
import { parseArgs } from 'node:util';
import { runFailover, stopEveryLedger } from './support/failover-run.js';
import { findPatroniTools, stopEveryCluster } from './support/patroni-cluster.js';

const { values } = parseArgs({
  options: {
    json: { type: 'boolean', default: false },
    failovers: { type: 'string', default: '3' },
    writers: { type: 'string', default: '16' },
    bmcs: { type: 'string', default: '500' },
    interval: { type: 'string', default: '15' },
    settle: { type: 'string', default: '20' },
    replication: { type: 'string', default: 'synchronous' },
    'synchronous-commit': { type: 'string', default: 'on' },
    cut: { type: 'string' },
    keep: { type: 'boolean', default: false },
  },
});

const tools = findPatroniTools();
if (!tools.found) {
  process.stderr.write(`bench:failover: ${tools.reason}\n`);
  process.exit(2);
}
// Ctrl-C: the ledger, then the cluster (its processes run in groups of their own, which a terminal's Ctrl-C misses).
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    process.stderr.write(`bench:failover: ${signal}, stopping the ledger and the cluster\n`);
    stopEveryLedger();
    void stopEveryCluster().finally(() => process.exit(130));
  });
}
const replication = values.replication === 'asynchronous' ? 'asynchronous' : 'synchronous';
const synchronousCommit = values['synchronous-commit'] === 'remote_apply' ? 'remote_apply' : values['synchronous-commit'] === 'remote_write' ? 'remote_write' : 'on';
const started = Date.now();
const row = await runFailover({
  bmcs: Number(values.bmcs),
  intervalS: Number(values.interval),
  writers: Number(values.writers),
  failovers: Number(values.failovers),
  settleS: Number(values.settle),
  replication,
  synchronousCommit,
  ...(values.cut !== undefined ? { cutReplicationS: Number(values.cut) } : {}),
  ...(replication === 'asynchronous' ? { catchUpS: 20 } : {}),
  keep: values.keep,
  log: (line) => process.stderr.write(`[failover ${new Date().toISOString().slice(11, 19)} +${Math.round((Date.now() - started) / 1000)} s] ${line}\n`),
});
const result = { bench: 'failover', date: new Date().toISOString(), ...row };
process.stdout.write(values.json ? `${JSON.stringify(result)}\n` : `${Object.entries(result).map(([k, v]) => `${k}=${typeof v === 'object' ? JSON.stringify(v) : v}`).join(' ')}\n`);
const feedsOk = [row.live_feed, row.kurrent_subscription].every((feed) => feed.gaps === 0 && feed.repeats === 0);
const rolloutOk = row.rollout === null || (row.rollout.status === 'completed' && row.rollout.duplicate_submissions === 0);
const goals = row.lost === 0 && row.duplicates === 0 && row.max_unavailable_s <= 30 && row.chain_ok && row.checkpoints_consistent && row.false_dark === 0 && row.failovers >= Number(values.failovers) && feedsOk && rolloutOk;
if (replication === 'synchronous' && !goals) process.exit(1);
