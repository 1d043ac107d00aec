/**
 * The fleet as of random instants. A realistic log of `--events` events for `--nodes` nodes (the generator of
 * bench:replay) is appended through `store.append` while the projections run live and the snapshotter takes a
 * snapshot every `--snapshot-every` positions of projection progress, as `fleet-ledger start` does, then fills the
 * stretches it could not copy in time (`gap_fill_s`, `gap_fill_snapshots`)
 * (`--snapshots backfill`: the log is appended first and the snapshots are built from it afterwards, as for a ledger
 * upgraded to time travel; both costs are reported). Then, with the runner stopped, the fleet's state (dark nodes,
 * open alarms, inventory counts, drift findings: four questions asked at once, as four API calls would) is asked as of
 * `--queries` random instants, each at a position no earlier question materialized (no cache hit). Beside it, in the
 * same run: instants resolved to positions four ways, and the baseline, one question answered by replaying every
 * projection it reads from position 1. Prints one JSON line.
 *
 *   npx tsx bench/asof.ts --json [--nodes 25000] [--events 2000000] [--queries 40] [--snapshot-every 50000] [--snapshots live|backfill]
 *
 * With `DATABASE_URL`, `--keep` leaves the bench's database in place (its URL is printed) and `--reuse URL` asks the
 * questions of such a database again without generating anything (for working on the question path: the log and its
 * snapshots take half an hour to make at 2 million events).
 */
import { parseArgs } from 'node:util';
import { sql, type Kysely } from 'kysely';
import { darkNodes, driftFindings, fleetProjections, inventoryBy, openAlarms } from '../projections/index.js';
import { AsOfEngine, type AsOfPoint, type MaterializeStats, type SnapshotSummary } from '../replay/as-of/index.js';
import { EventStore, ProjectionRunner, type LedgerHead } from '../src/ledger/index.js';
import { seededRandom } from '../src/sim/index.js';
import { benchPostgres, percentile, round } from './support/bench-database.js';
import { generateFleetLog } from './support/fleet-log.js';

const { values } = parseArgs({
  options: {
    json: { type: 'boolean' },
    nodes: { type: 'string', default: '25000' },
    events: { type: 'string', default: '2000000' },
    queries: { type: 'string', default: '40' },
    'snapshot-every': { type: 'string', default: '50000' },
    snapshots: { type: 'string', default: 'live' },
    seed: { type: 'string', default: '7' },
    keep: { type: 'boolean' },
    reuse: { type: 'string' },
  },
});
const nodeCount = Number(values.nodes);
const targetEvents = Number(values.events);
const queries = Number(values.queries);
const every = Number(values['snapshot-every']);
const mode = values.snapshots;
if (!Number.isInteger(nodeCount) || nodeCount < 40 || !Number.isInteger(targetEvents) || targetEvents < nodeCount * 5) {
  process.stderr.write('--nodes must be >= 40 and --events >= 5 x nodes (the setup alone is about 5 events per node)\n');
  process.exit(2);
}
if (mode !== 'live' && mode !== 'backfill') {
  process.stderr.write(`--snapshots must be live or backfill, got '${mode}'\n`);
  process.exit(2);
}
const log = (line: string): void => void process.stderr.write(`${line}\n`);
const seconds = (since: number): number => (performance.now() - since) / 1000;
const questionProjections = ['liveness', 'alarms', 'inventory', 'drift'];

/** The fleet's state as of a point: four questions at once, each reading the projection it needs. */
async function fleetState(engine: AsOfEngine, point: AsOfPoint): Promise<{ answer: Record<string, number>; stats: MaterializeStats[] }> {
  const stats: MaterializeStats[] = [];
  const ask = async <T>(projection: string, query: (db: Kysely<any>) => Promise<T[]>): Promise<number> => {
    const rows = await engine.read(point, [projection], query);
    stats.push(...engine.stats.lastQuestion);
    return rows.length;
  };
  const [dark, alarms, vendors, drift] = await Promise.all([
    ask('liveness', (db) => darkNodes(db)),
    ask('alarms', (db) => openAlarms(db)),
    ask('inventory', (db) => inventoryBy(db, 'manufacturer')),
    ask('drift', (db) => driftFindings(db)),
  ]);
  return { answer: { dark: dark!, alarms: alarms!, vendors: vendors!, drift: drift! }, stats };
}

/** The last position recorded at or before `instant`, three other ways (for the comparison; the engine uses its own). */
const resolvers: Record<string, (db: Kysely<any>, instant: Date, head: LedgerHead) => Promise<number>> = {
  // A binary search driven from here: a round trip per probe.
  async search_round_trips(db, instant, head) {
    let low = 0;
    let high = head.position;
    while (low < high) {
      const mid = Math.ceil((low + high) / 2);
      const row = await db.selectFrom('ledger_events').select('recorded_at').where('position', '=', mid).executeTakeFirst();
      if (row && new Date(row.recorded_at).getTime() <= instant.getTime()) low = mid;
      else high = mid - 1;
    }
    return low;
  },
  // The BRIN index on recorded_at: every block range at or before the instant.
  async brin_max(db, instant) {
    const rows = await sql<{ position: number | null }>`SELECT max(position) AS position FROM ledger_events WHERE recorded_at <= ${instant}`.execute(db);
    return Number(rows.rows[0]?.position ?? 0);
  },
  // The BRIN index on a window ending at the instant, widened until it holds an event.
  async brin_window(db, instant) {
    for (const window of ['1 second', '1 minute', '1 hour', '1 day']) {
      const rows = await sql<{ position: number | null }>`
        SELECT max(position) AS position FROM ledger_events WHERE recorded_at <= ${instant} AND recorded_at > ${instant}::timestamptz - ${window}::interval`.execute(db);
      if (rows.rows[0]?.position != null) return Number(rows.rows[0].position);
    }
    const rows = await sql<{ position: number | null }>`SELECT max(position) AS position FROM ledger_events WHERE recorded_at <= ${instant}`.execute(db);
    return Number(rows.rows[0]?.position ?? 0);
  },
};

const postgres = await benchPostgres();
if ((values.keep || values.reuse) && postgres.kind === 'embedded') {
  process.stderr.write('--keep and --reuse need DATABASE_URL (an embedded server goes with the bench)\n');
  process.exit(2);
}
const connectionString = values.reuse ?? (await postgres.freshDatabase());
if (values.keep) log(`keeping the database: --reuse ${connectionString}`);
const store = await EventStore.open({ connectionString, poolSize: 6, maxBatchEvents: 20_000, migrate: !values.reuse });
try {
  const db = store.db as unknown as Kysely<any>;
  // 1. The log, with the snapshotter running as `fleet-ledger start` runs it (or snapshots built afterwards).
  const runner = new ProjectionRunner(store, fleetProjections());
  const snapshotter = new AsOfEngine(store, fleetProjections(), { snapshotEveryEvents: every, snapshotEveryMs: 24 * 3_600_000, snapshotCheckMs: 1_000 });
  const generated = { seconds: 0, catchUpSeconds: 0, backfillSeconds: 0, gapFillSeconds: 0 };
  let snapshots: SnapshotSummary[] = [];
  if (values.reuse) {
    log(`reusing ${connectionString}: nothing generated`);
  } else if (mode === 'live') {
    await runner.start();
    await snapshotter.start();
    const started = performance.now();
    generated.seconds = (await generateFleetLog(store, { nodeCount, targetEvents, seed: Number(values.seed) })).seconds;
    const head = (await store.head()).position;
    log(`generated ${head} events in ${round(generated.seconds, 1)} s with the projections and the snapshotter running`);
    while ((await runner.status()).some((status) => status.position < head)) await new Promise((resolve) => setTimeout(resolve, 1_000));
    generated.catchUpSeconds = seconds(started) - generated.seconds;
    await new Promise((resolve) => setTimeout(resolve, 3_000)); // the snapshotter's last look
    // With nothing due, the snapshotter fills the stretches it left uncopied (a copy that took long while a projection
    // caught up fast): timed, as the quiet hours after such a burst would give it.
    const filling = performance.now();
    while ((await snapshotter.gapsToFill()) > 0) await new Promise((resolve) => setTimeout(resolve, 1_000));
    generated.gapFillSeconds = seconds(filling);
    await snapshotter.stop();
    await runner.stop();
  } else {
    generated.seconds = (await generateFleetLog(store, { nodeCount, targetEvents, seed: Number(values.seed) })).seconds;
    log(`generated ${(await store.head()).position} events in ${round(generated.seconds, 1)} s`);
    await runner.start();
    const head = (await store.head()).position;
    while ((await runner.status()).some((status) => status.position < head)) await new Promise((resolve) => setTimeout(resolve, 1_000));
    await runner.stop();
    await snapshotter.start({ snapshots: false });
    const started = performance.now();
    await snapshotter.backfillSnapshots(every);
    generated.backfillSeconds = seconds(started);
    await snapshotter.stop();
  }
  const head = await store.head();
  const probe = new AsOfEngine(store, fleetProjections());
  await probe.start({ snapshots: false });
  snapshots = await probe.snapshots();
  await probe.stop();
  const snapshotSeconds = snapshots.map((s) => s.seconds).sort((a, b) => a - b);
  // The widest stretch of the log, per projection, with no snapshot part in it: the longest tail a question can need.
  const gapMax: Record<string, number> = {};
  for (const name of questionProjections) {
    const positions = snapshots.flatMap((s) => s.parts.filter((part) => part.projection === name).map((part) => part.position)).sort((a, b) => a - b);
    const bounds = [0, ...positions, head.position];
    gapMax[name] = Math.max(...bounds.slice(1).map((position, i) => position - bounds[i]!));
  }
  for (const s of snapshots) log(`snapshot ${s.id}: head ${s.headPosition}, ${round(s.seconds, 2)} s, parts ${s.parts.map((part) => `${part.projection}@${part.position}`).join(' ')}`);
  const logBytes = Number((await sql<{ bytes: string }>`SELECT pg_total_relation_size('ledger_events') AS bytes`.execute(db)).rows[0]!.bytes);
  log(`${snapshots.length} snapshots (${mode}), ${round(percentile(snapshotSeconds, 50), 2)} s each (max ${round(Math.max(...snapshotSeconds), 2)} s), ${round(snapshots[snapshots.length - 1]!.bytes / 1e6, 1)} MB each`);

  // 2. Instants to positions, four ways, on the same random instants (they must agree).
  const first = (await store.readAll({ fromPosition: 1, limit: 1 }))[0]!.recordedAt.getTime();
  const last = head.recordedAt.getTime();
  const random = seededRandom(99);
  const instants = Array.from({ length: Math.max(queries, 20) }, () => new Date(first + random() * (last - first)));
  const engine = new AsOfEngine(store, fleetProjections(), { connections: 4 });
  await engine.start({ snapshots: false });
  const resolveMs: Record<string, number> = {};
  const expected = await Promise.all(instants.map(async (instant) => (await engine.resolve(instant.toISOString())).position));
  for (const [name, resolve] of Object.entries({ ...resolvers, engine_recursive_search: async (_db: Kysely<any>, instant: Date, _head: LedgerHead) => (await engine.resolve(instant.toISOString())).position })) {
    const times: number[] = [];
    for (const [index, instant] of instants.entries()) {
      const started = performance.now();
      const position = await resolve(db, instant, head);
      times.push(performance.now() - started);
      if (position !== expected[index]) throw new Error(`${name} resolved ${instant.toISOString()} to ${position}, the engine to ${expected[index]}`);
    }
    times.sort((a, b) => a - b);
    resolveMs[name] = round(percentile(times, 50), 2);
  }
  log(`instant to position, median ms: ${JSON.stringify(resolveMs)}`);

  // 3. The fleet as of random instants: every question at a position not asked before (no cache hit).
  const times: number[] = [];
  const tails: number[] = [];
  const parts = { cloneMs: [] as number[], tailMs: [] as number[] };
  const asked = new Set<number>();
  let sample: unknown;
  for (const instant of instants.slice(0, queries)) {
    const started = performance.now();
    const point = await engine.resolve(instant.toISOString());
    if (asked.has(point.position)) continue;
    asked.add(point.position);
    const { answer, stats } = await fleetState(engine, point);
    times.push(seconds(started));
    tails.push(Math.max(...stats.map((s) => point.position - s.fromPosition)));
    for (const s of stats) {
      parts.cloneMs.push(s.cloneMs);
      parts.tailMs.push(s.tailMs);
    }
    sample = { instant: instant.toISOString(), position: point.position, ...answer };
    const breakdown = stats.map((s) => `${s.projection} ${point.position - s.fromPosition}/${s.tailEvents} ${Math.round(s.tailMs)}+${Math.round(s.cloneMs)} ms`).join(', ');
    log(`as of ${instant.toISOString()} (position ${point.position}): ${round(times[times.length - 1]!, 2)} s ${JSON.stringify(answer)} [tail positions/events, tail+setup: ${breakdown}]`);
  }
  times.sort((a, b) => a - b);
  parts.cloneMs.sort((a, b) => a - b);
  parts.tailMs.sort((a, b) => a - b);
  await engine.stop();

  // 4. The baseline: one question, late in the log, answered by replaying each projection it reads from position 1.
  const baseline = new AsOfEngine(store, fleetProjections(), { useSnapshots: false, connections: 4 });
  await baseline.start({ snapshots: false });
  const baselineStarted = performance.now();
  const late = await baseline.resolve(new Date(last - (last - first) * 0.1).toISOString());
  const baselineAnswer = await fleetState(baseline, late);
  const baselineSeconds = seconds(baselineStarted);
  await baseline.stop();
  log(`replay from position 1 as of position ${late.position}: ${round(baselineSeconds, 1)} s ${JSON.stringify(baselineAnswer.answer)}`);

  const p50 = percentile(times, 50);
  const result = {
    nodes: nodeCount,
    events: head.position,
    asof_queries: times.length,
    asof_p50_s: round(p50, 3),
    asof_p99_s: round(percentile(times, 99), 3),
    asof_max_s: round(times[times.length - 1]!, 3),
    questions: questionProjections,
    tail_positions_max: Math.max(...tails),
    clone_ms_p50: round(percentile(parts.cloneMs, 50), 0),
    tail_ms_p50: round(percentile(parts.tailMs, 50), 0),
    replay_from_zero_s: round(baselineSeconds, 1),
    speedup_vs_replay_from_zero: round(baselineSeconds / p50, 1),
    snapshots_mode: mode,
    snapshot_every_events: every,
    snapshots: snapshots.length,
    snapshot_gap_max_positions: gapMax,
    snapshot_s_p50: round(percentile(snapshotSeconds, 50), 2),
    snapshot_s_max: round(snapshotSeconds[snapshotSeconds.length - 1]!, 2),
    snapshot_mb: round(snapshots[snapshots.length - 1]!.bytes / 1e6, 1),
    snapshots_total_mb: round(snapshots.reduce((sum, s) => sum + s.bytes, 0) / 1e6, 0),
    log_mb: round(logBytes / 1e6, 0),
    generate_s: round(generated.seconds, 1),
    ...(mode === 'live'
      ? { projections_catch_up_s: round(generated.catchUpSeconds, 1), gap_fill_s: round(generated.gapFillSeconds, 1), gap_fill_snapshots: snapshots.filter((s) => s.origin === 'backfill').length }
      : { backfill_s: round(generated.backfillSeconds, 1) }),
    resolve_ms_p50: resolveMs,
    sample,
    backend: postgres.kind,
  };
  process.stdout.write(values.json ? `${JSON.stringify(result)}\n` : `${JSON.stringify(result, null, 2)}\n`);
} finally {
  await store.close();
  if (!values.keep && !values.reuse) await postgres.close();
}
