/**
 * A credential rotation engine in a process of its own, to be killed: the rotation kill test and `bench:rotation`
 * start it, SIGKILL it at seeded moments and start it again. Arguments: database URL, rotation id, the credentials
 * file (the versions it stages go beside it), and the timing as JSON. Prints `ready` once it runs, `done <status>` when
 * the rotation ends (completed and retired, aborted, or halted / paused).
 */
import { FileCredentialStore } from '../../src/credentials/index.js';
import { EventStore } from '../../src/ledger/index.js';
import { RotationEngine } from '../../sagas/index.js';

const [url, rotationId, credentialsFile, timingJson] = process.argv.slice(2);
if (!url || !rotationId || !credentialsFile) throw new Error('usage: rotation-child <database-url> <rotation-id> <credentials.json> [timing-json]');
const timing = JSON.parse(timingJson ?? '{}') as Record<string, number>;
const store = await EventStore.open({ connectionString: url, migrate: false, poolSize: 12 });
const engine = new RotationEngine({
  store,
  rotationId,
  credentials: new FileCredentialStore(credentialsFile),
  plainHttpSites: ['*'],
  tickMs: timing['tickMs'] ?? 200,
  requestTimeoutMs: timing['requestTimeoutMs'] ?? 5_000,
  retryBackoffMs: timing['retryBackoffMs'] ?? 1_000,
  unreachableRetryMs: timing['unreachableRetryMs'] ?? 1_000,
  exitWhenStopped: true,
  log: (message, fields) => process.stderr.write(`${message} ${JSON.stringify(fields ?? {})}\n`),
});
process.stdout.write('ready\n');
const state = await engine.run();
process.stdout.write(`done ${state.status}\n`);
await store.close();
process.exit(0);
