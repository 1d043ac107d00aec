/**
 * Dell PowerEdge M630 blade (13G) with iDRAC 8, firmware 2.41 (Redfish 1.0.2).
 *
 * Facts of this model's tree (single resources captured: root, System, one Processor, Manager, Chassis Power and
 * Thermal): the root has no `Vendor`, `Product`, `Oem` or UpdateService, and its `Links.Sessions` is
 * `/redfish/v1/Sessions` (not under SessionService); FQDD ids as on iDRAC 9 (`System.Embedded.1`,
 * `iDRAC.Embedded.1`, `CPU.Socket.1`); the Manager model names the generation (`13G Modular`), its FirmwareVersion
 * is the bare `2.41.40.40`, and its Status says `"Health": "Ok"`; summaries spell `HealthRollUp`; the System has no
 * Memory link, SKU is the service tag; console limits CommandShell 5, GraphicalConsole 6, SerialConsole 0 (off);
 * Thermal has three temperatures and no fans, Power one PowerControl (121 W) and no supplies (a blade: the
 * enclosure powers it). A session POST to the standard path answers 405 on some of this firmware
 * (`redfish-errors/dell-idrac8-405-session-create-not-allowed.json`); the simulator accepts sessions at the
 * standard path, and the driver reaches it after the advertised one.
 */
import type { BmcProfile } from './bmc-profile.ts';
import { idracSessionLimit, standardNoValidSession } from './error-bodies.ts';

const SYSTEM = 'System.Embedded.1';
const IDRAC = 'iDRAC.Embedded.1';
const TAG = '905DCC2';

export const dellM630Idrac8: BmcProfile = {
  name: 'dell_idrac8_m630',
  family: 'dell',
  title: 'Dell PowerEdge M630 blade, iDRAC 8 2.41',
  redfishVersion: '1.0.2',
  odataContext: true,
  serviceRoot: {},
  bmcFirmware: {
    version: '2.41.40.40',
    mix: [
      { version: '2.41.40.40', share: 0.5 },
      { version: '2.70.70.70', share: 0.35 },
      { version: '2.83.83.83', share: 0.1 },
      { version: '2.30.30.30', share: 0.05, stale: true },
    ],
  },
  systems: [
    {
      id: SYSTEM,
      manufacturer: 'Dell Inc.',
      model: 'PowerEdge M630',
      sku: TAG,
      serialNumber: 'CN7016362D00JD',
      uuid: '4c4c4544-0030-3510-8044-b9c04f434332',
      biosVersion: '2.4.2',
      hostName: 'machine.example.com',
      status: { state: 'Enabled', health: 'OK', healthRollup: 'OK', rollupSpelling: 'HealthRollUp' },
      processorSummary: { count: 2, model: 'Intel(R) Xeon(R) CPU E5-2620 v3 @ 2.40GHz' },
      memoryGiB: 128,
      processors: [{ id: 'CPU.Socket.{n}', count: 2, type: 'CPU', manufacturer: 'Intel', model: 'Intel(R) Xeon(R) CPU E5-2620 v3 @ 2.40GHz', cores: 6, threads: 12, maxSpeedMHz: 4000 }],
      chassis: [SYSTEM],
      managedBy: [IDRAC],
    },
  ],
  managers: [
    {
      id: IDRAC,
      managerType: 'BMC',
      model: '13G Modular',
      firmwareDisplay: '{bmc}',
      uuid: '3243434f-c0b9-4480-3510-00304c4c4544',
      consoles: { CommandShell: 5, GraphicalConsole: 6, SerialConsole: 0 },
      hostName: `idrac-${TAG}`,
      managerForServers: [SYSTEM],
      managerForChassis: [SYSTEM],
    },
  ],
  chassis: [
    {
      id: SYSTEM,
      name: 'Computer System Chassis',
      chassisType: 'Blade',
      manufacturer: 'Dell Inc.',
      model: 'PowerEdge M630',
      serialNumber: 'CN7016362D00JD',
      sku: TAG,
      powerState: 'On',
      status: { state: 'Enabled', health: 'OK', healthRollup: 'OK', rollupSpelling: 'HealthRollUp' },
      computerSystems: [SYSTEM],
      managedBy: [IDRAC],
      sensors: {
        thermal: {
          temperatures: [
            { name: 'System Board Inlet Temp', celsius: 17, upperCritical: 47 },
            { name: 'CPU{n} Temp', count: 2, celsius: 45, upperCritical: 85 },
          ],
          fans: [],
        },
        power: { consumedWatts: 121, supplies: [] },
      },
    },
  ],
  firmwareInventory: { entries: [] },
  updateService: { simpleUpdate: false, absent: true },
  sessions: { limit: 8, timeoutS: 1800 },
  errors: { sessionLimit: idracSessionLimit('IDRAC.2.1', 'Base.1.0'), unauthorized: standardNoValidSession('Base.1.0') },
  latency: { averageMs: 900, minimumMs: 300, maximumMs: 12_000 },
  overrides: {
    // Redfish 1.0.2: sessions at the root, not under SessionService.
    '/redfish/v1': { Links: { Sessions: { '@odata.id': '/redfish/v1/Sessions' } } },
    '/redfish/v1/Sessions': { '@odata.id': '/redfish/v1/Sessions', '@odata.type': '#SessionCollection.SessionCollection', Name: 'Session Collection', Members: [], 'Members@odata.count': 0 },
    // iDRAC 8 spells the manager's health `Ok`.
    '/redfish/v1/Managers/iDRAC.Embedded.1': { Status: { Health: 'Ok', State: 'Enabled' } },
  },
  inDefaultFleet: false,
  heldAgainst: 'redfish-partial/dell_idrac8_m630',
  captureHolds: 'single-resources',
};
