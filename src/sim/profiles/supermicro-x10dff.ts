/**
 * Supermicro X10DFF-CTG board, ASPEED BMC 3.25 (Redfish 1.0.1).
 *
 * Facts of this model's tree (single resources captured: root, System, one Processor, Manager, Chassis Power and
 * Thermal): the root has an empty `Oem`, no `Vendor`, `Product` or UpdateService; the Manager's `Oem` holds
 * Supermicro's settings directly (`SMCRAKP`, `FanMode`, `Syslog`, ...) instead of a `Supermicro` namespace; the
 * Manager model is `ASPEED`, `FirmwareVersion` `3.25`; UUIDs are zeros but for the MAC in the last group
 * (`00000000-0000-0000-0000-0CC47AB721C4`); the System has an empty SerialNumber, SKU `Default string`, BIOS `2.0`,
 * a ProcessorSummary count of 16 and no Memory link; console limits CommandShell 0, GraphicalConsole 4,
 * SerialConsole 1; Thermal lists every DIMM slot (empty ones `Absent` at 0) and ten fan headers (six at 0 RPM);
 * Power says 176 W with four supply bays, two of them `Absent`.
 */
import type { BmcProfile } from './bmc-profile.ts';
import { standardNoValidSession, standardSessionLimit } from './error-bodies.ts';

const enabled = { ServiceEnabled: true };

export const supermicroX10dff: BmcProfile = {
  name: 'supermicro_x10dff',
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
        // Empty DIMM slots and fan headers are listed: Absent at 0, or a fan at 0 RPM.
        thermal: {
          temperatures: [
            { name: 'CPU{n} Temp', count: 2, celsius: 35, upperCritical: 87 },
            { name: 'PCH Temp', celsius: 25, upperCritical: 95 },
            { name: 'System Temp', celsius: 19, upperCritical: 85 },
            { name: 'Peripheral Temp', celsius: 21, upperCritical: 85 },
            { name: '10GLAN Temp', celsius: 29, upperCritical: 100 },
            { name: 'Vcpu{n}VRM Temp', count: 2, celsius: 31, upperCritical: 100 },
            { name: 'VDIMMABVRM Temp', celsius: 31, upperCritical: 100 },
            { name: 'VDIMMCDVRM Temp', celsius: 24, upperCritical: 100 },
            { name: 'VDIMMEFVRM Temp', celsius: 29, upperCritical: 100 },
            { name: 'VDIMMGHVRM Temp', celsius: 30, upperCritical: 100 },
            ...['A', 'B', 'C', 'D'].flatMap((slot) => [
              { name: `P1-DIMM${slot}1 Temp`, celsius: 24, upperCritical: 85 },
              { name: `P1-DIMM${slot}2 Temp`, celsius: 0, upperCritical: 0, status: { state: 'Absent' as const } },
            ]),
            ...['E', 'F', 'G', 'H'].flatMap((slot) => [
              { name: `P2-DIMM${slot}1 Temp`, celsius: 25, upperCritical: 85 },
              { name: `P2-DIMM${slot}2 Temp`, celsius: 0, upperCritical: 0, status: { state: 'Absent' as const } },
            ]),
          ],
          fans: [
            { name: 'FAN{n}', count: 4, reading: 4600, units: 'RPM' },
            { name: 'FAN{n}', from: 5, count: 6, reading: 0, units: 'RPM' },
          ],
        },
        power: {
          consumedWatts: 176,
          supplies: [
            { id: '{n}', count: 2, name: 'Power Supply Bay {n}', model: 'PWS-2K04A-1R', firmwareVersion: 'REV1.1', outputWatts: 380, status: { state: 'Enabled', health: 'OK' } },
            { id: '{n}', from: 3, count: 2, name: 'Power Supply Bay {n}', status: { state: 'Absent' } },
          ],
        },
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
