/**
 * HPE ProLiant BL460c Gen9 blade with iLO 4 v2.54 (Redfish 1.0.0).
 *
 * Facts of this model's tree (single resources captured: root, System, one Processor, Manager, Chassis Power and
 * Thermal): the root has no `Vendor`, `Product` or `Links`; it carries iLO's lower-case `links` with `href`
 * (`Sessions` at `/redfish/v1/SessionService/Sessions/`), a `Type`, `@odata.type` `#ServiceRoot.1.0.0.ServiceRoot`
 * and no UpdateService; OEM data is `Oem.Hp` (iLO 5 says `Hpe`); ids end with a slash; the System says
 * `Manufacturer: HPE`, SKU `813198-B21`, BIOS `I36 v2.40 (02/17/2017)`, and its `Processors` and `Memory` are
 * summaries (`Count`, `ProcessorFamily`), not links; the Manager has no Model, `FirmwareVersion` `iLO 4 v2.54`,
 * Status without Health, CommandShell 9, GraphicalConsole 10, SerialConsole 13 sessions; Thermal numbers its 32
 * sensors in their names and marks empty bays `Absent`, its one (virtual) fan reads `CurrentReading` 81 in
 * `Units: Percent`; Power says 73 W and lists no supply (the enclosure powers the blade).
 */
import type { BmcProfile } from './bmc-profile.ts';
import { iloNoValidSession, standardSessionLimit } from './error-bodies.ts';

export const hpeBl460cGen9Ilo4: BmcProfile = {
  name: 'hpe_ilo4_bl460c_gen9',
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
        // iLO numbers its sensors in the name and marks the empty sockets and bays Absent (reading 0).
        thermal: {
          temperatures: [
            { name: '01-Inlet Ambient', celsius: 18 },
            { name: '02-CPU 1', celsius: 40 },
            { name: '03-CPU 2', celsius: 40 },
            { name: '04-P1 DIMM 1-4', celsius: 23 },
            { name: '05-P1 DIMM 5-8', celsius: 0, status: { state: 'Absent' } },
            { name: '06-P2 DIMM 1-4', celsius: 22 },
            { name: '07-P2 DIMM 5-8', celsius: 0, status: { state: 'Absent' } },
            { name: '08-P1 Mem Zone', celsius: 22 },
            { name: '09-P2 Mem Zone', celsius: 22 },
            { name: '10-HD Max', celsius: 40 },
            { name: '11-Exp Bay Drive', celsius: 0, status: { state: 'Absent' } },
            { name: '12-Chipset', celsius: 26 },
            { name: '13-VR P1', celsius: 26 },
            { name: '14-VR P2', celsius: 26 },
            { name: '15-VR P1 Mem-1', celsius: 22 },
            { name: '16-VR P1 Mem-2', celsius: 20 },
            { name: '17-VR P2 Mem-1', celsius: 18 },
            { name: '18-VR P2 Mem-2', celsius: 21 },
            { name: '19-Storage Batt', celsius: 20 },
            { name: '20-HD Controller', celsius: 47 },
            { name: '21-HDCntlr Inlet', celsius: 21 },
            { name: '22-Mezz 1', celsius: 0, status: { state: 'Absent' } },
            { name: '23-Mezz 1 Inlet', celsius: 0, status: { state: 'Absent' } },
            { name: '24-Mezz 2', celsius: 0, status: { state: 'Absent' } },
            { name: '25-Mezz 2 Inlet', celsius: 0, status: { state: 'Absent' } },
            { name: '26-LOM Card', celsius: 40 },
            { name: '27-LOMCard Inlet', celsius: 0, status: { state: 'Absent' } },
            { name: '28-I/O Zone-1', celsius: 23 },
            { name: '29-I/O Zone-2', celsius: 23 },
            { name: '30-I/O Zone-3', celsius: 23 },
            { name: '31-Sys Exhaust-1', celsius: 25 },
            { name: '32-Sys Exhaust-2', celsius: 34 },
          ],
          fans: [],
        },
        power: { consumedWatts: 73, supplies: [] },
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
    // A blade's one virtual fan, in percent, as iLO 4 writes it: `FanName`, `CurrentReading`, `Units`.
    '/redfish/v1/Chassis/1/Thermal': {
      Fans: [{ FanName: 'Fan 1', CurrentReading: 81, Units: 'Percent', Status: { Health: 'OK', State: 'Enabled' } }],
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
