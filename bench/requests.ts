/**
 * Requests and time per full read, member by member and with collections expanded (`$expand`), per simulated model,
 * counted and timed against the simulator. One BMC of each model (`--all`: the older generations a default fleet
 * leaves out too); each is read both ways with everything a poller reads (inventory, firmware, health, power, sensors,
 * the event log), two requests at a time as the poller reads. The BMCs are read side by side, each at the simulator's
 * modelled latency times `--latency-scale` (default 0.1, so the run takes seconds, not minutes); times are printed
 * scaled back to the modelled latency.
 *
 *   npm run bench:requests -- [--json] [--all] [--latency-scale 0.1]
 */
import { parseArgs } from 'node:util';
import { RedfishDriver } from '../src/drivers/index.js';
import { bmcProfiles, startSimulator } from '../src/sim/index.js';
import { profileNames } from '../src/sim/capture-source.js';

const { values } = parseArgs({ options: { json: { type: 'boolean', default: false }, all: { type: 'boolean', default: false }, 'latency-scale': { type: 'string', default: '0.1' } } });
const latencyScale = Number(values['latency-scale']);
if (!(latencyScale > 0)) throw new Error(`--latency-scale must be a positive number, not ${values['latency-scale']}`);
const names = values.all ? bmcProfiles.map((profile) => profile.name) : profileNames();
const sim = await startSimulator({ bmcs: names.length, mockups: names, seed: 5, behaviour: { latencyScale } });

interface Way {
  requests: number;
  seconds: number;
}
const round = (value: number): number => Math.round(value * 10) / 10;
const models: Record<string, { plain: Way; expanded: Way }> = {};
try {
  await Promise.all(
    sim.bmcs.map(async (bmc) => {
      const ways: Way[] = [];
      for (const expand of [false, true]) {
        const before = sim.bmcStats(bmc.id)!.requests;
        const started = performance.now();
        const driver = new RedfishDriver({ baseUrl: bmc.baseUrl, username: bmc.username, password: bmc.password, maxConcurrency: 2, requestTimeoutMs: 600_000, expand });
        try {
          await driver.observe();
        } finally {
          await driver.close();
        }
        ways.push({ requests: sim.bmcStats(bmc.id)!.requests - before, seconds: round((performance.now() - started) / 1000 / latencyScale) });
      }
      models[bmc.fixture] = { plain: ways[0]!, expanded: ways[1]! };
    }),
  );
} finally {
  await sim.close();
}
const sum = (way: 'plain' | 'expanded'): Way => {
  const all = Object.values(models).map((model) => model[way]);
  return { requests: all.reduce((total, one) => total + one.requests, 0), seconds: round(all.reduce((total, one) => total + one.seconds, 0) / all.length) };
};
// Requests add up over the fleet's models; seconds are the mean read time of one BMC.
const total = { plain: sum('plain'), expanded: sum('expanded') };
if (values.json) process.stdout.write(`${JSON.stringify({ latency_scale: latencyScale, models, total })}\n`);
else {
  process.stdout.write(`${'model'.padEnd(24)} ${'requests'.padStart(14)}   ${'seconds'.padStart(16)}\n`);
  const row = (name: string, plain: Way, expanded: Way): string =>
    `${name.padEnd(24)} ${String(plain.requests).padStart(5)} -> ${String(expanded.requests).padStart(5)}   ${String(plain.seconds).padStart(6)} -> ${String(expanded.seconds).padStart(6)}\n`;
  for (const name of Object.keys(models).sort()) process.stdout.write(row(name, models[name]!.plain, models[name]!.expanded));
  process.stdout.write(row('total (seconds: mean)', total.plain, total.expanded));
}
