/**
 * A process that runs sagas as `fleet-ledger start` does (a `SagaSupervisor` over every rollout and provisioning in
 * the log), to be started several at once on one database and SIGKILLed: the multi-process rollout run uses it.
 * Arguments: database URL, a JSON file of BMC access by node id, the step timing as JSON. The process names itself to
 * PostgreSQL by `PGAPPNAME` (set by whoever starts it), so its sessions and advisory locks can be told apart. Prints
 * `ready` once its supervisor runs; SIGTERM stops it cleanly.
 */
import { readFileSync } from 'node:fs';
import { EventStore } from '../../src/ledger/index.js';
import { SagaSupervisor, type BmcAccess } from '../../sagas/index.js';

const [url, accessFile, timingJson] = process.argv.slice(2);
if (!url || !accessFile) throw new Error('usage: saga-child <database-url> <access.json> [timing-json]');
const access = new Map(Object.entries(JSON.parse(readFileSync(accessFile, 'utf8')) as Record<string, BmcAccess>));
const timing = JSON.parse(timingJson ?? '{}') as Record<string, number>;
const store = await EventStore.open({ connectionString: url, migrate: false, poolSize: 8 });
const supervisor = new SagaSupervisor({
  store,
  access: (nodeId) => access.get(nodeId),
  scanMs: timing['scanMs'] ?? 300,
  engine: {
    timing,
    tickMs: timing['tickMs'] ?? 200,
    gateRetryMs: timing['gateRetryMs'] ?? 1_000,
    maxInconclusive: timing['maxInconclusive'] ?? 30,
    requestTimeoutMs: timing['requestTimeoutMs'] ?? 5_000,
  },
  log: (message, fields) => process.stderr.write(`${new Date().toISOString()} ${message} ${JSON.stringify(fields ?? {})}\n`),
});
supervisor.start();
process.stdout.write('ready\n');
process.once('SIGTERM', () => {
  void (async () => {
    await supervisor.stop();
    await store.close();
    process.exit(0);
  })();
});
