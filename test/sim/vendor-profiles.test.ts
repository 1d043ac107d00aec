/**
 * The older generations and other vendors, simulated: a BMC built from each of their profiles, served over real
 * HTTP, is read by the Redfish driver as the real controller is: the dialect of its vendor, its manufacturer and
 * model, its own serial (substituted per BMC, in the profile's format), the BMC firmware drawn for it, the BIOS
 * version, and its system event log where the profile has one. These profiles join a fleet only when named.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RedfishDriver } from '../../src/drivers/index.js';
import { bmcProfileByName, bmcProfiles, loadScenario, planFleet, startSimulator, type Simulator, type SimBmcInfo } from '../../src/sim/index.js';
import { profileNames } from '../../src/sim/capture-source.js';
import type { NodeInventoryObservedData, SelEntriesObservedData } from '../../events/driver-observations.js';

/** Per profile: the dialect that must read it, and how its Manager spells the BMC firmware version. */
const cases: Record<string, { dialect: string; bmcFirmware: (version: string) => string }> = {
  gigabyte_ami: { dialect: 'ami-megarac', bmcFirmware: (v) => v },
  intel_s2600bpb: { dialect: 'intel-s2600', bmcFirmware: (v) => v },
  hpe_ilo4_bl460c_gen9: { dialect: 'hpe-ilo4', bmcFirmware: (v) => `iLO 4 v${v}` },
  supermicro_x10dff: { dialect: 'supermicro-x10', bmcFirmware: (v) => v },
  // The Managers carry no version: it is the BMC's entry of the firmware inventory.
  hpe_cray_ex4252: { dialect: 'hpe-cray-ex', bmcFirmware: (v) => v },
  dell_idrac8_m630: { dialect: 'dell-idrac8', bmcFirmware: (v) => v },
};

async function read(bmc: SimBmcInfo) {
  const driver = new RedfishDriver({ baseUrl: bmc.baseUrl, username: bmc.username, password: bmc.password, maxConcurrency: 4, requestTimeoutMs: 10_000 });
  try {
    const observations = await driver.observe();
    return {
      dialect: driver.dialect?.id,
      sessionPath: driver.sessionPath,
      inventory: observations.find((o) => o.type === 'NodeInventoryObserved')!.data as NodeInventoryObservedData,
      sel: observations.find((o) => o.type === 'SelEntriesObserved')!.data as SelEntriesObservedData,
    };
  } finally {
    await driver.close();
  }
}

/** Same length and the same character class at every position: the format a real serial of the model has. */
const shapeOf = (text: string): string => text.replace(/[0-9]/g, '9').replace(/[A-Z]/g, 'A').replace(/[a-z]/g, 'a');

describe('simulated older generations and other vendors', { timeout: 60_000 }, () => {
  let sim: Simulator;
  beforeAll(async () => {
    sim = await startSimulator({ bmcs: Object.keys(cases).length * 2, mockups: Object.keys(cases), seed: 11, behaviour: { latencyScale: 0 } });
  });
  afterAll(async () => sim?.close());

  it.each(Object.keys(cases))('%s: dialect, identity, BMC and BIOS firmware, and SEL as the profile states', async (name) => {
    const profile = bmcProfileByName(name)!;
    const want = cases[name]!;
    const bmcs = sim.bmcs.filter((bmc) => bmc.fixture === name);
    expect(bmcs).toHaveLength(2);
    const readings = await Promise.all(bmcs.map(read));
    const system = profile.systems[0]!;
    for (const [index, reading] of readings.entries()) {
      expect(reading.dialect).toBe(want.dialect);
      // A session at the path the root advertises (iDRAC 8: `/redfish/v1/Sessions`), else the standard one.
      expect(reading.sessionPath).toBe(name === 'dell_idrac8_m630' ? '/redfish/v1/Sessions' : '/redfish/v1/SessionService/Sessions');
      expect(reading.inventory.system).toMatchObject({ manufacturer: system.manufacturer, model: system.model });
      expect(reading.inventory.bmc.firmwareVersion).toBe(want.bmcFirmware(bmcs[index]!.firmware));
      expect(reading.inventory.biosVersion).toBe(system.biosVersion);
      if (system.serialNumber) expect(shapeOf(reading.inventory.system.serialNumber!)).toBe(shapeOf(system.serialNumber));
      else expect(reading.inventory.system.serialNumber).toBeUndefined();
      const selEntries = [...profile.systems, ...profile.managers, ...profile.chassis]
        .flatMap((part) => part.logServices ?? [])
        .filter((log) => log.logEntryType === 'SEL' || (log.logEntryType === undefined && /^sel$/i.test(log.id)))
        .reduce((sum, log) => sum + log.entries.length, 0);
      expect(reading.sel.entries).toHaveLength(selEntries);
      for (const observation of [reading.inventory, reading.sel]) expect(observation.unreadable).toBeUndefined();
    }
    // Each BMC has its own identity.
    if (system.serialNumber) expect(readings[0]!.inventory.system.serialNumber).not.toBe(readings[1]!.inventory.system.serialNumber);
  });

  it('the demo fleet mixes every vendor profile in, the older generations included', () => {
    const scenario = loadScenario(new URL('../../examples/scenario-demo.yaml', import.meta.url).pathname);
    const plan = planFleet(scenario, scenario.fleet.mix.map((entry) => entry.firmware ?? [{ version: 'x', share: 1 }]));
    const planned = new Set(plan.bmcs.map((bmc) => plan.fixtures[bmc.fixture]!.fixture));
    expect([...planned].sort()).toEqual(bmcProfiles.map((profile) => profile.name).sort());
  });

  it('join a fleet only when named: a fleet that names no profile keeps its composition', () => {
    for (const name of Object.keys(cases)) expect(profileNames()).not.toContain(name);
  });
});
