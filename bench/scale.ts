/**
 * The scale benchmark: the simulator and the per-target scheduler (or, with --naive, a fan-out baseline)
 * at 60 s intervals; prints one JSON object.
 *
 *   npm run bench:scale -- --bmcs 25000 --duration 780 --json [--naive] [--interval 60] [--captures DIR]
 *
 * The BMCs are generated from the built-in vendor profiles; --captures DIR serves real Mockup-Creator captures.
 */
import { parseArgs } from 'node:util';
import { benchPostgres } from './support/bench-database.js';
import { runScale } from './support/scale-run.js';

const { values } = parseArgs({
  options: {
    bmcs: { type: 'string', default: '25000' },
    duration: { type: 'string', default: '780' },
    interval: { type: 'string', default: '60' },
    dark: { type: 'string', default: '100' },
    flap: { type: 'string', default: '50' },
    naive: { type: 'boolean', default: false },
    json: { type: 'boolean', default: false },
    captures: { type: 'string' },
  },
});
const postgres = await benchPostgres();
try {
  const interval = Number(values.interval);
  const result = await runScale({
    bmcs: Number(values.bmcs),
    intervalS: interval,
    durationS: Number(values.duration),
    darkAtS: interval,
    darkCount: Number(values.dark),
    flapCount: Number(values.flap),
    naive: values.naive,
    connectionString: await postgres.freshDatabase(),
    ...(values.captures ? { captures: values.captures } : {}),
  });
  process.stdout.write(values.json ? `${JSON.stringify(result)}\n` : `${Object.entries(result).map(([k, v]) => `${k}=${v}`).join(' ')}\n`);
} finally {
  await postgres.close();
}
