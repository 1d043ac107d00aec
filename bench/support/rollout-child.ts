/**
 * A rollout engine in a process of its own, to be killed: the kill -9 test and `bench:rollout` start it, SIGKILL it
 * at seeded moments and start it again. Arguments: database URL, rollout id, a JSON file of BMC access by node id,
 * and the step timing as JSON. Prints `ready` once it holds the rollout, `done <status>` when the rollout ends.
 */
import { readFileSync } from 'node:fs';
import { EventStore } from '../../src/ledger/index.js';
import { RolloutEngine, type BmcAccess } from '../../sagas/index.js';

const [url, rolloutId, accessFile, timingJson] = process.argv.slice(2);
if (!url || !rolloutId || !accessFile) throw new Error('usage: rollout-child <database-url> <rollout-id> <access.json> [timing-json]');
const access = new Map(Object.entries(JSON.parse(readFileSync(accessFile, 'utf8')) as Record<string, BmcAccess>));
const timing = JSON.parse(timingJson ?? '{}') as Record<string, number>;
const store = await EventStore.open({ connectionString: url, migrate: false, poolSize: 12 });
const engine = new RolloutEngine({
  store,
  rolloutId,
  access: (nodeId) => access.get(nodeId),
  timing,
  tickMs: timing['tickMs'] ?? 200,
  gateRetryMs: timing['gateRetryMs'] ?? 1_000,
  maxInconclusive: timing['maxInconclusive'] ?? 30,
  requestTimeoutMs: timing['requestTimeoutMs'] ?? 5_000,
  exitWhenStopped: true,
  log: (message, fields) => process.stderr.write(`${message} ${JSON.stringify(fields ?? {})}\n`),
});
process.stdout.write('ready\n');
const state = await engine.run();
process.stdout.write(`done ${state.status}\n`);
await store.close();
process.exit(0);
