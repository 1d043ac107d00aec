/**
 * BMCs that serve their tree in ways their profile does not say (`serving:` in a fleet's mix): a web server that
 * redirects to add a slash, a service moved to another port of the same host, and identity fields left as the
 * vendor's placeholders. Each is polled over real HTTP by the Redfish driver, which must read it as it reads the
 * same model served plainly.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RedfishDriver } from '../../src/drivers/index.js';
import { parseScenario, PLACEHOLDER_VALUES, startSimulator, type Simulator, type SimBmcInfo } from '../../src/sim/index.js';
import type { GpuDevice, NodeInventoryObservedData, SensorsObservedData } from '../../events/driver-observations.js';

async function poll(bmc: SimBmcInfo): Promise<{ dialect: string | undefined; inventory: NodeInventoryObservedData; sensors: SensorsObservedData }> {
  const driver = new RedfishDriver({ baseUrl: bmc.baseUrl, username: bmc.username, password: bmc.password, maxConcurrency: 4, requestTimeoutMs: 10_000 });
  try {
    let inventory: NodeInventoryObservedData | undefined;
    let sensors: SensorsObservedData | undefined;
    for (const observation of await driver.observe()) {
      if (observation.type === 'NodeInventoryObserved') inventory = observation.data;
      else if (observation.type === 'SensorsObserved') sensors = observation.data;
    }
    if (!inventory || !sensors) throw new Error('no inventory or sensors observed');
    return { dialect: driver.dialect?.id, inventory, sensors };
  } finally {
    await driver.close();
  }
}

/** What a reading says, the parts that may not differ between a plain BMC and one with serving quirks. */
function essentials(reading: Awaited<ReturnType<typeof poll>>) {
  const { inventory } = reading;
  return {
    dialect: reading.dialect,
    manufacturer: inventory.system.manufacturer,
    model: inventory.system.model,
    bmcFirmware: inventory.bmc.firmwareVersion,
    cpus: inventory.cpus?.count,
    gpus: inventory.gpus?.count,
    memory: inventory.memory?.moduleCount,
    temperatures: reading.sensors.temperatures.length,
    supplies: reading.sensors.powerSupplies.length,
  };
}

const placeholder = (value: string | undefined): boolean => value !== undefined && PLACEHOLDER_VALUES.some((shown) => shown.trim() === value.trim());

const ilo = [{ version: '2.72', share: 1 }];
const x13 = [{ version: '11.01.01', share: 1 }];

describe('simulated BMCs that redirect or serve placeholders', { timeout: 90_000 }, () => {
  let sim: Simulator;
  beforeAll(async () => {
    const scenario = parseScenario({
      name: 'serving-quirks',
      fleet: {
        bmcs: 5,
        // Racks fill in mix order: bmcs[0] to [4] are these, each on one firmware so twins read alike.
        mix: [
          { profile: 'hpe', count: 1, firmware: ilo },
          { profile: 'hpe', count: 1, firmware: ilo, serving: { redirect: 'add-slash' } },
          { profile: 'hpe', count: 1, firmware: ilo, serving: { redirect: 'other-port' } },
          { profile: 'supermicro', count: 1, firmware: x13 },
          { profile: 'supermicro', count: 1, firmware: x13, serving: { placeholders: true } },
        ],
      },
    });
    sim = await startSimulator({ scenario, seed: 5, behaviour: { latencyScale: 0 } });
  });
  afterAll(async () => sim?.close());

  it('a BMC whose web server redirects every slash-less path (301 to path/) is read as the same model served plainly', async () => {
    const [plain, slashing] = [sim.bmcs[0]!, sim.bmcs[1]!];
    const [read, reference] = await Promise.all([poll(slashing), poll(plain)]);
    expect(essentials(read)).toEqual(essentials(reference));
    expect(read.dialect).toBe('hpe-ilo5');
    // It did answer with redirects: every GET of a slash-less path met one.
    expect(sim.bmcStats(slashing.id)!.redirects).toBeGreaterThan(10);
    expect(sim.bmcStats(plain.id)!.redirects).toBe(0);
  });

  it('a BMC whose service moved to another port of its host (301 for every request) is read there, its session opened and closed there', async () => {
    const [plain, moved] = [sim.bmcs[0]!, sim.bmcs[2]!];
    const [read, reference] = await Promise.all([poll(moved), poll(plain)]);
    expect(essentials(read)).toEqual(essentials(reference));
    const stats = sim.bmcStats(moved.id)!;
    // The driver moved after the first answer: one redirect, not one per resource, and no session left open.
    expect(stats.redirects).toBe(1);
    expect(stats.sessionsNow).toBe(0);
  });

  it('a BMC that serves placeholders for its serials, part numbers and SKUs is read without any of them as a value', async () => {
    const [plain, blank] = [sim.bmcs[3]!, sim.bmcs[4]!];
    const [read, reference] = await Promise.all([poll(blank), poll(plain)]);
    expect(essentials(read)).toEqual(essentials(reference));
    const { inventory } = read;
    // Every identity string the plain twin reports is absent here, never one of the placeholders.
    expect(reference.inventory.system.serialNumber).toBeDefined();
    expect(inventory.system.serialNumber).toBeUndefined();
    expect(inventory.system.sku).toBeUndefined();
    expect(reference.inventory.gpus?.devices?.some((device: GpuDevice) => device.serialNumber !== undefined)).toBe(true);
    expect(inventory.gpus?.devices?.every((device: GpuDevice) => device.serialNumber === undefined)).toBe(true);
    const strings = JSON.stringify(inventory);
    for (const shown of PLACEHOLDER_VALUES.filter((value) => value.trim().length > 1)) expect(strings).not.toContain(`"${shown}"`);
    expect([inventory.system.serialNumber, inventory.system.sku, ...(inventory.systems ?? []).map((system) => system.serialNumber)].some(placeholder)).toBe(false);
  });
});
