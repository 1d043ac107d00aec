import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { existsSync, readdirSync } from 'node:fs';
import {
  FirmwareInventoryObserved,
  HealthObserved,
  NodeInventoryObserved,
  PowerStateObserved,
  SelEntriesObserved,
  SensorsObserved,
  type DriverObservation,
  type NodeInventoryObservedData,
} from '../../events/driver-observations.js';
import { RedfishDriver, redfishDialects, startMockupServer, type MockupServer } from '../../src/drivers/index.js';
import { fixturePath, fixtures } from './support/fixtures.js';

/**
 * Expected values, read from the captures by hand (ServiceRoot, Systems/*, Managers/*, Chassis/* and
 * UpdateService/FirmwareInventory of each folder), not from the driver's output.
 */
const expected: Record<
  string,
  {
    dialect: string;
    manufacturer: string;
    model: string;
    serial: string;
    bmcFirmware: string;
    bios?: string;
    gpuCount: number;
    firmwareComponents: number;
    systems: number;
    managers: number;
    health: string;
    sessionLimitHint?: number;
  }
> = {
  // Systems/System.Embedded.1, Managers/iDRAC.Embedded.1, 29 FirmwareInventory members, GPU Processors/Video.Slot.2-1
  dell: { dialect: 'dell-idrac9', manufacturer: 'Dell Inc.', model: 'PowerEdge R750', serial: 'CNIVC0014M0388', bmcFirmware: '6.00.30.00', bios: '1.8.2', gpuCount: 1, firmwareComponents: 29, systems: 1, managers: 1, health: 'OK', sessionLimitHint: 5 },
  // Health Critical on the System; Manager CommandShell.MaxConcurrentSessions 5, GraphicalConsole 6
  dell_multi_dpu: { dialect: 'dell-idrac9', manufacturer: 'Dell Inc.', model: 'PowerEdge R750', serial: 'MXFC40025U031S', bmcFirmware: '7.10.30.00', bios: '1.13.2', gpuCount: 0, firmwareComponents: 23, systems: 1, managers: 1, health: 'Critical', sessionLimitHint: 5 },
  // Manager FirmwareVersion "iLO 5 v2.72", CommandShell.MaxConcurrentSessions 9, BiosVersion "A42 v2.60 (08/11/2022)", 48 inventory members
  hpe: { dialect: 'hpe-ilo5', manufacturer: 'HPE', model: 'ProLiant DL385 Gen10 Plus v2', serial: 'MXQ302099S', bmcFirmware: 'iLO 5 v2.72', bios: 'A42 v2.60 (08/11/2022)', gpuCount: 0, firmwareComponents: 48, systems: 1, managers: 1, health: 'Critical', sessionLimitHint: 9 },
  // GPUs are Chassis/1/PCIeDevices/GPU1..GPU8; 106 inventory members
  supermicro: { dialect: 'supermicro-x13', manufacturer: 'Supermicro', model: 'SYS-821GE-TNHR', serial: 'S889914X3710910', bmcFirmware: '11.01.01', bios: '1.4', gpuCount: 8, firmwareComponents: 106, systems: 1, managers: 1, health: 'OK', sessionLimitHint: 4 },
  // System_0 has no Manufacturer/Model/Serial: they come from its Links.Chassis BMC_0; GPU_0..3 under HGX_Baseboard_0;
  // BIOS from the UEFI inventory entry; HGX_CPU_0/1 chassis are Critical (EC_STRAP_MISMATCH conditions)
  nvidia_gb200: { dialect: 'nvidia-openbmc-gb200', manufacturer: 'NVIDIA', model: 'GB200 NVL', serial: '1583124820080', bmcFirmware: 'GB200Nvl-24.12-8', bios: 'buildbrain-gcid-38635631', gpuCount: 4, firmwareComponents: 30, systems: 2, managers: 2, health: 'Critical', sessionLimitHint: 4 },
  // GPUs from Chassis HGX_GPU_0/1; the inventory lists HGX_FW_FPGA_0 twice (20 links, 19 components)
  nvidia_gh200: { dialect: 'nvidia-openbmc-gh200', manufacturer: 'NVIDIA', model: 'P3809', serial: '1580624650610', bmcFirmware: 'GH200-24.05-2', bios: 'buildbrain-gcid-35803827', gpuCount: 2, firmwareComponents: 19, systems: 2, managers: 2, health: 'OK', sessionLimitHint: 4 },
  nvidia_gbswitch: { dialect: 'nvidia-openbmc-nvswitch', manufacturer: 'NVIDIA', model: 'N5110_LD', serial: 'MT2519600UDR', bmcFirmware: '88.0002.1950', gpuCount: 0, firmwareComponents: 11, systems: 1, managers: 1, health: 'OK', sessionLimitHint: 15 },
  // Manufacturer is a URL on this BMC (https://www.mellanox.com): the inventory names the vendor, NVIDIA; BIOS from the
  // DPU_UEFI inventory entry
  nvidia_dpu: { dialect: 'nvidia-bluefield-bmc', manufacturer: 'NVIDIA', model: 'BlueField-3 SmartNIC Main Card', serial: 'MT2423600ANG', bmcFirmware: 'BF-24.10-10', bios: '4.9.0-46-g7e3911bd4d', gpuCount: 0, firmwareComponents: 14, systems: 1, managers: 1, health: 'OK', sessionLimitHint: 1 },
};

const schemas = {
  NodeInventoryObserved: NodeInventoryObserved.schema,
  FirmwareInventoryObserved: FirmwareInventoryObserved.schema,
  PowerStateObserved: PowerStateObserved.schema,
  HealthObserved: HealthObserved.schema,
  SensorsObserved: SensorsObserved.schema,
  SelEntriesObserved: SelEntriesObserved.schema,
} as const;

const redfishFolders = fixtures.dir === undefined ? [] : readdirSync(fixturePath('redfish'), { withFileTypes: true })
  .filter((entry) => entry.isDirectory())
  .map((entry) => entry.name)
  .sort();

describe.skipIf(!fixtures.runnable)(fixtures.title('every Redfish capture served over loopback HTTP'), () => {
  it('has an expectation for every capture folder', () => {
    expect(Object.keys(expected).sort()).toEqual(redfishFolders);
  });

  describe.each(redfishFolders)('%s', (folder) => {
    let server: MockupServer;
    let driver: RedfishDriver;
    let observations: DriverObservation[];
    const want = expected[folder]!;

    beforeAll(async () => {
      server = await startMockupServer({ folder: fixturePath('redfish', folder) });
      driver = new RedfishDriver({ baseUrl: server.url, username: 'root', password: 'calvin', maxConcurrency: 4, requestTimeoutMs: 5000 });
      observations = await driver.observe();
    });
    afterAll(async () => {
      await driver.close();
      await server.close();
    });

    const inventory = (): NodeInventoryObservedData => observations.find((o) => o.type === 'NodeInventoryObserved')!.data as NodeInventoryObservedData;

    it('is read with the dialect record made for it', () => {
      expect(driver.dialect?.id).toBe(want.dialect);
      for (const observation of observations) expect(observation.data.dialect).toBe(want.dialect);
    });

    it('yields identity, BMC and BIOS firmware as the capture states them', () => {
      const data = inventory();
      expect(data.system.manufacturer).toBe(want.manufacturer);
      expect(data.system.model).toBe(want.model);
      expect(data.system.serialNumber).toBe(want.serial);
      expect(data.bmc.firmwareVersion).toBe(want.bmcFirmware);
      expect(data.biosVersion).toBe(want.bios);
      expect(data.systems).toHaveLength(want.systems);
      expect(data.bmcs).toHaveLength(want.managers);
      expect(data.sessionLimitHint).toBe(want.sessionLimitHint);
    });

    it('counts GPUs and the whole firmware inventory', () => {
      expect(inventory().gpus?.count).toBe(want.gpuCount);
      const firmware = observations.find((o) => o.type === 'FirmwareInventoryObserved')!;
      expect(firmware.type === 'FirmwareInventoryObserved' && firmware.data.components.length).toBe(want.firmwareComponents);
    });

    it('rolls health up from systems and chassis', () => {
      const health = observations.find((o) => o.type === 'HealthObserved')!;
      expect(health.type === 'HealthObserved' && health.data.health).toBe(want.health);
    });

    it('produces payloads the event catalogue accepts', () => {
      expect(observations.map((o) => o.type).sort()).toEqual(Object.keys(schemas).sort());
      for (const observation of observations) {
        const result = schemas[observation.type as keyof typeof schemas].safeParse(observation.data);
        expect(result.success, JSON.stringify(result.error?.issues.slice(0, 3))).toBe(true);
      }
    });

    it('leaves no session open on the BMC', () => {
      expect(server.stats.sessionsCreated).toBeGreaterThan(0);
      expect(server.activeSessions()).toBe(0);
    });
  });
});

describe.skipIf(!fixtures.runnable)(fixtures.title('dialect records'), () => {
  it('name a capture that exists for every quirk and version rule', () => {
    for (const dialect of redfishDialects) {
      for (const quirk of dialect.quirks) expect(existsSync(fixturePath(quirk.fixture)), `${dialect.id}/${quirk.id}: ${quirk.fixture}`).toBe(true);
      for (const rule of dialect.firmware.versionRules) {
        if (rule.fixture) expect(existsSync(fixturePath(rule.fixture)), `${dialect.id}/${rule.id}`).toBe(true);
      }
      if (dialect.paging.fixture) expect(existsSync(fixturePath(dialect.paging.fixture))).toBe(true);
    }
  });

  it('end with the generic standard-schema record', () => {
    expect(redfishDialects[redfishDialects.length - 1]!.id).toBe('generic');
    expect(new Set(redfishDialects.map((dialect) => dialect.id)).size).toBe(redfishDialects.length);
  });
});
