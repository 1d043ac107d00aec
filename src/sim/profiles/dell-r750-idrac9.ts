/**
 * Dell PowerEdge R750 (15G) with iDRAC9, firmware 6.x, one PCIe H100 and a BlueField-2 in slot 5.
 *
 * Facts of this model's tree: FQDD ids (`System.Embedded.1`, `iDRAC.Embedded.1`, `CPU.Socket.N`,
 * `DIMM.Socket.A1`, `Video.Slot.2-1` for the PCIe GPU, which is a Processor with `ProcessorType: GPU`); a `Dell`
 * OEM namespace on the root, system, manager and chassis; the root carries `Vendor: Dell` and the service tag;
 * the main chassis has legacy `Thermal`/`Power` AND a `Sensors` collection AND `PowerSubsystem`/`ThermalSubsystem`;
 * the firmware inventory lists `Installed-<softwareId>-<version>__<FQDD>` with `Current-` and `Previous-` copies;
 * `MaxConcurrentSessions` is only on the manager's console services (CommandShell 5, GraphicalConsole 6); a full
 * session table answers 503 RAC0218 (registry IDRAC.2.1 on this firmware, IDRAC.2.4 on 7.x). Average answer 190 ms; the SEL takes 18 s.
 */
import type { BmcProfile } from './bmc-profile.ts';
import { idracSessionLimit, standardNoValidSession } from './error-bodies.ts';

const SYSTEM = 'System.Embedded.1';
const IDRAC = 'iDRAC.Embedded.1';
const TAG = 'H7QK2M3';

export const dellR750Idrac9: BmcProfile = {
  name: 'dell',
  family: 'dell',
  title: 'Dell PowerEdge R750, iDRAC9 6.x',
  redfishVersion: '1.13.1',
  odataContext: true,
  serviceRoot: {
    vendor: 'Dell',
    product: 'Integrated Dell Remote Access Controller',
    oem: { Dell: { '@odata.type': '#DellServiceRoot.v1_0_0.DellServiceRoot', IsBranded: 0, ManagerMACAddress: 'c4:5a:b1:3e:20:10', ServiceTag: TAG } },
    expandQuery: { ExpandAll: true, Levels: true, Links: true, MaxLevels: 1, NoLinks: true },
  },
  bmcFirmware: {
    version: '6.00.30.00',
    mix: [
      { version: '6.00.30.00', share: 0.6 },
      { version: '7.10.30.00', share: 0.3 },
      { version: '5.10.50.00', share: 0.08 },
      { version: '4.40.00.00', share: 0.02, stale: true },
    ],
  },
  systems: [
    {
      id: SYSTEM,
      manufacturer: 'Dell Inc.',
      model: 'PowerEdge R750',
      sku: TAG,
      serialNumber: 'CNFCP0021K0117',
      uuid: '4c4c4544-0037-5110-804b-c8c04f4d3233',
      biosVersion: '1.8.2',
      processorSummary: { count: 2, model: 'Intel(R) Xeon(R) Gold 6354 CPU @ 3.00GHz' },
      memoryGiB: 512,
      processors: [
        { id: 'CPU.Socket.{n}', count: 2, type: 'CPU', manufacturer: 'Intel', model: 'Intel(R) Xeon(R) Gold 6354 CPU @ 3.00GHz', cores: 18, threads: 36, maxSpeedMHz: 4000 },
        { id: 'Video.Slot.2-1', type: 'GPU', manufacturer: 'NVIDIA Corporation', model: 'NVIDIA H100 PCIe', serialNumber: '1320823011542' },
      ],
      memory: [
        { id: 'DIMM.Socket.A{n}', count: 8, capacityMiB: 32768, memoryDeviceType: 'DDR4', manufacturer: 'Micron Technology', partNumber: '18ASF4G72PDZ-3G2E1', serialNumber: '3A41C0{n}7', speedMHz: 3200 },
        { id: 'DIMM.Socket.B{n}', count: 8, capacityMiB: 32768, memoryDeviceType: 'DDR4', manufacturer: 'Micron Technology', partNumber: '18ASF4G72PDZ-3G2E1', serialNumber: '3A41D1{n}9', speedMHz: 3200 },
      ],
      ethernet: [
        { id: 'NIC.Embedded.{n}-1-1', count: 2, mac: '70:B5:E8:A1:30:40' },
        { id: 'NIC.Integrated.1-{n}-1', count: 2, mac: 'E4:3D:1A:52:7C:10' },
        { id: 'NIC.Slot.5-1', mac: 'B8:3F:D2:6E:21:08' },
      ],
      chassis: [SYSTEM],
      managedBy: [IDRAC],
      oem: { Dell: { '@odata.type': '#DellOem.v1_3_0.DellOemResources', DellSystem: { '@odata.type': '#DellSystem.v1_3_0.DellSystem', ChassisServiceTag: TAG, SystemGeneration: '15G Monolithic' } } },
    },
  ],
  managers: [
    {
      id: IDRAC,
      managerType: 'BMC',
      model: '15G Monolithic',
      firmwareDisplay: '{bmc}',
      uuid: '334d4d4f-c0c8-4b80-5110-00374c4c4544',
      consoles: { CommandShell: 5, GraphicalConsole: 6, SerialConsole: 0 },
      ethernet: [{ id: 'NIC.1', mac: 'c4:5a:b1:3e:20:10' }],
      hostName: `idrac-${TAG}`,
      managerForServers: [SYSTEM],
      managerForChassis: [SYSTEM],
      logServices: [
        {
          id: 'Sel',
          logEntryType: 'SEL',
          maxRecords: 1024,
          entries: [
            { id: '1024', created: '2024-06-11T00:13:00-05:00', severity: 'OK', entryCode: 'Assert', sensorNumber: 26, messageId: '7e012790', message: 'An OEM diagnostic event occurred.' },
            { id: '1023', created: '2024-06-11T00:13:00-05:00', severity: 'OK', entryCode: 'Assert', sensorNumber: 26, messageId: '7e012602', message: 'An OEM diagnostic event occurred.' },
          ],
        },
        { id: 'FaultList', logEntryType: 'SEL', maxRecords: 500000, entries: [] },
        { id: 'Lclog', logEntryType: 'OEM', maxRecords: 500000, entries: [] },
      ],
      oem: { Dell: { '@odata.type': '#DellOem.v1_3_0.DellOemResources', DelliDRACCard: { '@odata.type': '#DelliDRACCard.v1_1_0.DelliDRACCard', IPMIVersion: '2.0' } } },
    },
  ],
  chassis: [
    {
      id: SYSTEM,
      name: 'Computer System Chassis',
      chassisType: 'RackMount',
      manufacturer: 'Dell Inc.',
      model: 'PowerEdge R750',
      serialNumber: 'CNFCP0021K0117',
      partNumber: '0WMWCRA01',
      sku: TAG,
      uuid: '4c4c4544-0037-5110-804b-c8c04f4d3233',
      powerState: 'On',
      status: { state: 'Enabled', health: 'OK', healthRollup: 'OK' },
      computerSystems: [SYSTEM],
      managedBy: [IDRAC],
      sensors: {
        thermal: {
          temperatures: [
            { name: 'CPU{n} Temp', count: 2, celsius: 38, upperCritical: 99 },
            { name: 'System Board Inlet Temp', celsius: 24, upperCritical: 42 },
            { name: 'System Board GPU2 Temp', celsius: 35, upperCritical: null },
            { name: 'System Board Exhaust Temp', celsius: 32, upperCritical: 80 },
          ],
          fans: [{ name: 'System Board Fan{n}A', count: 6, reading: 18600, units: 'RPM' }],
        },
        power: {
          consumedWatts: 602,
          supplies: [
            { id: '{n}', count: 2, name: 'PS{n} Status', model: 'PWR SPLY,2400W,RDNT,ARTESYN', manufacturer: 'DELL', serialNumber: 'PHARP0031B00{n}7', firmwareVersion: '00.2A.2B', capacityWatts: 2400, outputWatts: 276 },
          ],
        },
        sensors: [
          { id: 'PS{n}Current{n}', count: 2, name: 'PS{n} Current {n}', type: 'Current', reading: 1.4 },
          { id: 'PS{n}Voltage', count: 2, name: 'PS{n} Voltage {n}', type: 'Voltage', reading: 240 },
          { id: 'SystemBoardPwrConsumption', name: 'System Board Pwr Consumption', type: 'Power', reading: 602 },
          { id: 'CPU{n}Temp', count: 2, name: 'CPU{n} Temp', type: 'Temperature', reading: 38 },
          { id: 'SystemBoardInletTemp', name: 'System Board Inlet Temp', type: 'Temperature', reading: 24 },
          { id: 'Fan.Embedded.{n}A', count: 6, name: 'System Board Fan{n}A', type: 'Rotational', reading: 18600 },
          { id: 'PSU.Slot.{n}_InputPower', count: 2, name: 'InputPowerSensor', type: 'Power', reading: 305 },
          { id: 'PSU.Slot.{n}_OutputPower', count: 2, name: 'OutputPowerSensor', type: 'Power', reading: 274 },
          { id: 'PSU.Slot.{n}_MaximumFrequency', count: 2, name: 'MaximumFrequencySensor', type: 'Frequency', reading: 35 },
          { id: 'SystemBoardGPU2Temp', name: 'System Board GPU2 Temp', type: 'Temperature', reading: 35 },
          { id: 'SystemBoardExhaustTemp', name: 'System Board Exhaust Temp', type: 'Temperature', reading: 32 },
          { id: 'Temperature.DIMM_MAX', name: 'Max DIMM Temperature', type: 'Temperature', reading: 31 },
          { id: 'CPU{n}MEM0123VR', count: 2, name: 'CPU{n} MEM0123 VR', type: 'Voltage', reading: 1.22 },
          { id: 'CPU{n}MEM4567VR', count: 2, name: 'CPU{n} MEM4567 VR', type: 'Voltage', reading: 1.22 },
          { id: 'CPU{n}VCOREVR', count: 2, name: 'CPU{n} VCORE VR', type: 'Voltage', reading: 1.8 },
          { id: 'SystemBoardIOUsage', name: 'System Board IO Usage', type: 'Percent', reading: 0 },
          { id: 'SystemBoardSYSUsage', name: 'System Board SYS Usage', type: 'Percent', reading: 0 },
          { id: 'SystemBoardCPUUsage', name: 'System Board CPU Usage', type: 'Percent', reading: 0 },
          { id: 'SystemBoardMEMUsage', name: 'System Board MEM Usage', type: 'Percent', reading: 0 },
        ],
        powerSubsystem: { capacityWatts: 4800, supplies: [{ id: 'PSU.Slot.{n}', count: 2, name: 'PS{n} Status', model: 'PWR SPLY,2400W,RDNT,ARTESYN', manufacturer: 'DELL', firmwareVersion: '00.2A.2B', capacityWatts: 2400 }] },
        thermalSubsystem: { fans: [{ id: 'Fan.Embedded.{n}A', count: 6, name: 'System Board Fan{n}A', reading: 18600, units: 'RPM' }] },
      },
      networkAdapters: [
        { id: 'NIC.Embedded.1', name: 'Network Adapter View', manufacturer: 'Broadcom Inc. and subsidiaries' },
        { id: 'NIC.Integrated.1', name: 'Network Adapter View', manufacturer: 'Broadcom Inc. and subsidiaries', model: 'BRCM 2P 25G SFP 57414S OCP NIC', serialNumber: 'VNFCV1B23K00QF', partNumber: '0KHCTP' },
        { id: 'NIC.Slot.5', name: 'Network Adapter View', manufacturer: 'Mellanox Technologies', model: 'BlueField-2 SmartNIC Main Card', serialNumber: 'MT2251X10QBZ', partNumber: 'MBF2H5', status: { state: 'Enabled' } },
        { id: 'InfiniBand.Slot.7', name: 'Network Adapter View', manufacturer: 'Mellanox Technologies' },
      ],
      pcieDevices: [
        { id: '23-0', name: 'NVIDIA Corporation', deviceType: 'SingleFunction', manufacturer: 'NVIDIA Corporation' },
        { id: '177-0', name: 'MT42822 BlueField-2 integrated ConnectX-6 Dx network controller', deviceType: 'SingleFunction', manufacturer: 'Mellanox Technologies', firmwareVersion: '24.40.10.00' },
        { id: '49-0', name: 'BCM57414 NetXtreme-E 10Gb/25Gb RDMA Ethernet Controller', deviceType: 'MultiFunction', manufacturer: 'Broadcom Inc. and subsidiaries', firmwareVersion: '21.80.16.95' },
      ],
      oem: { Dell: { '@odata.type': '#DellOem.v1_3_0.DellOemResources' } },
    },
    {
      id: 'Enclosure.Internal.0-1',
      name: 'PCIe SSD Backplane 1',
      chassisType: 'StorageEnclosure',
      model: 'PCIe SSD Backplane 1',
      powerState: 'On',
      status: { state: 'Enabled', health: 'OK', healthRollup: 'OK' },
      managedBy: [IDRAC],
      pcieDevices: [{ id: '{n}-0', from: 228, count: 3, name: 'Dell Ent NVMe CM6 RI 1.92TB', deviceType: 'SingleFunction', manufacturer: 'KIOXIA Corporation', serialNumber: 'PHTBP2K{n}A03', firmwareVersion: '2.1.3' }],
    },
  ],
  firmwareInventory: {
    entries: [
      { id: 'Current-107649-3.48__RAID.Backplane.Firmware.1', name: 'Backplane 1', version: '3.48', updateable: true, softwareId: '107649' },
      { id: 'Current-108089-21.80.16.95__NIC.Integrated.1-{n}-1', count: 2, name: 'Broadcom Adv. Dual 25Gb Ethernet', version: '21.80.16.95', updateable: true, softwareId: '108089' },
      { id: 'Current-108255-21.80.9__NIC.Embedded.{n}-1-1', count: 2, name: 'Broadcom Gigabit Ethernet BCM5720', version: '21.80.9', updateable: true, softwareId: '108255' },
      { id: 'Current-159-1.8.2__BIOS.Setup.1-1', name: 'BIOS', version: '1.8.2', updateable: true, softwareId: '159' },
      { id: 'Installed-0-2.1.3__Disk.Bay.{n}:Enclosure.Internal.0-1', from: 0, count: 3, name: 'PCIe SSD in Slot {n} in Bay 1', version: '2.1.3', updateable: true, softwareId: '0' },
      { id: 'Installed-0-20.31.10.14__InfiniBand.Slot.7-{n}', count: 2, name: 'Mellanox ConnectX-6 Dual Port 10 GbE QSFP Network Adapter', version: '20.31.10.14', updateable: true, softwareId: '0' },
      { id: 'Installed-0-24.40.10.00__NIC.Slot.5-1', name: 'Mellanox Network Adapter', version: '24.40.10.00', updateable: true, softwareId: '0' },
      { id: 'Installed-104684-4.0.1__ServiceModule.Embedded.1', name: 'Dell EMC iDRAC Service Module Embedded Package v4.0.1, A00', version: '4.0.1', updateable: true, softwareId: '104684' },
      { id: 'Installed-107649-3.48__RAID.Backplane.Firmware.1', name: 'Backplane 1', version: '3.48', updateable: true, softwareId: '107649' },
      { id: 'Installed-108076-00.2A.2B__PSU.Slot.{n}', count: 2, name: 'Power Supply.Slot.{n}', version: '00.2A.2B', updateable: true, softwareId: '108076' },
      { id: 'Installed-108089-21.80.16.95__NIC.Integrated.1-{n}-1', count: 2, name: 'Broadcom Adv. Dual 25Gb Ethernet', version: '21.80.16.95', updateable: true, softwareId: '108089' },
      { id: 'Installed-108255-21.80.9__NIC.Embedded.{n}-1-1', count: 2, name: 'Broadcom Gigabit Ethernet BCM5720', version: '21.80.9', updateable: true, softwareId: '108255' },
      { id: 'Installed-109673-7.2.2.0__TPM.Integrated.1-1', name: 'TPM', version: '7.2.2.0', updateable: true, softwareId: '109673' },
      { id: 'Installed-159-1.8.2__BIOS.Setup.1-1', name: 'BIOS', version: '1.8.2', updateable: true, softwareId: '159' },
      { id: 'Installed-18981-21.03.10__DriverPack.Embedded.1:LC.Embedded.1', name: 'Dell OS Driver Pack, 21.03.10, A00', version: '21.03.10', updateable: true, softwareId: '18981' },
      { id: 'Installed-25227-{bmc}__iDRAC.Embedded.1-1', name: 'Integrated Dell Remote Access Controller', version: '{bmc}', updateable: true, softwareId: '25227' },
      { id: 'Installed-25806-4301A56__Diagnostics.Embedded.1:LC.Embedded.1', name: 'Dell 64 Bit uEFI Diagnostics, version 4301, 4301A56, 4301.57', version: '4301A56', updateable: true, softwareId: '25806' },
      { id: 'Installed-27763-1.0.5__CPLD.Embedded.1', name: 'System CPLD', version: '1.0.5', updateable: true, softwareId: '27763' },
      { id: 'Installed-28897-{bmc}__USC.Embedded.1:LC.Embedded.1', name: 'Lifecycle Controller', version: '{bmc}', updateable: true, softwareId: '28897' },
      { id: 'Previous-159-1.2.4__BIOS.Setup.1-1', name: 'BIOS', version: '1.2.4', updateable: true, softwareId: '159' },
      { id: 'Previous-25227-4.40.29.00__iDRAC.Embedded.1-1', name: 'Integrated Dell Remote Access Controller', version: '4.40.29.00', updateable: true, softwareId: '25227' },
    ],
  },
  updateService: { simpleUpdate: true, httpPushUri: true, multipartHttpPushUri: true, transferProtocols: ['HTTP', 'NFS', 'CIFS', 'TFTP', 'HTTPS'] },
  sessions: { limit: 8, timeoutS: 1800 },
  errors: { sessionLimit: idracSessionLimit('IDRAC.2.1', 'Base.1.5'), unauthorized: standardNoValidSession('Base.1.8') },
  latency: { averageMs: 190, minimumMs: 96, maximumMs: 18_000, slowestPath: '/redfish/v1/Managers/iDRAC.Embedded.1/LogServices/Sel/Entries' },
  slowResources: [{ pattern: '^/redfish/v1/UpdateService/FirmwareInventory$', latencyMs: 20_000 }],
  heldAgainst: 'redfish/dell',
};
