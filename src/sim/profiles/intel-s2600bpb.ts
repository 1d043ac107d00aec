/**
 * Intel S2600BPB server board (sold in Cray systems), Intel BMC 1.93.
 *
 * Facts of this model's tree: the root has no `Vendor`, `Product` or `Oem` (Redfish 1.1.0); the System id is the
 * board serial (`Systems/QSBP74100021`), its Manufacturer names the reseller (`Cray Inc.`) and its Oem is
 * `Intel_RackScale`; the Manager is `BMC` with Model `S2600BPB`, no Manufacturer, FirmwareVersion `1.93.870cf4f0`;
 * chassis are nested in the URL (`Chassis/RackMount/Baseboard`, `Id` `Baseboard`), the baseboard carries legacy
 * Thermal (28 temperatures, 6 fans in RPM) and Power (two SOLUM supplies, 148 W); firmware is listed under
 * `UpdateService/SoftwareInventory`, every entry named `Software Inventory`, no `Updateable`; console limits
 * GraphicalConsole 4 and SerialConsole 1; the SEL is `Systems/<serial>/LogServices/SEL` with no `LogEntryType`,
 * IPMI-style entries (`Session Audit`, sensor 215); the Manager's `RedfishLog` is an event log. The `Chassis/RackMount`
 * member the capture lists has no resource in it and is left out. No capture README: latency is assumed.
 */
import type { BmcProfile, LogEntrySpec } from './bmc-profile.ts';
import { standardNoValidSession, standardSessionLimit } from './error-bodies.ts';

const SERIAL = 'QSBP74100021';
const badLogin = (id: string, created: string): LogEntrySpec => ({
  id, created, severity: 'OK', entryType: 'SEL', entryCode: 'Assert', sensorType: 'Session Audit', sensorNumber: 215, messageId: 'Bad User PWD', message: 'Invalid Username or Password - User ID 0x3',
});
const card = (id: string, model: string, serialNumber: string, partNumber: string, manufacturer = 'Intel Corporation') =>
  ({ id: `RackMount/${id}`, name: 'Computer System Card', chassisType: 'Card', manufacturer, model, serialNumber, partNumber, powerState: 'On' as const, status: { omit: true } });

export const intelS2600bpb: BmcProfile = {
  name: 'intel_s2600bpb',
  family: 'unknown',
  title: 'Intel S2600BPB board (Cray-branded), Intel BMC 1.93',
  redfishVersion: '1.1.0',
  odataContext: true,
  serviceRoot: { uuid: 'f4e0c73a-e66e-4acf-a109-bec76c47700d' },
  bmcFirmware: {
    version: '1.93.870cf4f0',
    mix: [
      { version: '1.93.870cf4f0', share: 0.8 },
      { version: '1.88.b2a4a8e1', share: 0.15 },
      { version: '1.43.660a4315', share: 0.05, stale: true },
    ],
  },
  systems: [
    {
      id: SERIAL,
      name: 'S2600BPB',
      manufacturer: 'Cray Inc.',
      model: 'S2600BPB',
      sku: '....................',
      serialNumber: SERIAL,
      uuid: '3504bf7d-ae5b-11e7-ab21-a4bf012890a8',
      biosVersion: 'SE5C620.86B.02.01.0008.C0001.031920191559',
      status: { state: 'Enabled', health: 'OK', healthRollup: 'OK' },
      processorSummary: { count: 2, model: 'Central Processor' },
      memoryGiB: 48,
      processors: [{ id: 'CPU{n}', count: 2, type: 'CPU', manufacturer: 'Intel(R) Corporation', model: 'Intel Xeon processor', cores: 4, threads: 4, maxSpeedMHz: 4000 }],
      memory: [{ id: 'Memory{n}', count: 6, capacityMiB: 8192, memoryDeviceType: 'DDR4', manufacturer: 'Hynix', partNumber: 'HMA41GR7MFR8N-TFT1  ', serialNumber: '102CE0{n}B', speedMHz: 2133 }],
      chassis: ['RackMount/Baseboard'],
      managedBy: ['BMC'],
      logServices: [
        {
          id: 'SEL',
          maxRecords: 4000,
          entries: [
            badLogin('1', '2020-08-12T19:07:18+00:00'),
            badLogin('2', '2020-08-12T19:07:26+00:00'),
            badLogin('3', '2020-08-12T19:07:26+00:00'),
            badLogin('4', '2020-08-12T19:07:31+00:00'),
          ],
        },
      ],
      oem: { Intel_RackScale: { '@odata.type': '#Intel.Oem.ComputerSystem', ProcessorSockets: 0, MemorySockets: 0 } },
    },
  ],
  managers: [
    {
      id: 'BMC',
      managerType: 'BMC',
      model: 'S2600BPB',
      firmwareDisplay: '{bmc}',
      uuid: 'ed5fe40a-657e-d2ca-bfec-08779f748d45',
      status: { state: 'Enabled', health: 'OK', healthRollup: 'OK' },
      consoles: { GraphicalConsole: 4, SerialConsole: 1 },
      managerForServers: [SERIAL],
      managerForChassis: ['RackMount/Baseboard'],
      logServices: [{ id: 'RedfishLog', entries: [] }],
    },
  ],
  chassis: [
    {
      ...card('Baseboard', 'S2600BPB', SERIAL, 'H87926-550'),
      computerSystems: [SERIAL],
      managedBy: ['BMC'],
      sensors: {
        thermal: {
          temperatures: [
            { name: 'BB Inlet Temp', celsius: 22, upperCritical: 65 },
            { name: 'BB BMC Temp', celsius: 27, upperCritical: 90 },
            { name: 'BB CPU{n} VR Temp', count: 2, celsius: 27, upperCritical: 115 },
            { name: 'BB MISC VR Temp', celsius: 29, upperCritical: 115 },
            { name: 'BB Outlet Temp', celsius: 26, upperCritical: 115 },
            { name: 'SSB Temp', celsius: 28, upperCritical: 103 },
            { name: 'Exit Air Temp', celsius: 28, upperCritical: 85 },
            { name: 'LAN NIC Temp', celsius: 31, upperCritical: 120 },
            { name: 'PS{n} Temperature', count: 2, celsius: 22, upperCritical: 65 },
            { name: 'P{n} Therm Margin', count: 2, celsius: -72, upperCritical: null },
            { name: 'P{n} DTS Therm Mgn', count: 2, celsius: -62, upperCritical: 15 },
            { name: 'P{n} Temperature', count: 2, celsius: 26, upperCritical: null },
            { name: 'P1 DIMM Thrm {n}', count: 2, celsius: -58, upperCritical: 10 },
            { name: 'P2 DIMM Thrm {n}', count: 2, celsius: -68, upperCritical: 10 },
            { name: 'Agg Therm Mrgn {n}', count: 2, celsius: -35, upperCritical: null },
            { name: 'Riser {n} Temp', count: 2, celsius: 22, upperCritical: 80 },
            { name: 'Mem {n} VRD Temp', count: 2, celsius: 25, upperCritical: 115 },
            { name: 'EV CPU1VR Temp', celsius: 24, upperCritical: 115 },
          ],
          fans: [
            { name: 'Sys Fan {n}A', count: 3, reading: 18180, units: 'RPM' },
            { name: 'Sys Fan {n}B', count: 3, reading: 18786, units: 'RPM' },
          ],
        },
        power: {
          consumedWatts: 148,
          supplies: [{ id: '{n}', from: 0, count: 2, name: 'Power Supply Bay', model: 'PSSF222201A', manufacturer: 'SOLUM CO., LTD.                  ', serialNumber: 'CNS2221A4AHAP04{n}0', firmwareVersion: '04A', status: { state: 'Enabled', health: 'OK', healthRollup: 'OK' } }],
        },
      },
    },
    card('HSBackplane', 'FHW12X35HSBP12G', 'BQKP73800948', 'G92718-271'),
    card('PCIeRiser1', 'AHW1URISER1    ', 'QSBP73904417', 'H88058-150'),
    card('PCIeRiser2', 'AHW1UM2RISER2  ', 'QSBP73804197', 'H94856-350'),
    card('PwrSupply1FRU', 'PSSF222201A', 'CNS2221A4AHAP0490', 'H66158-010', 'SOLUM CO., LTD.                  '),
  ],
  firmwareInventory: {
    collection: 'SoftwareInventory',
    entries: [
      { id: 'BMC', name: 'Software Inventory', version: '{bmc}', status: { omit: true } },
      { id: 'BIOS', name: 'Software Inventory', version: 'SE5C620.86B.02.01.0008.C0001.031920191559', status: { omit: true } },
      { id: 'ME', name: 'Software Inventory', version: '04.01.04.251', status: { omit: true } },
      { id: 'SDR', name: 'Software Inventory', version: '1.39 (585433 bytes)', status: { omit: true } },
      { id: 'HSBP1', name: 'Software Inventory', version: '01.21', status: { omit: true } },
    ],
  },
  updateService: { simpleUpdate: true },
  sessions: { limit: 4, timeoutS: 1800 },
  errors: { sessionLimit: standardSessionLimit(), unauthorized: standardNoValidSession() },
  latency: { averageMs: 400, minimumMs: 120, maximumMs: 6_000 },
  // The nested chassis say their own last segment as Id, as the board's BMC writes them.
  overrides: Object.fromEntries(
    ['Baseboard', 'HSBackplane', 'PCIeRiser1', 'PCIeRiser2', 'PwrSupply1FRU'].map((id) => [`/redfish/v1/Chassis/RackMount/${id}`, { Id: id }]),
  ),
  inDefaultFleet: false,
  heldAgainst: 'redfish-more/intel_s2600bpb',
};
