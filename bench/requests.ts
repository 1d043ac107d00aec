/**
 * Requests per full read, member by member and with collections expanded (`$expand`), per simulated model, counted
 * by the simulator itself. One BMC of each model (`--all`: the older generations a default fleet leaves out too),
 * answering at once; each is read both ways with everything a poller reads (inventory, firmware, health, power,
 * sensors, the event log). Prints one JSON line (`--json`) or a table.
 *
 *   npm run bench:requests -- [--json] [--all]
 */
import { parseArgs } from 'node:util';
import { RedfishDriver } from '../src/drivers/index.js';
import { bmcProfiles, startSimulator } from '../src/sim/index.js';
import { profileNames } from '../src/sim/capture-source.js';

const { values } = parseArgs({ options: { json: { type: 'boolean', default: false }, all: { type: 'boolean', default: false } } });
const names = values.all ? bmcProfiles.map((profile) => profile.name) : profileNames();
const sim = await startSimulator({ bmcs: names.length, mockups: names, seed: 5, behaviour: { latencyScale: 0 } });
const models: Record<string, { plain: number; expanded: number }> = {};
try {
  for (const bmc of sim.bmcs) {
    const counts: number[] = [];
    for (const expand of [false, true]) {
      const before = sim.stats().requests;
      const driver = new RedfishDriver({ baseUrl: bmc.baseUrl, username: bmc.username, password: bmc.password, maxConcurrency: 2, requestTimeoutMs: 10_000, expand });
      try {
        await driver.observe();
      } finally {
        await driver.close();
      }
      counts.push(sim.stats().requests - before);
    }
    models[bmc.fixture] = { plain: counts[0]!, expanded: counts[1]! };
  }
} finally {
  await sim.close();
}
const total = Object.values(models).reduce((sum, model) => ({ plain: sum.plain + model.plain, expanded: sum.expanded + model.expanded }), { plain: 0, expanded: 0 });
if (values.json) process.stdout.write(`${JSON.stringify({ models, total })}\n`);
else {
  for (const [name, model] of Object.entries(models)) process.stdout.write(`${name.padEnd(24)} ${String(model.plain).padStart(5)} -> ${String(model.expanded).padStart(5)}\n`);
  process.stdout.write(`${'total'.padEnd(24)} ${String(total.plain).padStart(5)} -> ${String(total.expanded).padStart(5)}\n`);
}
