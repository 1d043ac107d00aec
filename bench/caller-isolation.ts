/**
 * Caller isolation (issue 39, point 3): a fleet polled every interval while the API is sent a 40 MB EBOM whose last
 * line is bad and 100 bodies of 1 MB at once; the same fleet without them first. Prints one JSON row per poller:
 * the poller on its own thread (what `fleet-ledger start` runs) and, with --baseline, on the API's thread (as before),
 * each with its figures quiet and loaded and their ratios (loaded / quiet; late and dark as nodes added).
 *
 *   npm run bench:isolation -- [--bmcs 2000] [--interval 15] [--phase 60] [--ebom-mb 40] [--bodies 100] [--body-mb 1] [--baseline | --baseline-only]
 *
 * Goal: 0 nodes late or dark added, poll-loop delay p99 within 1.2x, `/healthz` under 2 s.
 */
import { parseArgs } from 'node:util';
import { benchPostgres } from './support/bench-database.js';
import { runIsolation } from './support/isolation-run.js';

const { values } = parseArgs({
  options: {
    bmcs: { type: 'string', default: '2000' },
    interval: { type: 'string', default: '15' },
    phase: { type: 'string', default: '60' },
    'ebom-mb': { type: 'string', default: '40' },
    bodies: { type: 'string', default: '100' },
    'body-mb': { type: 'string', default: '1' },
    'request-timeout-ms': { type: 'string' },
    baseline: { type: 'boolean', default: false },
    'baseline-only': { type: 'boolean', default: false },
  },
});
const postgres = await benchPostgres();
try {
  for (const threaded of values['baseline-only'] ? [false] : values.baseline ? [true, false] : [true]) {
    const result = await runIsolation({
      connectionString: await postgres.freshDatabase(),
      bmcs: Number(values.bmcs),
      intervalS: Number(values.interval),
      phaseS: Number(values.phase),
      ebomBytes: Number(values['ebom-mb']) * 1e6,
      bodies: Number(values.bodies),
      bodyBytes: Number(values['body-mb']) * 1e6,
      threaded,
      ...(values['request-timeout-ms'] ? { requestTimeoutMs: Number(values['request-timeout-ms']) } : {}),
    });
    process.stdout.write(`${JSON.stringify({ bench: 'caller-isolation', postgres: postgres.kind, ...result })}\n`);
  }
} finally {
  await postgres.close();
}
