/**
 * `npm run bench:rollout [-- --json] [--bmcs N] [--cap N] [--kills N] [--processes N]`: a firmware rollout over
 * simulated BMCs (default 25,000, site cap 500, 1% of update requests failing on the BMC) with the engine SIGKILLed at
 * least 20 times and restarted; with `--processes` > 1, that many saga processes run at once and the one holding the
 * rollout is killed and replaced. Prints one JSON line with --json. The database is DATABASE_URL or the machine's
 * PostgreSQL (a fresh database, dropped after).
 */
import { randomBytes } from 'node:crypto';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { runRollout } from './support/rollout-run.js';

const { values } = parseArgs({
  options: {
    json: { type: 'boolean', default: false },
    bmcs: { type: 'string', default: '25000' },
    cap: { type: 'string', default: '500' },
    kills: { type: 'string', default: '20' },
    seed: { type: 'string', default: '1' },
    'timeout-min': { type: 'string', default: '40' },
    'liveness-s': { type: 'string', default: '60' },
    processes: { type: 'string', default: '1' },
  },
});
const admin = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const name = `fl_bench_rollout_${randomBytes(4).toString('hex')}`;
const client = new pg.Client({ connectionString: admin });
await client.connect();
await client.query(`CREATE DATABASE ${name}`);
await client.end();
const url = new URL(admin);
url.pathname = `/${name}`;
try {
  const result = await runRollout({
    connectionString: url.toString(),
    bmcs: Number(values.bmcs),
    cap: Number(values.cap),
    kills: Number(values.kills),
    seed: Number(values.seed),
    failureRate: 0.01,
    killAfterMs: [5_000, 25_000],
    updateMs: 3_000,
    resetDarkMs: 2_000,
    livenessIntervalS: Number(values['liveness-s']),
    rackLimit: 4,
    timeoutMs: Number(values['timeout-min']) * 60_000,
    simProcess: true,
    processes: Number(values.processes),
    log: values.json ? undefined : (line) => process.stderr.write(`${line}\n`),
  });
  const { nodes, completed, failed, held, duplicate_submissions, max_in_flight_observed, cap, kills, wall_s } = result;
  const line = {
    nodes, completed, failed, held, duplicate_submissions, max_in_flight_observed, cap, kills, wall_s, skipped: result.skipped, quarantined: result.quarantined, status: result.status,
    ...(result.across_processes ? { processes: result.across_processes.processes, takeover_ms: result.across_processes.takeovers.map((t) => t.lock_ms), appends_beside_owner: result.across_processes.appends_beside_owner } : {}),
  };
  process.stdout.write(values.json ? `${JSON.stringify(line)}\n` : `${JSON.stringify(result, null, 2)}\n`);
} finally {
  const drop = new pg.Client({ connectionString: admin });
  await drop.connect();
  await drop.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  await drop.end();
}
