/**
 * The scale benchmark: the simulator and the per-target scheduler (or, with --naive, a fan-out baseline)
 * at 60 s intervals; prints one JSON object.
 *
 *   npm run bench:scale -- --bmcs 25000 --duration 780 --json [--naive] [--interval 60] [--captures DIR] [--max-reads 2048] [--no-expand] [--tls]
 *   npm run bench:scale -- --processes 3 --bmcs 25000 --kill-one --json [--pause S] [--lease-ttl S]
 *   npm run bench:scale -- --bmcs 25000 --push --duration 900 --json [--heartbeat S] [--audit S] [--broken N] [--mockup NAME]...
 *
 * With --processes N, N `fleet-ledger start` processes share one database and poll the fleet (three sites) by
 * shard leases; --kill-one SIGKILLs one at a random moment, --pause S then SIGSTOPs another for S seconds.
 * The BMCs are generated from the built-in vendor profiles; --captures DIR serves real Mockup-Creator captures.
 * --tls: the simulator serves HTTPS (a self-signed certificate per BMC) and the poller pins each at first use.
 * --push: the fleet is run twice in one invocation, poll only and with push (SSE streams with heartbeats every
 * --heartbeat seconds, audited every --audit seconds, --broken subscriptions broken mid-run); one row compares them.
 */
import { parseArgs } from 'node:util';
import { benchPostgres } from './support/bench-database.js';
import { runScale } from './support/scale-run.js';
import { runCluster } from './support/cluster-run.js';
import { runPushRow } from './support/push-row.js';

const { values } = parseArgs({
  options: {
    bmcs: { type: 'string', default: '25000' },
    duration: { type: 'string', default: '780' },
    interval: { type: 'string', default: '60' },
    dark: { type: 'string', default: '100' },
    flap: { type: 'string', default: '50' },
    naive: { type: 'boolean', default: false },
    json: { type: 'boolean', default: false },
    captures: { type: 'string' },
    processes: { type: 'string', default: '1' },
    'kill-one': { type: 'boolean', default: false },
    pause: { type: 'string', default: '0' },
    'lease-ttl': { type: 'string', default: '15' },
    sites: { type: 'string', default: '3' },
    seed: { type: 'string', default: '20261204' },
    'max-reads': { type: 'string', default: '2048' },
    'no-expand': { type: 'boolean', default: false },
    tls: { type: 'boolean', default: false },
    push: { type: 'boolean', default: false },
    heartbeat: { type: 'string', default: '10' },
    audit: { type: 'string', default: '300' },
    broken: { type: 'string' },
    mockup: { type: 'string', multiple: true },
  },
});
const postgres = await benchPostgres();
try {
  const interval = Number(values.interval);
  if (values.push) {
    const bmcs = Number(values.bmcs);
    const row = await runPushRow({
      base: { bmcs, intervalS: interval, durationS: Number(values.duration), darkAtS: interval, darkCount: Number(values.dark), flapCount: Number(values.flap), maxConcurrentReads: Number(values['max-reads']), expandCollections: !values['no-expand'], naive: false, ...(values.mockup ? { mockups: values.mockup } : {}) },
      freshDatabase: () => postgres.freshDatabase(),
      heartbeatS: Number(values.heartbeat),
      auditIntervalS: Number(values.audit),
      broken: Number(values.broken ?? Math.max(2, Math.round(bmcs / 100))),
      log: (line) => process.stderr.write(`${line}\n`),
    });
    process.stdout.write(values.json ? `${JSON.stringify(row)}\n` : `${Object.entries(row).map(([k, v]) => `${k}=${typeof v === 'object' ? JSON.stringify(v) : v}`).join(' ')}\n`);
  } else if (Number(values.processes) > 1) {
    const { lease_events: _events, ...result } = await runCluster({
      connectionString: await postgres.freshDatabase(),
      bmcs: Number(values.bmcs),
      sites: Number(values.sites),
      processes: Number(values.processes),
      intervalS: interval,
      leaseTtlS: Number(values['lease-ttl']),
      warmupS: interval,
      killWindowS: interval,
      killOne: values['kill-one'],
      pauseS: Number(values.pause),
      settleS: 2 * interval,
      latencyScale: 1,
      seed: Number(values.seed),
      log: (line) => process.stderr.write(`${line}\n`),
    });
    process.stdout.write(values.json ? `${JSON.stringify(result)}\n` : `${Object.entries(result).map(([k, v]) => `${k}=${typeof v === 'object' ? JSON.stringify(v) : v}`).join(' ')}\n`);
  } else {
    const result = await runScale({
      bmcs: Number(values.bmcs),
      intervalS: interval,
      durationS: Number(values.duration),
      darkAtS: interval,
      darkCount: Number(values.dark),
      flapCount: Number(values.flap),
      maxConcurrentReads: Number(values['max-reads']),
      expandCollections: !values['no-expand'],
      naive: values.naive,
      tls: values.tls,
      connectionString: await postgres.freshDatabase(),
      ...(values.captures ? { captures: values.captures } : {}),
    });
    process.stdout.write(values.json ? `${JSON.stringify(result)}\n` : `${Object.entries(result).map(([k, v]) => `${k}=${v}`).join(' ')}\n`);
  }
} finally {
  await postgres.close();
}
