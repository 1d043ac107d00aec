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
import { writeChassis } from './generate-chassis.ts';
import { writeLogServices } from './generate-log-services.ts';
import { fnv1a, mix32 } from './random.ts';
import { expandRepeated, replaceDeep, ROOT, status, TreeWriter, withoutUndefined, type Body } from './tree-writing.ts';

export { expandRepeated };

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

