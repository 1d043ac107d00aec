/**
 * The KurrentDB face over `DATABASE_URL` in a process of its own, for the tests of `@kurrent/kurrentdb-client`:
 * its generated protobuf classes register under the same global names as those of `@eventstore/db-client` (which
 * the server serves), so the two cannot share one process. Tokens from FLEET_LEDGER_TOKENS; TLS from
 * KURRENT_TLS_CERT and KURRENT_TLS_KEY; the port from KURRENT_PORT. Prints `listening <port>`; SIGTERM stops it.
 */
import { readFileSync } from 'node:fs';
import { parseTokensEnv } from '../../../src/api/index.js';
import { EventStore } from '../../../src/ledger/index.js';
import { serveKurrent } from '../../../src/kurrent/index.js';

const store = await EventStore.open({ connectionString: process.env.DATABASE_URL!, pollIntervalMs: 200 });
const server = await serveKurrent({
  store,
  tokens: parseTokensEnv(process.env.FLEET_LEDGER_TOKENS ?? ''),
  port: Number(process.env.KURRENT_PORT ?? 0),
  tls: { certChain: readFileSync(process.env.KURRENT_TLS_CERT!), privateKey: readFileSync(process.env.KURRENT_TLS_KEY!) },
});
process.stdout.write(`listening ${server.port}\n`);
process.once('SIGTERM', () => {
  void server
    .close()
    .then(() => store.close())
    .then(() => process.exit(0));
});
