/**
 * The fleet as of random instants, beside the same questions asked of the present. A realistic log of `--events`
 * events for `--nodes` nodes (the generator of bench:replay) is appended through `store.append` while the projections
 * run live (writing their row versions as `fleet-ledger start` does). Then, with the runner stopped, the fleet's state
 * (dark nodes, open alarms, inventory counts, drift findings: four questions asked at once, as four API calls would)
 * is asked as of `--queries` random instants (each resolved to its position first), and the same four questions of the
 * present-tense tables, in the same run. Also: instants resolved to positions four ways, and what time travel stores
 * (`history_mb`: every row version and its indexes) beside the log (`log_mb`). Prints one JSON line.
 *
 *   npx tsx bench/asof.ts --json [--nodes 25000] [--events 2000000] [--queries 40]
 *
 * With `DATABASE_URL`, `--keep` leaves the bench's database in place (its URL is printed) and `--reuse URL` asks the
 * questions of such a database again without generating anything.
 */
import { parseArgs } from 'node:util';
import { sql, type Kysely } from 'kysely';
import { darkNodes, driftFindings, fleetProjections, inventoryBy, openAlarms } from '../projections/index.js';
import { AsOfEngine } from '../replay/as-of/index.js';
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
    seed: { type: 'string', default: '7' },
    keep: { type: 'boolean' },
    reuse: { type: 'string' },
  },
});
const nodeCount = Number(values.nodes);
const targetEvents = Number(values.events);
const queries = Number(values.queries);
if (!Number.isInteger(nodeCount) || nodeCount < 40 || !Number.isInteger(targetEvents) || targetEvents < nodeCount * 5) {
  process.stderr.write('--nodes must be >= 40 and --events >= 5 x nodes (the setup alone is about 5 events per node)\n');
  process.exit(2);
}
const log = (line: string): void => void process.stderr.write(`${line}\n`);
const seconds = (since: number): number => (performance.now() - since) / 1000;

/** The four questions at once, each on the database it is given (the present tables, or the as-of views). */
async function fleetState(ask: <T>(projection: string, query: (db: Kysely<any>) => Promise<T[]>) => Promise<number>): Promise<Record<string, number>> {
  const [dark, alarms, vendors, drift] = await Promise.all([
    ask('liveness', (db) => darkNodes(db)),
    ask('alarms', (db) => openAlarms(db)),
    ask('inventory', (db) => inventoryBy(db, 'manufacturer')),
    ask('drift', (db) => driftFindings(db)),
  ]);
  return { dark: dark!, alarms: alarms!, vendors: vendors!, drift: drift! };
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
  // 1. The log, with the projections running (and writing their versions) as `fleet-ledger start` runs them.
  const generated = { seconds: 0, catchUpSeconds: 0 };
  if (values.reuse) {
    log(`reusing ${connectionString}: nothing generated`);
  } else {
    const runner = new ProjectionRunner(store, fleetProjections());
    await runner.start();
    const started = performance.now();
    generated.seconds = (await generateFleetLog(store, { nodeCount, targetEvents, seed: Number(values.seed) })).seconds;
    const head = (await store.head()).position;
    log(`generated ${head} events in ${round(generated.seconds, 1)} s with the projections running`);
    while ((await runner.status()).some((status) => status.position < head)) await new Promise((resolve) => setTimeout(resolve, 1_000));
    generated.catchUpSeconds = seconds(started) - generated.seconds;
    await runner.stop();
  }
  const head = await store.head();
  await sql`VACUUM ANALYZE`.execute(db);

  // 2. What time travel stores beside the log and the present-tense tables.
  const sizes = (
    await sql<{ name: string; bytes: string; rows: string }>`
      SELECT c.relname AS name, pg_total_relation_size(c.oid) AS bytes, c.reltuples::bigint AS rows
        FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
       WHERE n.nspname = 'public' AND c.relkind = 'r' AND (c.relname LIKE '%\\_versions' OR c.relname = 'ledger_events')`.execute(db)
  ).rows;
  const logBytes = Number(sizes.find((s) => s.name === 'ledger_events')!.bytes);
  const versions = sizes.filter((s) => s.name !== 'ledger_events');
  const historyBytes = versions.reduce((sum, s) => sum + Number(s.bytes), 0);
  const historyTables = Object.fromEntries(versions.map((s) => [s.name, { mb: round(Number(s.bytes) / 1e6, 1), rows: Number(s.rows) }]));
  log(`history ${round(historyBytes / 1e6, 1)} MB beside a ${round(logBytes / 1e6, 1)} MB log: ${JSON.stringify(historyTables)}`);

  // 3. Instants to positions, four ways, on the same random instants (they must agree).
  const first = (await store.readAll({ fromPosition: 1, limit: 1 }))[0]!.recordedAt.getTime();
  const last = head.recordedAt.getTime();
  const random = seededRandom(99);
  const instants = Array.from({ length: Math.max(queries, 20) }, () => new Date(first + random() * (last - first)));
  const engine = new AsOfEngine(store, { connections: 4 });
  await engine.start();
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

  // 4. The fleet as of random instants, and the same questions of the present, alternating (same machine, same moment).
  const asOfTimes: number[] = [];
  const presentTimes: number[] = [];
  let sample: unknown;
  for (const instant of instants.slice(0, queries)) {
    const started = performance.now();
    const point = await engine.resolve(instant.toISOString());
    const answer = await fleetState((projection, query) => engine.read(point, [projection], async (view) => (await query(view)).length));
    asOfTimes.push(seconds(started));
    sample = { instant: instant.toISOString(), position: point.position, ...answer };
    const presentStarted = performance.now();
    const present = await fleetState(async (_projection, query) => (await query(db)).length);
    presentTimes.push(seconds(presentStarted));
    log(`as of ${instant.toISOString()} (position ${point.position}): ${round(asOfTimes[asOfTimes.length - 1]!, 3)} s ${JSON.stringify(answer)}; present ${round(presentTimes[presentTimes.length - 1]!, 3)} s ${JSON.stringify(present)}`);
  }
  asOfTimes.sort((a, b) => a - b);
  presentTimes.sort((a, b) => a - b);
  // The head as of its own position is the present: the two must agree (a cheap check that versions are complete).
  const atHead = await engine.read({ ...head, instant: head.recordedAt }, ['liveness', 'alarms', 'inventory', 'drift'], (view) => fleetState(async (_p, query) => (await query(view)).length));
  const now = await fleetState(async (_projection, query) => (await query(db)).length);
  if (JSON.stringify(atHead) !== JSON.stringify(now)) throw new Error(`as of the head ${JSON.stringify(atHead)} differs from the present ${JSON.stringify(now)}`);
  await engine.stop();

  const result = {
    nodes: nodeCount,
    events: head.position,
    asof_queries: asOfTimes.length,
    asof_p50_s: round(percentile(asOfTimes, 50), 3),
    asof_p99_s: round(percentile(asOfTimes, 99), 3),
    asof_max_s: round(asOfTimes[asOfTimes.length - 1]!, 3),
    present_p50_s: round(percentile(presentTimes, 50), 3),
    present_p99_s: round(percentile(presentTimes, 99), 3),
    asof_vs_present_p99: round(percentile(asOfTimes, 99) / percentile(presentTimes, 99), 2),
    questions: ['liveness', 'alarms', 'inventory', 'drift'],
    history_mb: round(historyBytes / 1e6, 1),
    log_mb: round(logBytes / 1e6, 1),
    history_vs_log: round(historyBytes / logBytes, 3),
    history_tables: historyTables,
    generate_s: round(generated.seconds, 1),
    projections_catch_up_s: round(generated.catchUpSeconds, 1),
    resolve_ms_p50: resolveMs,
    sample,
    backend: postgres.kind,
  };
  process.stdout.write(values.json ? `${JSON.stringify(result)}\n` : `${JSON.stringify(result, null, 2)}\n`);
} finally {
  await store.close();
  if (!values.keep && !values.reuse) await postgres.close();
}
