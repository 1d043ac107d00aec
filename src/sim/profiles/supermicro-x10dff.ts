/**
 * Supermicro X10DFF-CTG board, ASPEED BMC 3.25 (Redfish 1.0.1).
 *
 * Facts of this model's tree (single resources captured: root, System, one Processor, Manager, Chassis Power and
 * Thermal): the root has an empty `Oem`, no `Vendor`, `Product` or UpdateService; the Manager's `Oem` holds
 * Supermicro's settings directly (`SMCRAKP`, `FanMode`, `Syslog`, ...) instead of a `Supermicro` namespace; the
 * Manager model is `ASPEED`, `FirmwareVersion` `3.25`; UUIDs are zeros but for the MAC in the last group
 * (`00000000-0000-0000-0000-0CC47AB721C4`); the System has an empty SerialNumber, SKU `Default string`, BIOS `2.0`,
 * a ProcessorSummary count of 16 and no Memory link; console limits CommandShell 0, GraphicalConsole 4,
 * SerialConsole 1.
 */
import type { BmcProfile } from './bmc-profile.ts';
import { standardNoValidSession, standardSessionLimit } from './error-bodies.ts';

const enabled = { ServiceEnabled: true };

export const supermicroX10dff: BmcProfile = {
  name: 'supermicro_x10',
  family: 'supermicro',
  title: 'Supermicro X10DFF-CTG, ASPEED BMC 3.25',
  redfishVersion: '1.0.1',
  odataContext: true,
  serviceRoot: { uuid: '00000000-0000-0000-0000-0CC47AB982F7', oem: {} },
  bmcFirmware: {
    version: '3.25',
    mix: [
      { version: '3.25', share: 0.7 },
      { version: '3.48', share: 0.25 },
      { version: '3.10', share: 0.05, stale: true },
    ],
  },
  systems: [
    {
      id: '1',
      manufacturer: 'Supermicro',
      model: 'X10DFF-CTG',
      sku: 'Default string',
      uuid: '00000000-0000-0000-0000-0CC47AB721C4',
      biosVersion: '2.0',
      status: { state: 'Enabled', health: 'OK' },
      processorSummary: { count: 16, model: 'Intel(R) Xeon(R) processor' },
      memoryGiB: 128,
      processors: [{ id: '{n}', count: 2, type: 'CPU', manufacturer: 'Intel', model: 'Intel(R) Xeon(R) CPU E5-2630 v3 @ 2.40GHz', cores: 8, threads: 16, maxSpeedMHz: 4000 }],
      chassis: ['1'],
      managedBy: ['1'],
    },
  ],
  managers: [
    {
      id: '1',
      managerType: 'BMC',
      model: 'ASPEED',
      firmwareDisplay: '{bmc}',
      uuid: '00000000-0000-0000-0000-0CC47AB982F7',
      status: { state: 'Enabled', health: 'OK' },
      consoles: { CommandShell: 0, GraphicalConsole: 4, SerialConsole: 1 },
      managerForServers: ['1'],
      managerForChassis: ['1'],
      oem: { SMCRAKP: { Mode: 'Enabled' }, FanMode: { Mode: 'Standard' }, Syslog: enabled, NTP: enabled, SNMP: enabled, IPAccessControl: enabled, MouseMode: { Mode: 'Absolute' }, Snooping: { PostCode: 0 } },
    },
  ],
  chassis: [
    {
      id: '1',
      chassisType: 'RackMount',
      manufacturer: 'Supermicro',
      model: 'X10DFF-CTG',
      powerState: 'On',
      status: { state: 'Enabled', health: 'OK' },
      computerSystems: ['1'],
      managedBy: ['1'],
      sensors: {
        thermal: {
          temperatures: [
            { name: 'CPU{n} Temp', count: 2, celsius: 41, upperCritical: 95 },
            { name: 'System Temp', celsius: 30, upperCritical: 85 },
          ],
          fans: [{ name: 'FAN{n}', count: 4, reading: 4800, units: 'RPM' }],
        },
        power: { consumedWatts: 180, supplies: [] },
      },
    },
  ],
  firmwareInventory: { entries: [] },
  updateService: { simpleUpdate: false, absent: true },
  sessions: { limit: 4, timeoutS: 1800 },
  errors: { sessionLimit: standardSessionLimit(), unauthorized: standardNoValidSession() },
  latency: { averageMs: 700, minimumMs: 250, maximumMs: 10_000 },
  inDefaultFleet: false,
  heldAgainst: 'redfish-partial/supermicro_x10dff',
  captureHolds: 'single-resources',
};
