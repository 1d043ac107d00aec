/**
 * Hardware nobody here designed the drivers for: older generations and other vendors (`redfish-more/`,
 * `redfish-partial/`, `redfish-reference/` under the captures), served the way DMTF's Redfish-Mockup-Server serves
 * a tree (a session POST answered 204 with only `Location` and `X-Auth-Token`). Each is read as `inspect` reads it,
 * and must give its identity (manufacturer, model, serial, BMC and BIOS firmware), the right dialect, the login
 * that worked, and no unreadable resource that the capture actually holds. Expectations read from the files by hand.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { RedfishDriver, startMockupServer, type MockupServer } from '../../src/drivers/index.js';
import type { NodeInventoryObservedData } from '../../events/driver-observations.js';
import { fixturePath, fixtures } from './support/fixtures.js';

interface Expected {
  dialect: string;
  manufacturer: string;
  model: string;
  serial?: string;
  bmcFirmware: string;
  bios: string;
  sessionPath: string;
}

const expected: Record<string, Expected> = {
  'redfish-partial/dell_idrac8_m630': { dialect: 'dell-idrac8', manufacturer: 'Dell Inc.', model: 'PowerEdge M630', serial: 'CN7016362D00JD', bmcFirmware: '2.41.40.40', bios: '2.4.2', sessionPath: '/redfish/v1/Sessions' },
  'redfish-partial/hpe_ilo4_bl460c_gen9': { dialect: 'hpe-ilo4', manufacturer: 'HPE', model: 'ProLiant BL460c Gen9', serial: 'CZ3629FY8B', bmcFirmware: 'iLO 4 v2.54', bios: 'I36 v2.40 (02/17/2017)', sessionPath: '/redfish/v1/SessionService/Sessions' },
  // The capture's System has no SerialNumber.
  'redfish-partial/supermicro_x10dff': { dialect: 'supermicro-x10', manufacturer: 'Supermicro', model: 'X10DFF-CTG', bmcFirmware: '3.25', bios: '2.0', sessionPath: '/redfish/v1/SessionService/Sessions' },
  'redfish-more/gigabyte_ami': { dialect: 'ami-megarac', manufacturer: 'GIGABYTE', model: 'H262-Z63-00', serial: 'GJG9NF512A000302', bmcFirmware: '12.84.13', bios: 'C27', sessionPath: '/redfish/v1/SessionService/Sessions' },
  // Four nodes behind one BMC: Node0 is the primary system (the record says so).
  'redfish-more/hpe_cray_ex4252': { dialect: 'hpe-cray-ex', manufacturer: 'HPE', model: 'HPE EX4252', serial: 'PR1237879N', bmcFirmware: 'nc.1.8.3-10-shasta-release.arm.2023-04-26T21:09:35+00:00.a8e719d', bios: 'ex4252.bios-1.3.0', sessionPath: '/redfish/v1/SessionService/Sessions' },
  'redfish-more/intel_s2600bpb': { dialect: 'intel-s2600', manufacturer: 'Cray Inc.', model: 'S2600BPB', serial: 'QSBP74100021', bmcFirmware: '1.93.870cf4f0', bios: 'SE5C620.86B.02.01.0008.C0001.031920191559', sessionPath: '/redfish/v1/SessionService/Sessions' },
  // DMTF's own example tree: no vendor record, the standard path.
  'redfish-reference/dmtf_public_rackmount1': { dialect: 'generic', manufacturer: 'Contoso', model: '3500', serial: '437XR1138R2', bmcFirmware: '1.45.455b66-rev4', bios: 'P79 v1.45 (12/06/2017)', sessionPath: '/redfish/v1/SessionService/Sessions' },
};

const servers: MockupServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

describe.skipIf(!fixtures.runnable)(fixtures.title('older generations and other vendors, read as inspect reads them'), () => {
  it.each(Object.keys(expected))('%s: identity, firmware, dialect and login', async (capture) => {
    const want = expected[capture]!;
    const folder = fixturePath(...capture.split('/'));
    const server = await startMockupServer({ folder, sessionAnswer: 'dmtf', acceptAnyCredentials: true });
    servers.push(server);
    const driver = new RedfishDriver({ baseUrl: server.url, username: 'root', password: 'x', maxConcurrency: 4 });
    const observations = await driver.observe();
    await driver.close();
    expect(driver.dialect?.id).toBe(want.dialect);
    expect(driver.sessionPath).toBe(want.sessionPath);
    expect(server.activeSessions()).toBe(0);
    const inventory = observations.find((o) => o.type === 'NodeInventoryObserved')!.data as NodeInventoryObservedData;
    expect(inventory.system).toMatchObject({ manufacturer: want.manufacturer, model: want.model });
    expect(inventory.system?.serialNumber).toBe(want.serial);
    expect(inventory.bmc?.firmwareVersion).toBe(want.bmcFirmware);
    expect(inventory.biosVersion).toBe(want.bios);
    // A resource is unreadable only when the capture does not hold it.
    for (const observation of observations) {
      for (const entry of observation.data.unreadable ?? []) {
        expect(existsSync(join(folder, ...entry.path.split('?')[0]!.split('/').filter(Boolean), 'index.json')), `${entry.path} (${entry.code}) is in the capture`).toBe(false);
      }
    }
  });
});
