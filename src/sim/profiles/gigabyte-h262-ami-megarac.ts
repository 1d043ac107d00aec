/**
 * Gigabyte H262-Z63 node (2x AMD EPYC 7702) with AMI MegaRAC SP-X 12.84.
 *
 * Facts of this model's tree: the root says `Vendor: AMI`, `Product: AMI Redfish Server` whatever the board maker,
 * with OEM namespaces `Ami`, `Dre` and `Vendor`; System, Manager and Chassis are all `Self`; the chassis adds the
 * board maker's own namespace (`GBTChassisOemProperty`); the Manager has no Manufacturer, a numeric Model and
 * `FirmwareVersion` `12.84.13` (the same string in `FirmwareInventory/BMC`); BIOS is `C27`; the firmware inventory
 * is three entries (BMC, MB_CPLD1 `ff`, BIOS), all `Updateable`; SimpleUpdate's target is
 * `UpdateService/Actions/SimpleUpdate` (not `.../UpdateService.SimpleUpdate`); legacy Thermal (20 temperatures, no
 * fans) and Power (two supplies named `nil` with no Status, 100 W consumed); the console limits are
 * CommandShell 0, GraphicalConsole 2, SerialConsole 1; SessionTimeout 30 s; SEL-typed logs under the System
 * (`BIOS`), the Manager (`SEL`) and the Chassis (`Logs`, empty), entries with `AmiIpmiOem.1.0.GeneralEventData`
 * and the raw event data as the message. No capture README: latency is assumed.
 */
import type { BmcProfile, LogEntrySpec } from './bmc-profile.ts';
import { standardNoValidSession, standardSessionLimit } from './error-bodies.ts';

const ami = (id: string, created: string, sensorType: string, sensorNumber: number, message: string): LogEntrySpec => ({
  id, created, severity: 'OK', entryType: 'SEL', entryCode: 'Assert', sensorType, sensorNumber, messageId: 'AmiIpmiOem.1.0.GeneralEventData', message,
});

export const gigabyteH262AmiMegarac: BmcProfile = {
  name: 'gigabyte_ami',
  family: 'unknown',
  title: 'Gigabyte H262-Z63 node, AMI MegaRAC SP-X 12.84',
  redfishVersion: '1.7.0',
  odataContext: true,
  serviceRoot: {
    vendor: 'AMI',
    product: 'AMI Redfish Server',
    uuid: '009ea76e-debf-0010-e803-b42e99bade17',
    oem: {
      Ami: { '@odata.type': '#AMIServiceRoot.v1_0_0.AMIServiceRoot', RtpVersion: '1.7.0' },
      Dre: { '@odata.type': '#AMIDynamicExtension.v1_0_0.AMIDynamicExtension' },
      Vendor: { '@odata.type': '#VendorServiceRoot.v1_0_0.VendorServiceRoot', VendorVersion: '1.7.0.001' },
    },
    expandQuery: { ExpandAll: true, Levels: true, Links: true, MaxLevels: 5, NoLinks: true },
  },
  bmcFirmware: {
    version: '12.84.13',
    mix: [
      { version: '12.84.13', share: 0.7 },
      { version: '12.61.21', share: 0.25 },
      { version: '12.01.07', share: 0.05, stale: true },
    ],
  },
  systems: [
    {
      id: 'Self',
      manufacturer: 'GIGABYTE',
      model: 'H262-Z63-00',
      sku: '01234567890123456789AB',
      serialNumber: 'GJG9NF512A000302',
      uuid: 'e9184000-7983-11ec-8000-b42e99bade15',
      biosVersion: 'C27',
      status: { state: 'Enabled', health: 'OK', healthRollup: 'OK' },
      processorSummary: { count: 2, model: 'AMD EPYC 7702 64-Core Processor                ' },
      memoryGiB: 244,
      processors: [{ id: '{n}', count: 2, type: 'CPU', manufacturer: 'Advanced Micro Devices, Inc.', model: 'AMD EPYC 7702 64-Core Processor                ', cores: 64, threads: 128, maxSpeedMHz: 3350 }],
      memory: [{ id: '{n}', count: 16, capacityMiB: 15625, memoryDeviceType: 'DDR4', manufacturer: 'Samsung', partNumber: 'M393A2K43DB2-CWE    ', serialNumber: '12BBD2{n}F', speedMHz: 3200 }],
      ethernet: [{ id: '{n}', count: 2, mac: 'B4:2E:99:BA:DE:15' }],
      chassis: ['Self'],
      managedBy: ['Self'],
      logServices: [
        {
          id: 'BIOS',
          logEntryType: 'SEL',
          maxRecords: 150,
          entries: [
            ami('319', '2022-03-09T20:03:03+00:00', 'System Event', 0, '0x0500FF'),
            ami('320', '2022-03-09T20:03:03+00:00', 'System Event', 0, '0x0580FF'),
            ami('321', '2022-03-09T20:03:03+00:00', 'BaseOSBoot/InstallationStatus', 34, '0x06FFFF'),
          ],
        },
      ],
    },
  ],
  managers: [
    {
      id: 'Self',
      managerType: 'BMC',
      model: '410810600',
      firmwareDisplay: '{bmc}',
      uuid: '009ea76e-debf-0010-e803-b42e99bade17',
      consoles: { CommandShell: 0, GraphicalConsole: 2, SerialConsole: 1 },
      ethernet: [{ id: 'bond0', mac: 'B4:2E:99:BA:DE:17' }],
      managerForServers: ['Self'],
      managerForChassis: ['Self'],
      logServices: [
        {
          id: 'SEL',
          logEntryType: 'SEL',
          maxRecords: 150,
          entries: [
            ami('1', '2022-03-09T20:02:22+00:00', 'Processor', 228, '0x07FFFF'),
            ami('2', '2022-03-09T20:02:23+00:00', 'Processor', 229, '0x07FFFF'),
            ami('3', '2022-03-09T20:02:23+00:00', 'Version Change', 0, '0x010C54'),
          ],
        },
        { id: 'EventLog', logEntryType: 'Event', maxRecords: 150, entries: [] },
      ],
    },
  ],
  chassis: [
    {
      id: 'Self',
      name: 'Computer System Chassis',
      chassisType: 'RackMount',
      manufacturer: 'GIGABYTE',
      model: 'H262-Z63-00',
      serialNumber: '01234567890123456789AB',
      partNumber: '01234567',
      sku: '01234567890123456789AB',
      uuid: '009ea76e-debf-0010-e803-b42e99bade17',
      powerState: 'On',
      status: { state: 'Enabled', health: 'OK', healthRollup: 'OK' },
      computerSystems: ['Self'],
      managedBy: ['Self'],
      sensors: {
        thermal: {
          temperatures: [
            { name: 'CPU{n}_TEMP', from: 0, count: 2, celsius: 42, upperCritical: 100 },
            { name: 'DIMMG{n}_TEMP', from: 0, count: 4, celsius: 31, upperCritical: 87 },
            { name: 'MB_TEMP{n}', count: 2, celsius: 37, upperCritical: 90 },
            { name: 'CPU{n}_DTS', from: 0, count: 2, celsius: 58, upperCritical: null },
            { name: 'VR_P{n}_TEMP', from: 0, count: 2, celsius: 31, upperCritical: 120 },
            { name: 'VR_DIMMG{n}_TEMP', from: 0, count: 4, celsius: 35, upperCritical: 120 },
            { name: 'M2_G0_AMB_TEMP', celsius: 36, upperCritical: 96 },
            { name: 'M2_G{n}_AMB_TEMP', count: 2, celsius: null, upperCritical: 96 },
            { name: 'OCP20_TEMP', celsius: null, upperCritical: 105 },
          ],
          fans: [],
        },
        power: { consumedWatts: 100, supplies: [{ id: '{n}', from: 0, count: 2, name: 'nil', status: { omit: true } }] },
        // Beside the legacy resources, a Sensors collection with the board's power and energy monitors.
        sensors: [
          { id: 'Power', name: 'Power Consumption Monitor', type: 'Power', reading: 100 },
          { id: 'Energy', name: 'Power Energy Monitor', type: 'EnergyJoules', reading: 4_718_592 },
        ],
      },
      logServices: [{ id: 'Logs', logEntryType: 'SEL', maxRecords: 150, entries: [] }],
      oem: { GBTChassisOemProperty: { '@odata.type': '#GBTChassisOemProperty.v1_0_0.GBTChassisOemProperty', 'Board Serial Number': 'JG8NG900142' } },
    },
  ],
  firmwareInventory: {
    entries: [
      { id: 'BMC', name: 'BMC', version: '{bmc}', updateable: true, status: { omit: true } },
      { id: 'MB_CPLD1', name: 'MB_CPLD1', version: 'ff', updateable: true, status: { omit: true } },
      { id: 'BIOS', name: 'BIOS', version: 'C27', updateable: true, status: { omit: true } },
    ],
  },
  updateService: { simpleUpdate: true, simpleUpdateTarget: '/redfish/v1/UpdateService/Actions/SimpleUpdate', transferProtocols: ['HTTP', 'HTTPS'] },
  sessions: { limit: 4, timeoutS: 30 },
  errors: { sessionLimit: standardSessionLimit(), unauthorized: standardNoValidSession() },
  latency: { averageMs: 250, minimumMs: 80, maximumMs: 4_000 },
  inDefaultFleet: false,
  heldAgainst: 'redfish-more/gigabyte_ami',
};
