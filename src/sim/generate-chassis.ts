/**
 * The chassis of a generated Redfish tree: the chassis resource, its sensors (legacy `Thermal`/`Power`, a `Sensors`
 * collection, `EnvironmentMetrics`, the newer power and thermal subsystems), network adapters and PCIe devices.
 */
import type { AdapterSpec, ChassisSpec, PcieDeviceSpec, PowerSupplySpec, SensorSpec } from './profiles/bmc-profile.ts';
import { writeLogServices } from './generate-log-services.ts';
import { expandRepeated, status, withoutUndefined, type Body, type TreeWriter } from './tree-writing.ts';

const UNITS: Partial<Record<SensorSpec['type'], string>> = {
  Temperature: 'Cel',
  Rotational: 'RPM',
  Power: 'W',
  Voltage: 'V',
  Current: 'A',
  EnergyJoules: 'J',
  Percent: '%',
  Frequency: 'MHz',
  Humidity: '%',
  AirFlow: 'ft3/min',
  LiquidFlow: 'L/min',
  Pressure: 'Pa',
};

function powerSupplyBody(supply: PowerSupplySpec): Body {
  return {
    Name: supply.name,
    Model: supply.model,
    Manufacturer: supply.manufacturer,
    SerialNumber: supply.serialNumber,
    FirmwareVersion: supply.firmwareVersion,
    PowerCapacityWatts: supply.capacityWatts,
    LastPowerOutputWatts: supply.outputWatts,
    Status: status(supply.status),
  };
}

export function writeChassis(
  writer: TreeWriter,
  chassis: ChassisSpec,
  path: string,
  uuidOf: (path: string, given?: boolean | string) => string | undefined,
  systemPath: (id: string) => string,
  managerPath: (id: string) => string,
): void {
  const sensors = chassis.sensors ?? {};
  const sensorList = expandRepeated(sensors.sensors);
  const adapters = expandRepeated<AdapterSpec>(chassis.networkAdapters);
  const pcie = expandRepeated<PcieDeviceSpec>(chassis.pcieDevices);
  writer.resource(path, 'Chassis', 'v1_16_0', {
    Id: chassis.id,
    Name: chassis.name ?? chassis.id,
    ChassisType: chassis.chassisType,
    Manufacturer: chassis.manufacturer,
    Model: chassis.model,
    SerialNumber: chassis.serialNumber,
    PartNumber: chassis.partNumber,
    SKU: chassis.sku,
    UUID: uuidOf(path, chassis.uuid),
    PowerState: chassis.powerState,
    Status: status(chassis.status),
    Thermal: sensors.thermal ? writer.link(`${path}/Thermal`) : undefined,
    Power: sensors.power ? writer.link(`${path}/Power`) : undefined,
    Sensors: sensorList.length > 0 ? writer.link(`${path}/Sensors`) : undefined,
    EnvironmentMetrics: sensors.environmentMetrics ? writer.link(`${path}/EnvironmentMetrics`) : undefined,
    PowerSubsystem: sensors.powerSubsystem ? writer.link(`${path}/PowerSubsystem`) : undefined,
    ThermalSubsystem: sensors.thermalSubsystem ? writer.link(`${path}/ThermalSubsystem`) : undefined,
    NetworkAdapters: adapters.length > 0 ? writer.link(`${path}/NetworkAdapters`) : undefined,
    PCIeDevices: pcie.length > 0 ? writer.link(`${path}/PCIeDevices`) : undefined,
    LogServices: writeLogServices(writer, path, chassis.logServices),
    Links: {
      ComputerSystems: writer.links((chassis.computerSystems ?? []).map(systemPath)),
      ManagedBy: writer.links((chassis.managedBy ?? []).map(managerPath)),
    },
    Oem: chassis.oem,
  });

  if (sensors.thermal) writeLegacyThermal(writer, path, sensors.thermal);
  if (sensors.power) writeLegacyPower(writer, path, sensors.power);
  if (sensorList.length > 0) writeSensorCollection(writer, path, sensorList);
  if (sensors.environmentMetrics) writeEnvironmentMetrics(writer, path, sensors.environmentMetrics);
  if (sensors.powerSubsystem) writePowerSubsystem(writer, path, sensors.powerSubsystem);
  if (sensors.thermalSubsystem) writeThermalSubsystem(writer, path, sensors.thermalSubsystem);
  if (adapters.length > 0) writeNetworkAdapters(writer, path, adapters);
  if (pcie.length > 0) writePcieDevices(writer, path, pcie);
}

type SensorsSpec = NonNullable<ChassisSpec['sensors']>;

/** The legacy `Thermal` resource: temperatures and fans. */
function writeLegacyThermal(writer: TreeWriter, path: string, thermal: NonNullable<SensorsSpec['thermal']>): void {
  const temperatures = expandRepeated(thermal.temperatures);
  const fans = expandRepeated(thermal.fans);
  writer.resource(`${path}/Thermal`, 'Thermal', 'v1_7_0', {
    Id: 'Thermal',
    Name: 'Thermal',
    Temperatures: temperatures.map((t, index) =>
      withoutUndefined({
        '@odata.id': `${path}/Thermal#/Temperatures/${index}`,
        MemberId: String(index),
        Name: t.name,
        ReadingCelsius: t.celsius,
        UpperThresholdCritical: t.upperCritical,
        Status: status(t.status),
      }),
    ),
    Fans: fans.map((f, index) =>
      withoutUndefined({
        '@odata.id': `${path}/Thermal#/Fans/${index}`,
        MemberId: String(index),
        [f.nameKey ?? 'Name']: f.name,
        Reading: f.reading,
        ReadingUnits: f.units,
        Status: status(f.status),
      }),
    ),
  });
}

/** The legacy `Power` resource: power control and supplies. */
function writeLegacyPower(writer: TreeWriter, path: string, power: NonNullable<SensorsSpec['power']>): void {
  const supplies = expandRepeated(power.supplies);
  writer.resource(`${path}/Power`, 'Power', 'v1_7_0', {
    Id: 'Power',
    Name: 'Power',
    PowerControl:
      power.consumedWatts === undefined
        ? []
        : [{ '@odata.id': `${path}/Power#/PowerControl/0`, MemberId: '0', Name: 'System Power Control', PowerConsumedWatts: power.consumedWatts }],
    PowerSupplies: supplies.map((supply, index) =>
      withoutUndefined({ '@odata.id': `${path}/Power#/PowerSupplies/${index}`, MemberId: supply.id, ...powerSupplyBody(supply) }),
    ),
  });
}

/** The `Sensors` collection and its members. */
function writeSensorCollection(writer: TreeWriter, path: string, sensorList: Array<NonNullable<SensorsSpec['sensors']>[number]>): void {
  writer.collection(`${path}/Sensors`, 'SensorCollection', 'Sensors', sensorList.map((s) => `${path}/Sensors/${s.id}`));
  for (const sensor of sensorList) {
    writer.resource(`${path}/Sensors/${sensor.id}`, 'Sensor', 'v1_6_0', {
      Id: sensor.id,
      Name: sensor.name,
      ReadingType: sensor.type,
      Reading: sensor.reading,
      ReadingUnits: sensor.units ?? UNITS[sensor.type] ?? null,
      Status: status(sensor.status),
    });
  }
}

/** `EnvironmentMetrics`: power and temperature excerpts. */
function writeEnvironmentMetrics(writer: TreeWriter, path: string, environmentMetrics: NonNullable<SensorsSpec['environmentMetrics']>): void {
  const metrics = environmentMetrics;
  writer.resource(`${path}/EnvironmentMetrics`, 'EnvironmentMetrics', 'v1_3_0', {
    Id: 'EnvironmentMetrics',
    Name: 'Environment Metrics',
    PowerWatts: metrics.powerWatts === undefined ? undefined : { Reading: metrics.powerWatts },
    TemperatureCelsius: metrics.temperatureCelsius === undefined ? undefined : { Reading: metrics.temperatureCelsius },
  });
}

/** `PowerSubsystem` and its PowerSupplies collection. */
function writePowerSubsystem(writer: TreeWriter, path: string, powerSubsystem: NonNullable<SensorsSpec['powerSubsystem']>): void {
  const supplies = expandRepeated(powerSubsystem.supplies);
  writer.resource(`${path}/PowerSubsystem`, 'PowerSubsystem', 'v1_1_0', {
    Id: 'PowerSubsystem',
    Name: 'Power Subsystem',
    CapacityWatts: powerSubsystem.capacityWatts,
    PowerSupplies: writer.link(`${path}/PowerSubsystem/PowerSupplies`),
    Status: status(undefined),
  });
  const suppliesPath = `${path}/PowerSubsystem/PowerSupplies`;
  writer.collection(suppliesPath, 'PowerSupplyCollection', 'Power Supplies', supplies.map((s) => `${suppliesPath}/${s.id}`));
  for (const supply of supplies) {
    const body = powerSupplyBody(supply);
    delete body['LastPowerOutputWatts'];
    writer.resource(`${suppliesPath}/${supply.id}`, 'PowerSupply', 'v1_5_0', { Id: supply.id, ...body });
  }
}

/** `ThermalSubsystem` and its Fans collection. */
function writeThermalSubsystem(writer: TreeWriter, path: string, thermalSubsystem: NonNullable<SensorsSpec['thermalSubsystem']>): void {
  const fans = expandRepeated(thermalSubsystem.fans);
  writer.resource(`${path}/ThermalSubsystem`, 'ThermalSubsystem', 'v1_1_0', {
    Id: 'ThermalSubsystem',
    Name: 'Thermal Subsystem',
    Fans: writer.link(`${path}/ThermalSubsystem/Fans`),
    Status: status(undefined),
  });
  const fansPath = `${path}/ThermalSubsystem/Fans`;
  writer.collection(fansPath, 'FanCollection', 'Fans', fans.map((f) => `${fansPath}/${f.id}`));
  for (const fan of fans) {
    writer.resource(`${fansPath}/${fan.id}`, 'Fan', 'v1_4_0', {
      Id: fan.id,
      Name: fan.name,
      SpeedPercent: fan.units === 'Percent' ? { Reading: fan.reading } : undefined,
      SpeedRPM: fan.units === 'RPM' ? { Reading: fan.reading } : undefined,
      Status: status(undefined),
    });
  }
}

/** The chassis' `NetworkAdapters` collection and its members. */
function writeNetworkAdapters(writer: TreeWriter, path: string, adapters: AdapterSpec[]): void {
  writer.collection(`${path}/NetworkAdapters`, 'NetworkAdapterCollection', 'Network Adapter Collection', adapters.map((a) => `${path}/NetworkAdapters/${a.id}`));
  for (const adapter of adapters) {
    writer.resource(`${path}/NetworkAdapters/${adapter.id}`, 'NetworkAdapter', 'v1_7_0', {
      Id: adapter.id,
      Name: adapter.name ?? adapter.id,
      Manufacturer: adapter.manufacturer,
      Model: adapter.model,
      SerialNumber: adapter.serialNumber,
      PartNumber: adapter.partNumber,
      Controllers: adapter.firmwareVersion ? [{ FirmwarePackageVersion: adapter.firmwareVersion }] : undefined,
      Status: status(adapter.status),
    });
  }
}

/** The chassis' `PCIeDevices` collection and its members. */
function writePcieDevices(writer: TreeWriter, path: string, pcie: PcieDeviceSpec[]): void {
  writer.collection(`${path}/PCIeDevices`, 'PCIeDeviceCollection', 'PCIe Device Collection', pcie.map((d) => `${path}/PCIeDevices/${d.id}`));
  for (const device of pcie) {
    writer.resource(`${path}/PCIeDevices/${device.id}`, 'PCIeDevice', 'v1_9_0', {
      Id: device.id,
      Name: device.name ?? device.id,
      DeviceType: device.deviceType,
      Manufacturer: device.manufacturer,
      Model: device.model,
      PartNumber: device.partNumber,
      SerialNumber: device.serialNumber,
      FirmwareVersion: device.firmwareVersion,
      Status: status(device.status),
    });
  }
}
