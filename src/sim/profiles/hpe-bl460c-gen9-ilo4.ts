/**
 * HPE ProLiant BL460c Gen9 blade with iLO 4 v2.54 (Redfish 1.0.0).
 *
 * Facts of this model's tree (single resources captured: root, System, one Processor, Manager, Chassis Power and
 * Thermal): the root has no `Vendor`, `Product` or `Links`; it carries iLO's lower-case `links` with `href`
 * (`Sessions` at `/redfish/v1/SessionService/Sessions/`), a `Type`, `@odata.type` `#ServiceRoot.1.0.0.ServiceRoot`
 * and no UpdateService; OEM data is `Oem.Hp` (iLO 5 says `Hpe`); ids end with a slash; the System says
 * `Manufacturer: HPE`, SKU `813198-B21`, BIOS `I36 v2.40 (02/17/2017)`, and its `Processors` and `Memory` are
 * summaries (`Count`, `ProcessorFamily`), not links; the Manager has no Model, `FirmwareVersion` `iLO 4 v2.54`,
 * Status without Health, CommandShell 9, GraphicalConsole 10, SerialConsole 13 sessions.
 */
import type { BmcProfile } from './bmc-profile.ts';
import { iloNoValidSession, standardSessionLimit } from './error-bodies.ts';

export const hpeBl460cGen9Ilo4: BmcProfile = {
  name: 'hpe_ilo4',
  family: 'hpe',
  title: 'HPE ProLiant BL460c Gen9, iLO 4 v2.54',
  redfishVersion: '1.0.0',
  odataContext: true,
  trailingSlash: true,
  serviceRoot: {
    uuid: 'c2b6084b-1db5-584e-8bd6-5c7d9f18a699',
    oem: { Hp: { '@odata.type': '#HpiLOServiceExt.1.0.0.HpiLOServiceExt', Manager: [{ ManagerFirmwareVersion: '{bmc}', ManagerType: 'iLO 4' }], Type: 'HpiLOServiceExt.1.0.0' } },
  },
  bmcFirmware: {
    version: '2.54',
    mix: [
      { version: '2.54', share: 0.6 },
      { version: '2.61', share: 0.3 },
      { version: '2.40', share: 0.08 },
      { version: '2.30', share: 0.02, stale: true },
    ],
  },
  systems: [
    {
      id: '1',
      name: 'Computer System',
      manufacturer: 'HPE',
      model: 'ProLiant BL460c Gen9',
      sku: '813198-B21',
      serialNumber: 'CZ3629FY8B',
      uuid: '31333138-3839-5A43-3336-323946593842',
      biosVersion: 'I36 v2.40 (02/17/2017)',
      hostName: 'bbmi',
      status: { state: 'Enabled', health: 'OK' },
      processorSummary: { count: 2, model: 'Intel(R) Xeon(R) CPU E5-2620 v4 @ 2.10GHz' },
      memoryGiB: 128,
      chassis: ['1'],
      managedBy: ['1'],
      oem: { Hp: { '@odata.type': '#HpComputerSystemExt.1.1.2.HpComputerSystemExt', Type: 'HpComputerSystemExt.1.1.2' } },
    },
  ],
  managers: [
    {
      id: '1',
      managerType: 'BMC',
      firmwareDisplay: 'iLO 4 v{bmc}',
      uuid: '1cf36323-33b6-50e8-a7b3-f58c1fea3f58',
      status: { state: 'Enabled' },
      consoles: { CommandShell: 9, GraphicalConsole: 10, SerialConsole: 13 },
      managerForServers: ['1'],
      managerForChassis: ['1'],
      oem: { Hp: { '@odata.type': '#HpiLO.1.1.0.HpiLO', Firmware: { Current: { MajorVersion: 2, VersionString: 'iLO 4 v{bmc}' } }, Type: 'HpiLO.1.1.0' } },
    },
  ],
  chassis: [
    {
      id: '1',
      name: 'Computer System Chassis',
      chassisType: 'Blade',
      manufacturer: 'HPE',
      model: 'ProLiant BL460c Gen9',
      serialNumber: 'CZ3629FY8B',
      sku: '813198-B21',
      powerState: 'On',
      status: { state: 'Enabled', health: 'OK' },
      computerSystems: ['1'],
      managedBy: ['1'],
      sensors: {
        thermal: {
          temperatures: [
            { name: '01-Inlet Ambient', celsius: 19, upperCritical: 42 },
            { name: '02-CPU {n}', count: 2, celsius: 40, upperCritical: 70 },
            { name: '04-P1 DIMM 1-4', celsius: 27, upperCritical: 87 },
          ],
          fans: [],
        },
        power: { consumedWatts: 120, supplies: [] },
      },
      oem: { Hp: { '@odata.type': '#HpServerChassis.1.0.0.HpServerChassis', Type: 'HpServerChassis.1.0.0' } },
    },
  ],
  firmwareInventory: { entries: [] },
  updateService: { simpleUpdate: false, absent: true },
  sessions: { limit: 6, timeoutS: 1800 },
  errors: { sessionLimit: standardSessionLimit('Base.1.0'), unauthorized: iloNoValidSession() },
  latency: { averageMs: 600, minimumMs: 200, maximumMs: 8_000 },
  overrides: {
    // iLO 4's root: no `Links` (lower-case `links` with `href`), a `Type`, and a `ServiceRoot.1.0.0` type without `v`.
    '/redfish/v1': {
      '@odata.type': '#ServiceRoot.1.0.0.ServiceRoot',
      Links: null,
      Type: 'ServiceRoot.1.0.0',
      links: {
        Chassis: { href: '/redfish/v1/Chassis/' },
        Managers: { href: '/redfish/v1/Managers/' },
        SessionService: { href: '/redfish/v1/SessionService/' },
        Sessions: { href: '/redfish/v1/SessionService/Sessions/' },
        Systems: { href: '/redfish/v1/Systems/' },
        self: { href: '/redfish/v1/' },
      },
    },
    // The System summarises processors and memory in place of the links.
    '/redfish/v1/Systems/1': {
      Processors: { Count: 2, ProcessorFamily: 'Intel(R) Xeon(R) CPU E5-2620 v4 @ 2.10GHz', Status: { HealthRollUp: 'OK' } },
      Memory: { Status: { HealthRollUp: 'OK' }, TotalSystemMemoryGB: 128 },
    },
  },
  inDefaultFleet: false,
  heldAgainst: 'redfish-partial/hpe_ilo4_bl460c_gen9',
  captureHolds: 'single-resources',
};
