/**
 * Replay throughput: generates a realistic fleet log directly with `store.append` (registrations, topology, an
 * EBOM import, inventory and firmware observations, one poll-outcome batch per site flush, sensor and health
 * observations, operator intents, firmware upgrades that drift, GPU errors, PDU failures and single dark nodes),
 * then rebuilds every projection from zero through the real runner and compares with a plain `readAll` of the
 * same log. Prints one JSON line.
 *
 *   npx tsx bench/replay.ts --json [--nodes 25000] [--events 2000000]
 *
 * With `DATABASE_URL`, `--keep` leaves the bench's database in place (its URL is printed on stderr) and `--reuse URL`
 * rebuilds from such a database's log again without generating anything (for A/B runs of the rebuild on one log).
 */
import { parseArgs } from 'node:util';
import type { ProposedEvent } from '../events/index.js';
import { fleetProjections } from '../projections/index.js';
import { EventStore, ProjectionRunner } from '../src/ledger/index.js';
import { benchPostgres, round } from './support/bench-database.js';
import { generateFleetLog } from './support/fleet-log.js';

const { values } = parseArgs({
  options: {
    json: { type: 'boolean' },
    nodes: { type: 'string', default: '25000' },
    events: { type: 'string', default: '2000000' },
    seed: { type: 'string', default: '7' },
    keep: { type: 'boolean' },
    reuse: { type: 'string' },
  },
});
const nodeCount = Number(values.nodes);
const targetEvents = Number(values.events);
if (!Number.isInteger(nodeCount) || nodeCount < 40 || !Number.isInteger(targetEvents) || targetEvents < nodeCount * 5) {
  process.stderr.write('--nodes must be >= 40 and --events >= 5 x nodes (the setup alone is about 5 events per node)\n');
  process.exit(2);
}

const postgres = await benchPostgres();
if ((values.keep || values.reuse) && postgres.kind === 'embedded') {
  process.stderr.write('--keep and --reuse need DATABASE_URL (an embedded server goes with the bench)\n');
  process.exit(2);
}
const connectionString = values.reuse ?? (await postgres.freshDatabase());
if (values.keep) process.stderr.write(`keeping the database: --reuse ${connectionString}\n`);
const store = await EventStore.open({ connectionString, poolSize: 6, maxBatchEvents: 20_000, migrate: !values.reuse });
const generated = values.reuse ? null : await generateFleetLog(store, { nodeCount, targetEvents, seed: Number(values.seed) });
const outcomes = generated?.outcomes ?? null;
const minute = generated?.minutes ?? null;
const generationSeconds = generated?.seconds ?? null;
const head = (await store.head()).position;

// Raw read: every event of the log through readAll, in pages as large as the runner's. Read once before the rebuild
// and once after, and the rebuild compared with their mean: a machine whose load drifts during the run moves both
// alike instead of favouring whichever ran first.
async function rawRead(): Promise<{ events: number; seconds: number }> {
  const started = performance.now();
  let read = 0;
  for (let from = 1; from <= head; ) {
    const page = await store.readAll({ fromPosition: from, limit: 5000 });
    if (page.length === 0) break;
    read += page.length;
    from = page[page.length - 1]!.position + 1;
  }
  return { events: read, seconds: (performance.now() - started) / 1000 };
}
const readBefore = await rawRead();

// The rebuild: every projection from zero at once, through the real runner: one read of the log shared by all, each
// projection applying its events into its own scratch schema, side by side.
const projections = fleetProjections();
const runner = new ProjectionRunner(store, projections);
const perProjection: Record<string, { events: number; seconds: number }> = {};
const rebuildStarted = performance.now();
for (const [name, result] of await runner.rebuildAll()) perProjection[name] = { events: result.events, seconds: round(result.seconds) };
const seconds = (performance.now() - rebuildStarted) / 1000;
const readAfter = await rawRead();
const rawRate = (readBefore.events / readBefore.seconds + readAfter.events / readAfter.seconds) / 2;

const line = {
  scenario: 'replay',
  backend: postgres.kind,
  nodes: nodeCount,
  events: head,
  poll_outcomes: outcomes,
  simulated_minutes: minute,
  generate_seconds: generationSeconds === null ? null : round(generationSeconds),
  seconds: round(seconds),
  events_per_s: Math.round(head / seconds),
  raw_read_events_per_s: Math.round(rawRate),
  raw_read_before_after: [Math.round(readBefore.events / readBefore.seconds), Math.round(readAfter.events / readAfter.seconds)],
  ratio_to_raw_read: round(head / seconds / rawRate),
  projections: perProjection,
};
process.stdout.write(values.json ? `${JSON.stringify(line)}\n` : `${Object.entries(line).map(([k, v]) => `${k}=${typeof v === 'object' ? JSON.stringify(v) : v}`).join(' ')}\n`);
await store.close();
if (!values.keep && !values.reuse) await postgres.close();
