/**
 * HPE Cray EX4252 compute blade: four nodes (2x AMD EPYC 9654 each) behind one nC node controller, firmware
 * nc.1.8.3 (ARM).
 *
 * Facts of this model's tree: the root has no `Vendor`, `Product`, `Oem` or `UUID` (Redfish 1.2.0); four Systems
 * `Node0`..`Node3` (Node0/Node1 share one board serial, Node2/Node3 another), each `HPE EX4252` with BIOS
 * `ex4252.bios-1.3.0`, no UUID or SKU, 24 DIMMs, Health `Warning` with a `Status.Conditions` entry
 * `HPENodeAlarms.1.0.VRMMismatchFailure`, and no `Links` to chassis or managers; five Managers listed `MCU3`, `BMC`,
 * `MCU0`..`MCU2` (an `EnclosureManager` and four `AuxiliaryController`s) with no Model, FirmwareVersion or console
 * services, so the BMC version is only `UpdateService/FirmwareInventory/BMC`'s long build string; node chassis
 * `Node0`..`Node3` carry `Oem.CrayVoltageMargins`, legacy Thermal (47 temperatures, one without a name), a Power
 * with only voltages, a `PowerSubsystem` with one supply that has no Id, Model or Manufacturer (`Version` `0.00`
 * or `1.19`) and two HPC NICs; `Enclosure` carries `Oem.Alarms`/`TriggeredAlarms` and 5 temperatures; the four
 * `Mezz` NIC cards report through `Sensors` only (6 temperatures, 10 voltages, 2 currents, 2 powers each; their
 * `Thermal`/`Power` links answer 404, which a generated tree does not reproduce); 29 inventory entries, only BIOS,
 * BMC, Recovery and the management Ethernet `Updateable` (two of those report the version `undefined`); its log is
 * a Manager `EventLog`, no SEL. SessionTimeout 30 s. Average answer 456 ms; TaskService took 15.3 s.
 */
import type { BmcProfile, ChassisSpec, LegacyTemperatureSpec, SensorSpec, SystemSpec } from './bmc-profile.ts';
import { standardNoValidSession, standardSessionLimit } from './error-bodies.ts';

const NODES = [0, 1, 2, 3];
const BOARD_SERIAL = (node: number): string => (node < 2 ? 'PR1237879N' : 'PR12378794');

const nodeTemperatures: LegacyTemperatureSpec[] = [
  { name: 'CPU0dimm{n} Temperature', from: 0, count: 12, celsius: null },
  { name: 'CPU1dimm{n} Temperature', from: 0, count: 12, celsius: null },
  { name: 'CPU{n} Temperature', from: 0, count: 2, celsius: null },
  { name: 'CPU{n} VDDCR_SOC Temperature', from: 0, count: 2, celsius: 43 },
  { name: 'CPU{n} NBM TSNS ADC Temperature', from: 0, count: 2, celsius: 85, upperCritical: 105 },
  { name: 'CPU{n} VDDCR_CPUA Temperature', from: 0, count: 2, celsius: 39 },
  { name: 'CPU{n} VDDCR_CPUB Temperature', from: 0, count: 2, celsius: 35 },
  { name: 'CPU{n} VDDCR_VDDIO Temperature', from: 0, count: 2, celsius: 41 },
  { name: 'CPU{n} VDD_1V8_S5 Temperature', from: 0, count: 2, celsius: 50 },
  { name: 'CPU{n} VDD_1V1_S3 Temperature', from: 0, count: 2, celsius: 35 },
  { name: 'CPU{n} VDD_12V0_N0C{n} Temperature', from: 0, count: 2, celsius: 0 },
  { name: 'CPUS VDD_3V3_S0 Temperature', celsius: 42, upperCritical: 105 },
  { name: 'CPUS VDD_5V0_S5 Temperature', celsius: 38, upperCritical: 105 },
  { name: 'CPUS VDD_3V3_S5 Temperature', celsius: 39, upperCritical: 105 },
  { name: 'CPUS 48V ECB Temperature', celsius: 0 },
  // One sensor of every node says nothing about itself.
  { name: '', celsius: null },
];

const node = (n: number): SystemSpec => ({
  id: `Node${n}`,
  name: `Node${n}`,
  manufacturer: 'HPE',
  model: 'HPE EX4252',
  serialNumber: BOARD_SERIAL(n),
  biosVersion: 'ex4252.bios-1.3.0',
  // No HealthRollup: the node's Warning is its own.
  status: {
    state: 'Enabled',
    health: 'Warning',
    healthRollup: undefined,
    conditions: [{ MessageId: 'HPENodeAlarms.1.0.VRMMismatchFailure', Message: 'There were 6 VRM configuration mismatches.', Severity: 'Warning', MessageArgs: ['6'] }],
  },
  processorSummary: { count: 2, model: 'AMD EPYC 9654 96-Core Processor' },
  memoryGiB: 384,
  processors: [{ id: 'CPU{n}', from: 0, count: 2, type: 'CPU', manufacturer: 'Advanced Micro Devices, Inc.', model: 'AMD EPYC 9654 96-Core Processor', cores: 96, threads: 192, maxSpeedMHz: 3700, status: { health: 'OK' } }],
  memory: [{ id: 'DIMM{n}', from: 0, count: 24, capacityMiB: 16384, memoryDeviceType: 'Other', manufacturer: 'Samsung', partNumber: 'M321R2GA3BB6-CQKVG', serialNumber: `037C9${n}{n}`, speedMHz: 4800, status: { state: 'Enabled' } }],
  ethernet: [{ id: 'ManagementEthernet', mac: `00:40:a6:96:a6:8${n}` }],
});

const nodeChassis = (n: number): ChassisSpec => ({
  id: `Node${n}`,
  name: `Node${n}`,
  chassisType: 'Blade',
  manufacturer: 'HPE',
  status: { state: 'Enabled', health: 'OK' },
  sensors: {
    thermal: { temperatures: nodeTemperatures, fans: [] },
    power: { supplies: [] },
    powerSubsystem: { supplies: [{ id: 'PowerSupply0', name: 'PowerSupply', status: { health: 'OK' } }] },
    // Node0's Sensors collection (the capture keeps only Node0's members): the temperatures are those of its legacy
    // Thermal again, so only the other readings are written here.
    ...(n === 0 ? { sensors: nodeSensors } : {}),
  },
  networkAdapters: [{ id: 'HPCNet{n}', from: 0, count: 2, name: 'HPCNet{n}', manufacturer: 'HPE-PRM', model: 'R4K44A', partNumber: 'P43012-001', serialNumber: `PR11455${n}H{n}` }],
  oem: { CrayVoltageMargins: { '@odata.id': `/redfish/v1/Chassis/Node${n}/Oem/CrayVoltageMargins` } },
});

/** Node0's power, energy, voltage and current sensors, by kind and count as its capture lists them. */
const nodeSensors: SensorSpec[] = [
  { id: 'CPU{n}SynthesizedEnergy', from: 0, count: 4, name: 'CPU{n} Aggregate', type: 'EnergyJoules', reading: 258_767_179 },
  { id: 'Node0SynthesizedEnergy{n}', from: 0, count: 3, name: 'Node Aggregate {n}', type: 'EnergyJoules', reading: 147_915_842 },
  { id: 'CPU{n}SynthesizedPower', from: 0, count: 4, name: 'CPU{n} Aggregate', type: 'Power', reading: 65 },
  { id: 'CPU0Memory{n}Power', from: 0, count: 12, name: 'CPU0dimm{n}', type: 'Power', reading: null },
  { id: 'CPU1Memory{n}Power', from: 0, count: 12, name: 'CPU1dimm{n}', type: 'Power', reading: null },
  { id: 'CPU0ReportedPower{n}', from: 0, count: 12, name: 'CPU0 Rail {n}', type: 'Power', reading: 9 },
  { id: 'CPU1ReportedPower{n}', from: 0, count: 13, name: 'CPU1 Rail {n}', type: 'Power', reading: 9 },
  { id: 'Node0Voltage{n}', from: 0, count: 36, name: 'Node0 Rail {n} Voltage', type: 'Voltage', reading: 1.1 },
  { id: 'Node0Current{n}', from: 0, count: 18, name: 'Node0 Rail {n} Current', type: 'Current', reading: 12 },
];

const mezz = (n: number): ChassisSpec => ({
  id: `Mezz${n}`,
  name: `Mezz${n}`,
  chassisType: 'Card',
  manufacturer: 'HPE',
  model: 'R4K44A',
  serialNumber: `PR114552G${n}`,
  powerState: 'On',
  status: { state: 'Enabled', health: 'OK' },
  sensors: {
    sensors: [
      { id: 'Board0ASIC{n}Temperature', from: 0, count: 2, name: 'Cassini {n} Temperature', type: 'Temperature', reading: 43 },
      { id: 'Board0DCBus{n}Voltage', from: 0, count: 2, name: 'NIC {n} PCIe 12.0V', type: 'Voltage', reading: 11.9 },
      { id: 'Board0SystemBoard0Temperature', name: 'PCB Temperature', type: 'Temperature', reading: 34 },
      { id: 'Board0SystemBoard1Temperature', name: 'uC Temperature', type: 'Temperature', reading: 29 },
      { id: 'Board0SystemBoard{n}Voltage', from: 2, count: 5, name: 'Rail {n}', type: 'Voltage', reading: 0.9 },
      { id: 'Board0Voltage', name: '5.0 FET DRV', type: 'Voltage', reading: 4.979 },
      { id: 'Board0VoltageRegulator{n}Current', from: 0, count: 2, name: 'VR {n} Current', type: 'Current', reading: 10 },
      { id: 'Board0VoltageRegulator{n}Power', from: 0, count: 2, name: 'VR {n} Power', type: 'Power', reading: 8 },
      { id: 'Board0VoltageRegulator{n}Temperature', from: 0, count: 2, name: 'VR {n} Temperature', type: 'Temperature', reading: 38 },
      { id: 'Board0VoltageRegulator{n}Voltage', from: 0, count: 2, name: 'VR {n}', type: 'Voltage', reading: 0.85 },
    ],
  },
});

const aux = (id: string) => ({ id, name: id, managerType: 'AuxiliaryController' as const, status: { health: 'OK' as const } });

export const hpeCrayEx4252: BmcProfile = {
  name: 'hpe_cray_ex4252',
  family: 'hpe',
  title: 'HPE Cray EX4252 blade, 4 nodes behind one nC controller (nc.1.8.3)',
  redfishVersion: '1.2.0',
  odataContext: false,
  serviceRoot: {},
  bmcFirmware: {
    version: 'nc.1.8.3-10-shasta-release.arm.2023-04-26T21:09:35+00:00.a8e719d',
    mix: [
      { version: 'nc.1.8.3-10-shasta-release.arm.2023-04-26T21:09:35+00:00.a8e719d', share: 0.9 },
      // The build the capture keeps in its Recovery slot.
      { version: 'nc.1.7.9-8-shasta-release.arm.2022-07-22T16:26:47+00:00.138c518', share: 0.1, stale: true },
    ],
  },
  systems: NODES.map(node),
  managers: [
    aux('MCU3'),
    { id: 'BMC', name: 'BMC', managerType: 'EnclosureManager', status: { state: 'Enabled', health: 'OK' }, managerForServers: ['Node2', 'Node1', 'Node3', 'Node0'] },
    aux('MCU0'),
    aux('MCU1'),
    aux('MCU2'),
  ],
  chassis: [
    mezz(1),
    nodeChassis(0),
    nodeChassis(3),
    {
      id: 'Enclosure',
      name: 'Enclosure',
      chassisType: 'Enclosure',
      manufacturer: 'HPE',
      model: 'HSSMEZZCARD',
      serialNumber: 'PR12348213',
      partNumber: 'P47016-003.A',
      status: { state: 'Enabled', health: 'OK' },
      sensors: {
        thermal: {
          temperatures: [
            { name: 'SIVOC CTLR2 Temperature', celsius: 33 },
            { name: 'NC TEMP SENSOR ambient Temperature', celsius: 27, upperCritical: 70 },
            { name: '12V_HSS ECB Temperature', celsius: 19 },
            { name: 'SIVOC CTLR0 Temperature', celsius: null },
            { name: 'NC TEMP SENSOR controller Temperature', celsius: 32, upperCritical: 90 },
          ],
          fans: [],
        },
        power: { supplies: [] },
        // Its Sensors collection repeats the temperatures; the other readings are these.
        sensors: [
          { id: 'ChassisVoltageRegulator{n}InputPower', from: 0, count: 3, name: 'Regulator {n} Input Power', type: 'Power', reading: 203 },
          { id: 'ChassisVoltageRegulator{n}Voltage', from: 0, count: 6, name: 'Regulator {n} Voltage', type: 'Voltage', reading: 11.8 },
          { id: 'ChassisVoltageRegulator{n}OutputCurrent', from: 0, count: 3, name: 'Regulator {n} Output Current', type: 'Current', reading: 17.2 },
        ],
      },
      oem: { Alarms: { '@odata.id': '/redfish/v1/Chassis/Enclosure/Oem/Alarms' }, TriggeredAlarms: [] },
    },
    mezz(3),
    nodeChassis(1),
    mezz(2),
    nodeChassis(2),
    mezz(0),
  ],
  firmwareInventory: {
    entries: [
      ...NODES.flatMap((n) => [
        { id: `Node${n}.BIOS`, version: 'ex4252.bios-1.3.0', updateable: true, softwareId: 'bios.ex4252.*.*' },
        { id: `Node${n}.HPCNet0`, version: '1.5.41', updateable: false },
        { id: `Node${n}.HPCNet1`, version: '1.5.41', updateable: false },
        { id: `Node${n}.ManagementEthernet`, version: n < 2 ? 'wnc.i210-p2sn01' : 'undefined', updateable: true, softwareId: 'Ethernet:i210:*:*' },
        { id: `Node${n}.PowerSupply0`, version: n < 2 ? '0.00' : '1.19', updateable: false },
      ]),
      { id: 'BMC', version: '{bmc}', updateable: true, softwareId: 'nc:*:*:*' },
      { id: 'Recovery', version: 'nc.1.7.9-8-shasta-release.arm.2022-07-22T16:26:47+00:00.138c518', updateable: true },
      { id: 'Bootloader', version: '1.11-ge900731124-hmc', updateable: false },
      { id: 'FPGA{n}', from: 0, count: 2, name: 'nFPGA{n}', version: '4.0a', updateable: false },
      { id: 'FPGA2', name: 'mFPGA0', version: '2.02', updateable: false },
      { id: 'FPGA3', name: 'mFPGA1', version: '2.02', updateable: false },
      { id: 'FPGA4', name: 'mFPGA2', version: '2.02', updateable: false },
      { id: 'FPGA5', name: 'mFPGA3', version: '2.02', updateable: false },
    ],
  },
  updateService: { simpleUpdate: true, simpleUpdateTarget: '/redfish/v1/UpdateService/Actions/SimpleUpdate', transferProtocols: ['HTTP', 'HTTPS'] },
  sessions: { limit: 4, timeoutS: 30 },
  errors: { sessionLimit: standardSessionLimit('Base.1.4'), unauthorized: standardNoValidSession('Base.1.4') },
  latency: { averageMs: 456, minimumMs: 95, maximumMs: 15_300, slowestPath: '/redfish/v1/TaskService' },
  // The OEM links lead to collections (voltage rails, alarms); their members are not modelled.
  overrides: {
    ...Object.fromEntries(
      NODES.map((n) => [`/redfish/v1/Chassis/Node${n}/Oem/CrayVoltageMargins`, { '@odata.id': `/redfish/v1/Chassis/Node${n}/Oem/CrayVoltageMargins`, '@odata.type': '#CrayVoltageMargins.VoltageRailsCollection', Name: 'Voltage Margins Rail Collection', Members: [], 'Members@odata.count': 0 }]),
    ),
    '/redfish/v1/Chassis/Enclosure/Oem/Alarms': { '@odata.id': '/redfish/v1/Chassis/Enclosure/Oem/Alarms', '@odata.type': '#AlarmCollection.AlarmCollection', Name: 'Alarm Collection', Members: [], 'Members@odata.count': 0 },
  },
  inDefaultFleet: false,
  heldAgainst: 'redfish-more/hpe_cray_ex4252',
};
