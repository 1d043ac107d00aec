/**
 * The fleet as of random instants: a realistic log of `--events` events for `--nodes` nodes (the generator of
 * bench:replay), read-model snapshots every `--snapshot-every` events (built from the log as a ledger upgraded to time
 * travel would, timed), then dark nodes, open alarms, inventory counts and drift asked as of random instants, each at
 * a position no earlier question materialized. Beside it in the same run, the baseline: the same question answered by
 * replaying every projection from position 1 (what the ledger could do without snapshots).
 *
 *   npx tsx bench/asof.ts --json [--nodes 25000] [--events 2000000] [--queries 30] [--snapshot-every 50000]
 */
import { parseArgs } from 'node:util';
import type { Kysely } from 'kysely';
import { darkNodes, driftFindings, fleetProjections, inventoryBy, openAlarms } from '../projections/index.js';
import { AsOfEngine } from '../replay/as-of/index.js';
import { EventStore } from '../src/ledger/index.js';
import { seededRandom } from '../src/sim/index.js';
import { benchPostgres, percentile, round } from './support/bench-database.js';
import { generateFleetLog } from './support/fleet-log.js';

const { values } = parseArgs({
  options: {
    json: { type: 'boolean' },
    nodes: { type: 'string', default: '25000' },
    events: { type: 'string', default: '2000000' },
    queries: { type: 'string', default: '30' },
    'snapshot-every': { type: 'string', default: '50000' },
    seed: { type: 'string', default: '7' },
  },
});
const nodeCount = Number(values.nodes);
const targetEvents = Number(values.events);
const queries = Number(values.queries);
const every = Number(values['snapshot-every']);
const log = (line: string): void => void process.stderr.write(`${line}\n`);

const postgres = await benchPostgres();
const store = await EventStore.open({ connectionString: await postgres.freshDatabase(), poolSize: 6, maxBatchEvents: 20_000 });
try {
  const generated = await generateFleetLog(store, { nodeCount, targetEvents, seed: Number(values.seed) });
  const head = await store.head();
  log(`generated ${head.position} events in ${round(generated.seconds, 1)} s`);

  const engine = new AsOfEngine(store, fleetProjections(), { cached: 2 });
  await engine.start({ snapshots: false });
  const backfillStarted = performance.now();
  const snapshots = await engine.backfillSnapshots(every);
  const backfillSeconds = (performance.now() - backfillStarted) / 1000;
  log(`${snapshots} snapshots built in ${round(backfillSeconds, 1)} s`);

  const first = (await store.readAll({ fromPosition: 1, limit: 1 }))[0]!.recordedAt.getTime();
  const last = head.recordedAt.getTime();
  const random = seededRandom(99);
  const ask = async (db: Kysely<any>): Promise<{ dark: number; alarms: number; vendors: number; drift: number }> => {
    const [dark, alarms, vendors, drift] = await Promise.all([darkNodes(db), openAlarms(db), inventoryBy(db, 'manufacturer'), driftFindings(db)]);
    return { dark: dark.length, alarms: alarms.length, vendors: vendors.length, drift: drift.length };
  };
  const seconds: number[] = [];
  const tails: number[] = [];
  let sample: unknown;
  for (let q = 0; q < queries; q++) {
    const instant = new Date(first + random() * (last - first)).toISOString();
    const started = performance.now();
    const point = await engine.resolve(instant);
    const view = await engine.view(point);
    sample = { instant, position: point.position, ...(await ask(view.db)) };
    seconds.push((performance.now() - started) / 1000);
    tails.push(engine.stats.lastTailEvents);
  }
  seconds.sort((a, b) => a - b);
  log(`as-of answers: p50 ${round(percentile(seconds, 50), 2)} s, p99 ${round(percentile(seconds, 99), 2)} s; e.g. ${JSON.stringify(sample)}`);

  // The baseline: one question at a late instant answered by replaying every projection from position 1.
  const baseline = new AsOfEngine(store, fleetProjections(), { useSnapshots: false, cached: 1 });
  await baseline.start({ snapshots: false });
  const baselineStarted = performance.now();
  const point = await baseline.resolve(new Date(last - (last - first) * 0.1).toISOString());
  await ask((await baseline.view(point)).db);
  const baselineSeconds = (performance.now() - baselineStarted) / 1000;
  await baseline.stop();
  await engine.stop();

  const result = {
    nodes: nodeCount,
    events: head.position,
    asof_queries: queries,
    asof_p50_s: round(percentile(seconds, 50), 3),
    asof_p99_s: round(percentile(seconds, 99), 3),
    tail_events_max: Math.max(...tails),
    snapshot_every_events: every,
    snapshots,
    snapshot_build_s: round(backfillSeconds, 1),
    replay_from_zero_s: round(baselineSeconds, 1),
    speedup_vs_replay_from_zero: round(baselineSeconds / percentile(seconds, 50), 1),
    backend: postgres.kind,
  };
  process.stdout.write(values.json ? `${JSON.stringify(result)}\n` : `${JSON.stringify(result, null, 2)}\n`);
} finally {
  await store.close();
  await postgres.close();
}
