/**
 * Builds a full Redfish tree from a vendor profile: service root, systems with processors, memory and Ethernet
 * interfaces, managers, chassis with sensors (legacy `Thermal`/`Power`, a `Sensors` collection, or the newer
 * subsystems), network adapters and PCIe devices, the update service with its firmware inventory, and the session,
 * account and task services. A pure function of the profile: the same profile always yields the same tree, so the
 * simulator can share one tree among every BMC built from it.
 */
import type {
  AdapterSpec,
  LogServiceSpec,
  BmcProfile,
  ChassisSpec,
  EthernetSpec,
  ManagerSpec,
  PcieDeviceSpec,
  PowerSupplySpec,
  Repeated,
  SensorSpec,
  StatusSpec,
  SystemSpec,
} from './profiles/bmc-profile.ts';
import type { RedfishTree } from './capture.ts';
import { fnv1a, mix32 } from './random.ts';

type Body = Record<string, unknown>;

const ROOT = '/redfish/v1';

/** `count` copies of each part, `{n}` replaced by the copy's number in every string inside it. */
export function expandRepeated<T extends Repeated>(parts: readonly T[] | undefined): T[] {
  const out: T[] = [];
  for (const part of parts ?? []) {
    const count = part.count ?? 1;
    const from = part.from ?? 1;
    for (let n = from; n < from + count; n++) {
      const copy = replaceDeep(part, (text) => text.split('{n}').join(String(n))) as T & Repeated;
      delete copy.count;
      delete copy.from;
      out.push(copy);
    }
  }
  return out;
}

function replaceDeep(value: unknown, replace: (text: string) => string): unknown {
  if (typeof value === 'string') return replace(value);
  if (Array.isArray(value)) return value.map((item) => replaceDeep(item, replace));
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value as Body).map(([key, item]) => [key, replaceDeep(item, replace)]));
  }
  return value;
}

/** A well-formed version-4 UUID derived from `key`: stable for a profile, distinct between resources. */
export function stableUuid(key: string): string {
  let hex = '';
  let state = fnv1a(key);
  while (hex.length < 32) {
    state = mix32(state + 0x9e3779b9);
    hex += (state >>> 0).toString(16).padStart(8, '0');
  }
  const variant = ((parseInt(hex[16] ?? '0', 16) & 3) | 8).toString(16);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-${variant}${hex.slice(17, 20)}-${hex.slice(20, 32)}`.toUpperCase();
}

/** The MAC of the n-th copy of a repeated interface: the last bytes counted up, the vendor's case and separator kept. */
function macPlus(mac: string, offset: number): string {
  const separator = mac[2] === '-' ? '-' : ':';
  const bytes = mac.split(/[:-]/).map((part) => parseInt(part, 16));
  const device = ((((bytes[3] ?? 0) << 16) | ((bytes[4] ?? 0) << 8) | (bytes[5] ?? 0)) + offset) & 0xffffff;
  const out = [bytes[0] ?? 0, bytes[1] ?? 0, bytes[2] ?? 0, device >> 16, (device >> 8) & 255, device & 255]
    .map((byte) => byte.toString(16).padStart(2, '0'))
    .join(separator);
  return mac === mac.toUpperCase() ? out.toUpperCase() : out;
}

function expandEthernet(specs: EthernetSpec[] | undefined): Array<{ id: string; mac: string }> {
  const out: Array<{ id: string; mac: string }> = [];
  for (const spec of specs ?? []) {
    const from = spec.from ?? 1;
    for (let n = from; n < from + (spec.count ?? 1); n++) out.push({ id: spec.id.split('{n}').join(String(n)), mac: macPlus(spec.mac, n - from) });
  }
  return out;
}

/** Writes resources in the profile's own style (`@odata.context` or not, trailing slashes or not). */
class TreeWriter {
  readonly tree: RedfishTree = new Map();

  constructor(private readonly profile: BmcProfile) {}

  /** A link as this vendor writes it. */
  link(path: string): { '@odata.id': string } {
    return { '@odata.id': this.profile.trailingSlash ? `${path}/` : path };
  }

  links(paths: string[]): Array<{ '@odata.id': string }> {
    return paths.map((path) => this.link(path));
  }

  resource(path: string, type: string, version: string, body: Body): void {
    const head: Body = {};
    if (this.profile.odataContext) head['@odata.context'] = `${ROOT}/$metadata#${type}.${type}`;
    head['@odata.id'] = this.link(path)['@odata.id'];
    head['@odata.type'] = `#${type}.${version}.${type}`;
    this.tree.set(path, { ...head, ...withoutUndefined(body) });
  }

  collection(path: string, type: string, name: string, members: string[]): void {
    const body: Body = {};
    if (this.profile.odataContext) body['@odata.context'] = `${ROOT}/$metadata#${type}.${type}`;
    body['@odata.id'] = this.link(path)['@odata.id'];
    body['@odata.type'] = `#${type}.${type}`;
    body['Name'] = name;
    body['Members'] = this.links(members);
    body['Members@odata.count'] = members.length;
    this.tree.set(path, body);
  }
}

function withoutUndefined(body: Body): Body {
  return Object.fromEntries(Object.entries(body).filter(([, value]) => value !== undefined));
}

function status(spec: StatusSpec | undefined, fallback: StatusSpec = { state: 'Enabled', health: 'OK' }): Body | undefined {
  const merged = { ...fallback, ...spec };
  if (merged.omit) return undefined;
  const out: Body = {};
  if (merged.state) out['State'] = merged.state;
  if (merged.health) out['Health'] = merged.health;
  if (merged.healthRollup) out[merged.rollupSpelling ?? 'HealthRollup'] = merged.healthRollup;
  if (merged.conditions) out['Conditions'] = merged.conditions;
  return out;
}

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

/** The Redfish tree a profile describes, keyed by canonical path. */
export function generateTree(profile: BmcProfile): RedfishTree {
  const resolved = replaceDeep(profile, (text) => text.split('{bmc}').join(profile.bmcFirmware.version)) as BmcProfile;
  const writer = new TreeWriter(resolved);
  const uuidOf = (path: string, given?: boolean | string): string | undefined =>
    typeof given === 'string' ? given : given ? stableUuid(`${profile.name}:${path}`) : undefined;
  const systemPath = (id: string): string => `${ROOT}/Systems/${id}`;
  const managerPath = (id: string): string => `${ROOT}/Managers/${id}`;
  const chassisPath = (id: string): string => `${ROOT}/Chassis/${id}`;
  const inventory = resolved.firmwareInventory.collection ?? 'FirmwareInventory';
  const sessionsPath = `${ROOT}/SessionService/Sessions`;

  writer.resource(ROOT, 'ServiceRoot', 'v1_11_0', {
    Id: 'RootService',
    Name: 'Root Service',
    RedfishVersion: resolved.redfishVersion,
    UUID: uuidOf(ROOT, resolved.serviceRoot.uuid),
    Vendor: resolved.serviceRoot.vendor,
    Product: resolved.serviceRoot.product,
    Systems: writer.link(`${ROOT}/Systems`),
    Chassis: writer.link(`${ROOT}/Chassis`),
    Managers: writer.link(`${ROOT}/Managers`),
    UpdateService: resolved.updateService.absent ? undefined : writer.link(`${ROOT}/UpdateService`),
    SessionService: writer.link(`${ROOT}/SessionService`),
    AccountService: writer.link(`${ROOT}/AccountService`),
    TaskService: writer.link(`${ROOT}/TaskService`),
    Links: { Sessions: writer.link(sessionsPath) },
    ProtocolFeaturesSupported: resolved.serviceRoot.expandQuery ? { ExpandQuery: resolved.serviceRoot.expandQuery } : undefined,
    Oem: resolved.serviceRoot.oem,
  });

  writer.collection(`${ROOT}/Systems`, 'ComputerSystemCollection', 'Computer System Collection', resolved.systems.map((s) => systemPath(s.id)));
  for (const system of resolved.systems) writeSystem(writer, system, systemPath(system.id), uuidOf, chassisPath, managerPath);

  writer.collection(`${ROOT}/Managers`, 'ManagerCollection', 'Manager Collection', resolved.managers.map((m) => managerPath(m.id)));
  for (const manager of resolved.managers) writeManager(writer, manager, managerPath(manager.id), uuidOf, systemPath, chassisPath);

  writer.collection(`${ROOT}/Chassis`, 'ChassisCollection', 'Chassis Collection', resolved.chassis.map((c) => chassisPath(c.id)));
  for (const chassis of resolved.chassis) writeChassis(writer, chassis, chassisPath(chassis.id), uuidOf, systemPath, managerPath);

  const update = resolved.updateService;
  if (!update.absent) writeUpdateService(writer, resolved, inventory);

  writer.resource(`${ROOT}/SessionService`, 'SessionService', 'v1_1_8', {
    Id: 'SessionService',
    Name: 'Session Service',
    ServiceEnabled: true,
    SessionTimeout: resolved.sessions.timeoutS,
    Sessions: writer.link(sessionsPath),
  });
  writer.collection(sessionsPath, 'SessionCollection', 'Session Collection', []);
  writer.resource(`${ROOT}/AccountService`, 'AccountService', 'v1_10_0', {
    Id: 'AccountService',
    Name: 'Account Service',
    ServiceEnabled: true,
    AccountLockoutThreshold: 5,
    AccountLockoutDuration: 300,
    Accounts: writer.link(`${ROOT}/AccountService/Accounts`),
  });
  writer.collection(`${ROOT}/AccountService/Accounts`, 'ManagerAccountCollection', 'Accounts Collection', []);
  writer.resource(`${ROOT}/TaskService`, 'TaskService', 'v1_2_0', {
    Id: 'TaskService',
    Name: 'Task Service',
    ServiceEnabled: true,
    Tasks: writer.link(`${ROOT}/TaskService/Tasks`),
  });
  writer.collection(`${ROOT}/TaskService/Tasks`, 'TaskCollection', 'Task Collection', []);
  applyOverrides(writer.tree, resolved.overrides);
  return writer.tree;
}

/** The update service and its firmware (or software) inventory. */
function writeUpdateService(writer: TreeWriter, resolved: BmcProfile, inventory: string): void {
  const update = resolved.updateService;
  writer.resource(`${ROOT}/UpdateService`, 'UpdateService', 'v1_11_0', {
    Id: 'UpdateService',
    Name: 'Update Service',
    ServiceEnabled: true,
    Status: status(undefined),
    [inventory]: writer.link(`${ROOT}/UpdateService/${inventory}`),
    HttpPushUri: update.httpPushUri ? `${ROOT}/UpdateService/update` : undefined,
    MultipartHttpPushUri: update.multipartHttpPushUri ? `${ROOT}/UpdateService/upload` : undefined,
    Actions: update.simpleUpdate
      ? {
          '#UpdateService.SimpleUpdate': {
            target: update.simpleUpdateTarget ?? `${ROOT}/UpdateService/Actions/UpdateService.SimpleUpdate`,
            'TransferProtocol@Redfish.AllowableValues': update.transferProtocols ?? ['HTTP', 'HTTPS'],
          },
        }
      : undefined,
  });
  const entries = expandRepeated(resolved.firmwareInventory.entries);
  const entryPath = (id: string): string => `${ROOT}/UpdateService/${inventory}/${id}`;
  writer.collection(`${ROOT}/UpdateService/${inventory}`, 'SoftwareInventoryCollection', 'Firmware Inventory Collection', entries.map((e) => entryPath(e.id)));
  for (const entry of entries) {
    writer.resource(entryPath(entry.id), 'SoftwareInventory', 'v1_4_0', {
      Id: entry.id,
      Name: entry.name ?? entry.id,
      Version: entry.version,
      Updateable: entry.updateable,
      SoftwareId: entry.softwareId,
      Status: status(entry.status),
    });
  }

}

/** `LogServices` under `owner`: each log service and its `Entries`, the entries expanded in the collection as BMCs list them. */
function writeLogServices(writer: TreeWriter, owner: string, services: readonly LogServiceSpec[] | undefined): Body | undefined {
  if (!services || services.length === 0) return undefined;
  const servicesPath = `${owner}/LogServices`;
  writer.collection(servicesPath, 'LogServiceCollection', 'Log Service Collection', services.map((service) => `${servicesPath}/${service.id}`));
  for (const service of services) {
    const path = `${servicesPath}/${service.id}`;
    writer.resource(path, 'LogService', 'v1_1_0', {
      Id: service.id,
      Name: `${service.id} Log Service`,
      LogEntryType: service.logEntryType,
      MaxNumberOfRecords: service.maxRecords,
      OverWritePolicy: 'WrapsWhenFull',
      ServiceEnabled: true,
      Status: status(undefined),
      Entries: writer.link(`${path}/Entries`),
      Actions: { '#LogService.ClearLog': { target: `${path}/Actions/LogService.ClearLog` } },
    });
    writer.collection(`${path}/Entries`, 'LogEntryCollection', 'Log Entry Collection', []);
    const collection = writer.tree.get(`${path}/Entries`) as Body;
    collection['Members'] = service.entries.map((entry) => {
      const head: Body = { ...writer.link(`${path}/Entries/${entry.id}`), '@odata.type': '#LogEntry.v1_4_2.LogEntry' };
      const body = withoutUndefined({
        ...head,
        Id: entry.id,
        Name: `Log Entry ${entry.id}`,
        Created: entry.created,
        EntryType: entry.entryType ?? 'SEL',
        EntryCode: entry.entryCode,
        SensorType: entry.sensorType,
        SensorNumber: entry.sensorNumber,
        Severity: entry.severity,
        MessageId: entry.messageId,
        Message: entry.message,
      });
      writer.tree.set(`${path}/Entries/${entry.id}`, body);
      return body;
    });
    collection['Members@odata.count'] = service.entries.length;
  }
  return writer.link(servicesPath);
}

function applyOverrides(tree: RedfishTree, overrides: BmcProfile['overrides']): void {
  for (const [path, patch] of Object.entries(overrides ?? {})) {
    if (patch === null) {
      tree.delete(path);
      continue;
    }
    const merged: Body = { ...((tree.get(path) as Body | undefined) ?? {}) };
    for (const [key, value] of Object.entries(patch)) {
      if (value === null) delete merged[key];
      else merged[key] = value;
    }
    tree.set(path, merged);
  }
}

function writeSystem(
  writer: TreeWriter,
  system: SystemSpec,
  path: string,
  uuidOf: (path: string, given?: boolean | string) => string | undefined,
  chassisPath: (id: string) => string,
  managerPath: (id: string) => string,
): void {
  const processors = expandRepeated(system.processors);
  const memory = expandRepeated(system.memory);
  const ethernet = expandEthernet(system.ethernet);
  writer.resource(path, 'ComputerSystem', 'v1_16_0', {
    Id: system.id,
    Name: system.name ?? 'System',
    SystemType: system.systemType ?? 'Physical',
    Manufacturer: system.manufacturer,
    Model: system.model,
    SKU: system.sku,
    SerialNumber: system.serialNumber,
    UUID: uuidOf(path, system.uuid),
    HostName: system.hostName,
    BiosVersion: system.biosVersion,
    PowerState: system.powerState ?? 'On',
    Status: status(system.status, { state: 'Enabled', health: 'OK', healthRollup: 'OK' }),
    ProcessorSummary: system.processorSummary
      ? withoutUndefined({ Count: system.processorSummary.count, Model: system.processorSummary.model })
      : undefined,
    MemorySummary: system.memoryGiB !== undefined ? { TotalSystemMemoryGiB: system.memoryGiB, Status: status(undefined) } : undefined,
    Processors: processors.length > 0 ? writer.link(`${path}/Processors`) : undefined,
    Memory: memory.length > 0 ? writer.link(`${path}/Memory`) : undefined,
    EthernetInterfaces: ethernet.length > 0 ? writer.link(`${path}/EthernetInterfaces`) : undefined,
    LogServices: writeLogServices(writer, path, system.logServices),
    Links: {
      Chassis: writer.links((system.chassis ?? []).map(chassisPath)),
      ManagedBy: writer.links((system.managedBy ?? []).map(managerPath)),
    },
    Actions: {
      '#ComputerSystem.Reset': {
        target: `${path}/Actions/ComputerSystem.Reset`,
        'ResetType@Redfish.AllowableValues': ['On', 'ForceOff', 'GracefulShutdown', 'ForceRestart', 'GracefulRestart', 'PowerCycle'],
      },
    },
    Oem: system.oem,
  });
  if (processors.length > 0) {
    writer.collection(`${path}/Processors`, 'ProcessorCollection', 'Processors Collection', processors.map((p) => `${path}/Processors/${p.id}`));
    for (const processor of processors) {
      writer.resource(`${path}/Processors/${processor.id}`, 'Processor', 'v1_13_0', {
        Id: processor.id,
        Name: processor.name ?? processor.id,
        ProcessorType: processor.type,
        Manufacturer: processor.manufacturer,
        Model: processor.model,
        TotalCores: processor.cores,
        TotalThreads: processor.threads,
        MaxSpeedMHz: processor.maxSpeedMHz,
        SerialNumber: processor.serialNumber,
        FirmwareVersion: processor.firmwareVersion,
        Status: status(processor.status),
      });
    }
  }
  if (memory.length > 0) {
    writer.collection(`${path}/Memory`, 'MemoryCollection', 'Memory Collection', memory.map((m) => `${path}/Memory/${m.id}`));
    for (const module of memory) {
      writer.resource(`${path}/Memory/${module.id}`, 'Memory', 'v1_14_0', {
        Id: module.id,
        Name: module.id,
        CapacityMiB: module.capacityMiB,
        MemoryDeviceType: module.memoryDeviceType,
        Manufacturer: module.manufacturer,
        PartNumber: module.partNumber,
        SerialNumber: module.serialNumber,
        OperatingSpeedMhz: module.speedMHz,
        Status: status(module.status),
      });
    }
  }
  writeEthernet(writer, `${path}/EthernetInterfaces`, ethernet);
}

/** Ethernet interfaces; a manager's carry its host name, as BMCs report it on their own interface. */
function writeEthernet(writer: TreeWriter, path: string, interfaces: Array<{ id: string; mac: string }>, hostName?: string): void {
  if (interfaces.length === 0) return;
  writer.collection(path, 'EthernetInterfaceCollection', 'Ethernet Interface Collection', interfaces.map((i) => `${path}/${i.id}`));
  for (const nic of interfaces) {
    writer.resource(`${path}/${nic.id}`, 'EthernetInterface', 'v1_6_0', {
      Id: nic.id,
      Name: nic.id,
      MACAddress: nic.mac,
      PermanentMACAddress: nic.mac,
      HostName: hostName,
      Status: status(undefined),
    });
  }
}

function writeManager(
  writer: TreeWriter,
  manager: ManagerSpec,
  path: string,
  uuidOf: (path: string, given?: boolean | string) => string | undefined,
  systemPath: (id: string) => string,
  chassisPath: (id: string) => string,
): void {
  const ethernet = expandEthernet(manager.ethernet);
  const console = (service: 'CommandShell' | 'GraphicalConsole' | 'SerialConsole', types: string[]): Body | undefined => {
    const limit = manager.consoles?.[service];
    return limit === undefined ? undefined : { ServiceEnabled: true, MaxConcurrentSessions: limit, ConnectTypesSupported: types };
  };
  writer.resource(path, 'Manager', 'v1_12_0', {
    Id: manager.id,
    Name: manager.name ?? 'Manager',
    ManagerType: manager.managerType,
    Manufacturer: manager.manufacturer,
    Model: manager.model,
    FirmwareVersion: manager.firmwareDisplay,
    UUID: uuidOf(path, manager.uuid),
    HostName: manager.hostName,
    PowerState: 'On',
    Status: status(manager.status),
    CommandShell: console('CommandShell', ['SSH']),
    GraphicalConsole: console('GraphicalConsole', ['KVMIP']),
    SerialConsole: console('SerialConsole', ['IPMI', 'SSH']),
    EthernetInterfaces: ethernet.length > 0 ? writer.link(`${path}/EthernetInterfaces`) : undefined,
    LogServices: writeLogServices(writer, path, manager.logServices),
    Links: {
      ManagerForServers: writer.links((manager.managerForServers ?? []).map(systemPath)),
      ManagerForChassis: writer.links((manager.managerForChassis ?? []).map(chassisPath)),
    },
    Actions: { '#Manager.Reset': { target: `${path}/Actions/Manager.Reset`, 'ResetType@Redfish.AllowableValues': ['GracefulRestart', 'ForceRestart'] } },
    Oem: manager.oem,
  });
  writeEthernet(writer, `${path}/EthernetInterfaces`, ethernet, manager.hostName);
}

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

function writeChassis(
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

  if (sensors.thermal) {
    const temperatures = expandRepeated(sensors.thermal.temperatures);
    const fans = expandRepeated(sensors.thermal.fans);
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
  if (sensors.power) {
    const supplies = expandRepeated(sensors.power.supplies);
    writer.resource(`${path}/Power`, 'Power', 'v1_7_0', {
      Id: 'Power',
      Name: 'Power',
      PowerControl:
        sensors.power.consumedWatts === undefined
          ? []
          : [{ '@odata.id': `${path}/Power#/PowerControl/0`, MemberId: '0', Name: 'System Power Control', PowerConsumedWatts: sensors.power.consumedWatts }],
      PowerSupplies: supplies.map((supply, index) =>
        withoutUndefined({ '@odata.id': `${path}/Power#/PowerSupplies/${index}`, MemberId: supply.id, ...powerSupplyBody(supply) }),
      ),
    });
  }
  if (sensorList.length > 0) {
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
  if (sensors.environmentMetrics) {
    const metrics = sensors.environmentMetrics;
    writer.resource(`${path}/EnvironmentMetrics`, 'EnvironmentMetrics', 'v1_3_0', {
      Id: 'EnvironmentMetrics',
      Name: 'Environment Metrics',
      PowerWatts: metrics.powerWatts === undefined ? undefined : { Reading: metrics.powerWatts },
      TemperatureCelsius: metrics.temperatureCelsius === undefined ? undefined : { Reading: metrics.temperatureCelsius },
    });
  }
  if (sensors.powerSubsystem) {
    const supplies = expandRepeated(sensors.powerSubsystem.supplies);
    writer.resource(`${path}/PowerSubsystem`, 'PowerSubsystem', 'v1_1_0', {
      Id: 'PowerSubsystem',
      Name: 'Power Subsystem',
      CapacityWatts: sensors.powerSubsystem.capacityWatts,
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
  if (sensors.thermalSubsystem) {
    const fans = expandRepeated(sensors.thermalSubsystem.fans);
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
  if (adapters.length > 0) {
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
  if (pcie.length > 0) {
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
}
