/**
 * `npm run bench:rotation [-- --json] [--bmcs N] [--cap N] [--kills N] [--seed N]`: every simulated BMC's password
 * changed by one credential rotation (default 25,000 BMCs, site cap 500, a lockout threshold of 3 on every BMC), with
 * the rotation engine SIGKILLed at least 20 times and restarted, while the poller polls the fleet (liveness every 60 s,
 * heavy reads every 10 minutes) with the versions the ledger says are in force. Judged from the BMCs' side: lockouts,
 * failed logins per BMC, passwords no version in the store matches. Prints one JSON line with --json. The database is
 * DATABASE_URL or the machine's PostgreSQL (a fresh database, dropped after).
 */
import { randomBytes } from 'node:crypto';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { runRotation } from './support/rotation-run.js';

const { values } = parseArgs({
  options: {
    json: { type: 'boolean', default: false },
    bmcs: { type: 'string', default: '25000' },
    cap: { type: 'string', default: '500' },
    kills: { type: 'string', default: '20' },
    seed: { type: 'string', default: '1' },
    'timeout-min': { type: 'string', default: '60' },
    'liveness-s': { type: 'string', default: '60' },
    'heavy-s': { type: 'string', default: '600' },
    'fence-grace-ms': { type: 'string', default: '4000' },
  },
});
function killWindow(bmcs: number, cap: number, kills: number): [number, number] {
  const runMs = (Math.ceil(bmcs / cap) * 8 + 60) * 1000;
  const mean = Math.max(2_000, runMs / (Math.max(1, kills) * 1.3));
  return [Math.round(mean / 2), Math.round(mean * 1.5)];
}

const admin = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const name = `fl_bench_rotation_${randomBytes(4).toString('hex')}`;
const client = new pg.Client({ connectionString: admin });
await client.connect();
await client.query(`CREATE DATABASE ${name}`);
await client.end();
const url = new URL(admin);
url.pathname = `/${name}`;
try {
  const bmcs = Number(values.bmcs);
  const result = await runRotation({
    connectionString: url.toString(),
    bmcs,
    cap: Number(values.cap),
    kills: Number(values.kills),
    seed: Number(values.seed),
    // Spread over the run (its length estimated from the cap: about 8 s per BMC in flight, plus the waves' tails), so
    // the kills land in the canary, the early waves and the largest one alike.
    killAfterMs: killWindow(bmcs, Number(values.cap), Number(values.kills)),
    fenceGraceMs: Number(values['fence-grace-ms']),
    livenessIntervalS: Number(values['liveness-s']),
    heavyIntervalS: Number(values['heavy-s']),
    pollerRequestTimeoutMs: 3_000,
    bakeMs: 2_000,
    timeoutMs: Number(values['timeout-min']) * 60_000,
    simProcess: bmcs >= 1_000,
    log: values.json ? undefined : (line) => process.stderr.write(`${line}\n`),
  });
  const { bmcs: n, kills, rotated, held, lockouts, unknown_password_bmcs, max_failed_logins_per_bmc, poller_latches_from_rotation, wall_s, status, kept, held_fenced } = result;
  const line = { bmcs: n, kills, rotated, held, lockouts, unknown_password_bmcs, max_failed_logins_per_bmc, poller_latches_from_rotation, wall_s, status, kept, held_fenced, failed_logins: result.failed_logins, password_changes: result.password_changes, versions_retired: result.versions_retired };
  process.stdout.write(values.json ? `${JSON.stringify(line)}\n` : `${JSON.stringify(result, null, 2)}\n`);
} finally {
  const drop = new pg.Client({ connectionString: admin });
  await drop.connect();
  await drop.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  await drop.end();
}
