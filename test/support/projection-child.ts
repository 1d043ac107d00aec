/**
 * A process running the fleet's projections (as `fleet-ledger start` does), to be started several at once on one
 * database and SIGKILLed by the multi-process projection test. Argument: the database URL; options as JSON (the
 * projections' thresholds). The process names itself to PostgreSQL by `PGAPPNAME`, set by whoever starts it. Prints
 * `ready` once its runner runs; SIGTERM stops it cleanly.
 */
import { fleetProjections, type FleetProjectionOptions } from '../../projections/index.js';
import { EventStore, ProjectionRunner } from '../../src/ledger/index.js';

const [url, optionsJson] = process.argv.slice(2);
if (!url) throw new Error('usage: projection-child <database-url> [projection-options-json]');
const options = JSON.parse(optionsJson ?? '{}') as FleetProjectionOptions & { batchSize?: number };
const store = await EventStore.open({ connectionString: url, migrate: false, poolSize: 4, pollIntervalMs: 50 });
const runner = new ProjectionRunner(store, fleetProjections(options), {
  ...(options.batchSize ? { batchSize: options.batchSize } : {}),
  onFailure: 'stop',
  log: (message, fields) => process.stderr.write(`${new Date().toISOString()} ${message} ${JSON.stringify(fields ?? {})}\n`),
});
await runner.start();
process.stdout.write('ready\n');
process.once('SIGTERM', () => {
  void (async () => {
    await runner.stop();
    await store.close();
    process.exit(0);
  })();
});
