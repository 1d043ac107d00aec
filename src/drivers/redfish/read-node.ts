/**
 * Reads one Redfish service into normalized observations: inventory, firmware inventory, power state, health
 * and sensors. Works on any `fetch(path)` (the HTTP client in production, anything in tests); the dialect
 * record decides the vendor-specific parts and `generic` covers vendors with no record.
 */
import type {
  DriverObservation,
  FirmwareInventoryObservedData,
  GpuDevice,
  HealthObservedData,
  NodeInventoryObservedData,
  PowerState,
  PowerStateObservedData,
  SelEntriesObservedData,
  SensorsObservedData,
} from '../../../events/index.js';
import { DriverError, driverErrorCodes, type DriverErrorCode } from '../driver-error.js';
import { detectDialect, type RedfishDialect } from './dialect.js';
import { normalizeFirmwareVersion } from '../../firmware/index.js';
import { rollUpHealth } from './read-health.js';
import { readChassisSensors } from './read-sensors.js';
import { readSelEntries } from './read-sel.js';
import {
  asResource,
  canonicalPath,
  expandQueryOf,
  lastSegment,
  ObservationRecorder,
  ResourceReader,
  settleAll,
  type FetchResource,
  type Resource,
} from './resource-reader.js';

export interface ReadNodeOptions {
  /** Upper bound on resources fetched in one read (default 3000). */
  maxResources?: number;
  /** Upper bound on Sensor resources fetched from `Sensors` collections (default 400). */
  maxSensors?: number;
  /** Force a dialect instead of detecting one. */
  dialect?: RedfishDialect;
  /** Read the system event logs into a `SelEntriesObserved` (default true; the driver skips them when not asked for). */
  readSel?: boolean;
  /**
   * Read the chassis sensors into a `SensorsObserved` (default true; the driver skips them when not asked for: an
   * inventory or firmware read then costs no `Sensors` collection of up to `maxSensors` resources, and what it reads
   * is what changes only when the hardware or its firmware does).
   */
  readSensors?: boolean;
  /** Upper bound on entries read per SEL LogService (default 500). */
  maxSelEntriesPerLog?: number;
  /**
   * Ask collections for their members expanded when the service root announces `$expand` (default true): one request
   * per collection instead of one per member. False asks for every member on its own.
   */
  expand?: boolean;
}

export interface NodeReading {
  dialect: RedfishDialect;
  observations: DriverObservation[];
  resourcesFetched: number;
}

interface Located {
  path: string;
  resource: Resource;
}

const POWER_STATES = new Set<PowerState>(['On', 'Off', 'PoweringOn', 'PoweringOff', 'Paused']);

function sortedDistinct(values: Array<string | undefined>): string[] {
  return [...new Set(values.filter((value): value is string => value !== undefined))].sort();
}

/**
 * A UUID that identifies: all zeros or all ones (what a BMC reports when the SMBIOS field was never programmed,
 * or a placeholder) would make every such node the same machine, so it is kept as unrecognized, not as identity.
 */
function identityUuid(recorder: ObservationRecorder, resource: Record<string, unknown>, path: string): string | undefined {
  const uuid = recorder.text(resource, path, 'UUID');
  if (uuid === undefined) return undefined;
  if (/^[0-]+$/.test(uuid) || /^[fF-]+$/.test(uuid)) {
    recorder.note(`${path}#UUID`, uuid);
    return undefined;
  }
  return uuid;
}

function idOf(located: Located, recorder: ObservationRecorder): string {
  return recorder.text(located.resource, located.path, 'Id') ?? lastSegment(located.path);
}

/** Reads a Redfish service's root, collections and members into observations. */
export async function readRedfishNode(fetch: FetchResource, options: ReadNodeOptions = {}): Promise<NodeReading> {
  const started = performance.now();
  const reader = new ResourceReader(fetch, options.maxResources ?? 3000);
  const rootBody = await fetch(ROOT_PATH);
  const root = asResource(rootBody);
  if (!root) throw new DriverError('DRIVER_PROTOCOL', 'the service root is not a JSON object', { url: ROOT_PATH });
  if (options.expand !== false) reader.expandWith(expandQueryOf(root));

  // The firmware inventory is read alongside everything else. Its collection is the slowest answer of a read on many
  // models (minutes on HGX boards, a minute on Supermicro X13, tens of seconds on iDRAC), and nothing else read here
  // waits on it: only the versions taken from it at the end do. One of the read's requests in flight waits for it
  // while the others go on, instead of the whole read waiting.
  const firmwareRec = new ObservationRecorder();
  const firmwareRead = readFirmwareMembers(root, reader, firmwareRec);
  const firmwareSettled = firmwareRead.then(
    () => undefined,
    () => undefined, // its failure is thrown where the read awaits it; here it is only waited for
  );
  try {
    return await readTree(root, reader, firmwareRec, firmwareRead, options, started);
  } finally {
    await firmwareSettled; // no request outlives the read, whatever failed first
  }
}

const ROOT_PATH = '/redfish/v1';

/** The firmware inventory's members: `UpdateService.FirmwareInventory`, else `SoftwareInventory`. */
async function readFirmwareMembers(root: Resource, reader: ResourceReader, firmwareRec: ObservationRecorder): Promise<Located[]> {
  const updateServicePath = firmwareRec.link(root, ROOT_PATH, 'UpdateService');
  const updateService = updateServicePath ? await reader.read(updateServicePath, firmwareRec) : undefined;
  // Firmware is listed in `FirmwareInventory`; an Intel S2600 BMC lists it in `SoftwareInventory` instead
  // (`intel_s2600bpb/redfish/v1/UpdateService`), which is read only when there is no `FirmwareInventory`.
  const firmwareCollection =
    updateService && updateServicePath
      ? (firmwareRec.link(updateService, updateServicePath, 'FirmwareInventory') ?? firmwareRec.link(updateService, updateServicePath, 'SoftwareInventory'))
      : undefined;
  return firmwareCollection ? reader.members(firmwareCollection, firmwareRec) : [];
}

/** Everything of a read after the service root; the firmware inventory's members arrive through `firmwareRead`. */
async function readTree(root: Resource, reader: ResourceReader, firmwareRec: ObservationRecorder, firmwareRead: Promise<Located[]>, options: ReadNodeOptions, started: number): Promise<NodeReading> {
  const inventory = new ObservationRecorder();
  const healthRec = new ObservationRecorder();
  const sensorsRec = new ObservationRecorder();
  const powerRec = new ObservationRecorder();
  const selRec = new ObservationRecorder();
  const rootPath = ROOT_PATH;
  const link = (key: string): string | undefined => inventory.link(root, rootPath, key);
  const [systems = [], managers = [], chassis = []] = await settleAll([
    link('Systems') ? reader.members(link('Systems')!, inventory) : Promise.resolve([]),
    link('Managers') ? reader.members(link('Managers')!, inventory) : Promise.resolve([]),
    link('Chassis') ? reader.members(link('Chassis')!, inventory) : Promise.resolve([]),
  ]);
  if (systems.length === 0 && managers.length === 0 && chassis.length === 0) {
    throw new DriverError('DRIVER_PROTOCOL', 'the service exposes no readable Systems, Managers or Chassis', { url: rootPath });
  }
  // A System the service lists but would not give (a 5xx, a timeout) is not a node without a system: a reading
  // without it would record an empty identity over the real one. The read fails with that resource's code instead.
  const systemsPath = link('Systems');
  const lostSystem = systems.length === 0 && systemsPath ? inventory.unreadable.find((entry) => entry.path.startsWith(systemsPath)) : undefined;
  if (lostSystem) {
    const code = (driverErrorCodes as readonly string[]).includes(lostSystem.code) ? (lostSystem.code as DriverErrorCode) : 'DRIVER_PROTOCOL';
    throw new DriverError(code, `the system at ${lostSystem.path} could not be read (${lostSystem.code}); no identity is recorded from a reading without it`, { url: lostSystem.path });
  }

  const firstManager = managers[0];
  const dialect =
    options.dialect ??
    detectDialect({
      vendor: typeof root.Vendor === 'string' ? root.Vendor : undefined,
      product: typeof root.Product === 'string' ? root.Product : undefined,
      rootOemKeys: Object.keys(asResource(root.Oem) ?? {}),
      managerModel: firstManager && typeof firstManager.resource.Model === 'string' ? firstManager.resource.Model : undefined,
      managerFirmware: firstManager && typeof firstManager.resource.FirmwareVersion === 'string' ? firstManager.resource.FirmwareVersion : undefined,
      managerOemKeys: Object.keys(asResource(firstManager?.resource.Oem) ?? {}),
      systemManufacturer: typeof systems[0]?.resource.Manufacturer === 'string' ? systems[0].resource.Manufacturer : undefined,
      systemOemKeys: Object.keys(asResource(systems[0]?.resource.Oem) ?? {}),
      chassisManufacturer: typeof chassis[0]?.resource.Manufacturer === 'string' ? chassis[0].resource.Manufacturer : undefined,
      chassisOemKeys: [...new Set(chassis.flatMap((located) => Object.keys(asResource(located.resource.Oem) ?? {})))],
    });

  inventory.oem(root, rootPath, dialect.oemNamespaces);
  for (const located of [...systems, ...managers, ...chassis]) inventory.oem(located.resource, located.path, dialect.oemNamespaces);
  const chassisByPath = new Map(chassis.map((located) => [located.path, located]));

  // ---- systems: identity, processors, memory
  const primary = systems.find((s) => dialect.ids.primarySystem?.test(idOf(s, inventory))) ?? systems[0];
  const systemIdentities: NodeInventoryObservedData['systems'] = systems.map((located) => {
    const { resource, path } = located;
    const identity: NodeInventoryObservedData['systems'][number] = { id: idOf(located, inventory), path };
    const links = asResource(resource.Links);
    const chassisLinks: unknown[] = Array.isArray(links?.Chassis) ? links.Chassis : [];
    const firstChassis = asResource(chassisLinks[0])?.['@odata.id'];
    const linkedChassisPath = typeof firstChassis === 'string' ? canonicalPath(firstChassis) : undefined;
    const linked = linkedChassisPath ? chassisByPath.get(linkedChassisPath) : undefined;
    const pick = (key: string): string | undefined =>
      inventory.text(resource, path, key) ?? (linked ? inventory.text(linked.resource, linked.path, key) : undefined);
    const fields: Array<[keyof typeof identity, string]> = [
      ['manufacturer', 'Manufacturer'],
      ['model', 'Model'],
      ['serialNumber', 'SerialNumber'],
      ['sku', 'SKU'],
    ];
    for (const [field, key] of fields) {
      const value = pick(key);
      if (value) identity[field] = value;
    }
    const uuid = identityUuid(inventory, resource, path);
    if (uuid) identity.uuid = uuid;
    const bios = inventory.text(resource, path, 'BiosVersion');
    if (bios) identity.biosVersion = bios;
    return identity;
  });
  const primaryIdentity = primary ? systemIdentities[systems.indexOf(primary)] ?? {} : {};

  const perSystem = await settleAll(
    systems.map(async (located) => {
      const { resource, path } = located;
      const processorsLink = inventory.link(resource, path, 'Processors');
      const processors = processorsLink ? await reader.members(processorsLink, inventory) : [];
      const cpus: Array<string | undefined> = [];
      const gpus: GpuDevice[] = [];
      for (const processor of processors) {
        inventory.oem(processor.resource, processor.path, dialect.oemNamespaces);
        const type = inventory.text(processor.resource, processor.path, 'ProcessorType');
        const state = asResource(processor.resource.Status)?.State;
        if (state === 'Absent') continue;
        let model = inventory.text(processor.resource, processor.path, 'Model');
        if (type === 'GPU' && model === undefined) {
          // Some GPUs' Processor names no model; the PCIe device it links to does.
          const pcieLink = asResource(asResource(processor.resource.Links)?.PCIeDevice)?.['@odata.id'];
          const pcie = typeof pcieLink === 'string' ? await reader.read(canonicalPath(pcieLink), inventory) : undefined;
          if (pcie) model = inventory.text(pcie, canonicalPath(pcieLink as string), 'Model');
        }
        if (type === 'CPU') cpus.push(model);
        else if (type === 'GPU') {
          const device: GpuDevice = { id: idOf(processor, inventory) };
          if (model) device.model = model;
          const serial = inventory.text(processor.resource, processor.path, 'SerialNumber');
          if (serial) device.serialNumber = serial;
          const firmware = inventory.text(processor.resource, processor.path, 'FirmwareVersion');
          if (firmware) device.firmwareVersion = firmware;
          gpus.push(device);
        }
      }
      const summary = inventory.object(resource, path, 'ProcessorSummary');
      let cpuCount = cpus.length;
      let cpuModels = cpus;
      if (cpuCount === 0 && summary) {
        cpuCount = inventory.number(summary, `${path}#ProcessorSummary`, 'Count') ?? 0;
        cpuModels = cpuCount > 0 ? [inventory.text(summary, `${path}#ProcessorSummary`, 'Model')] : [];
      } else if (cpuModels.every((model) => model === undefined) && summary) {
        cpuModels = [inventory.text(summary, `${path}#ProcessorSummary`, 'Model')];
      }
      return { located, cpuCount, cpuModels, gpus };
    }),
  );

  let memoryModules = 0;
  let totalGiB: number | undefined;
  if (primary) {
    const memoryLink = inventory.link(primary.resource, primary.path, 'Memory');
    const modules = memoryLink ? await reader.members(memoryLink, inventory) : [];
    memoryModules = modules.filter((module) => {
      const state = asResource(module.resource.Status)?.State;
      const capacity = module.resource.CapacityMiB;
      return state !== 'Absent' && !(typeof capacity === 'number' && capacity === 0);
    }).length;
    const summary = inventory.object(primary.resource, primary.path, 'MemorySummary');
    if (summary) totalGiB = inventory.number(summary, `${primary.path}#MemorySummary`, 'TotalSystemMemoryGiB');
  }

  // ---- GPUs from dialect-specific places when Processors had none
  let gpuDevices = perSystem.flatMap((entry) => entry.gpus);
  if (gpuDevices.length === 0) {
    for (const source of dialect.gpuSources) {
      if (source.kind === 'chassis') {
        for (const located of chassis) {
          const id = idOf(located, inventory);
          if (!source.id.test(id)) continue;
          const device: GpuDevice = { id };
          const model = inventory.text(located.resource, located.path, 'Model');
          if (model) device.model = model;
          const serial = inventory.text(located.resource, located.path, 'SerialNumber');
          if (serial) device.serialNumber = serial;
          gpuDevices.push(device);
        }
      } else {
        const pcie = await settleAll(
          chassis.map(async (located) => {
            const pcieLink = inventory.link(located.resource, located.path, 'PCIeDevices');
            return pcieLink ? reader.members(pcieLink, inventory, (member) => source.id.test(lastSegment(member))) : [];
          }),
        );
        for (const device of pcie.flat()) {
          const entry: GpuDevice = { id: idOf(device, inventory) };
          const model = inventory.text(device.resource, device.path, 'Model');
          if (model) entry.model = model;
          const serial = inventory.text(device.resource, device.path, 'SerialNumber');
          if (serial) entry.serialNumber = serial;
          const firmware = inventory.text(device.resource, device.path, 'FirmwareVersion');
          if (firmware) entry.firmwareVersion = firmware;
          gpuDevices.push(entry);
        }
      }
      if (gpuDevices.length > 0) break;
    }
  }
  gpuDevices = gpuDevices.sort((a, b) => a.id.localeCompare(b.id));

  const cpuCount =
    dialect.cpuCountAcrossSystems === 'max'
      ? Math.max(0, ...perSystem.map((entry) => entry.cpuCount))
      : perSystem.reduce((sum, entry) => sum + entry.cpuCount, 0);

  // ---- chassis: network adapters, sensors
  const adapters = (
    await settleAll(
      chassis.map(async (located) => {
        const adaptersLink = inventory.link(located.resource, located.path, 'NetworkAdapters');
        return adaptersLink ? reader.members(adaptersLink, inventory) : [];
      }),
    )
  ).flat();
  const nicModels: Array<string | undefined> = [];
  const dpuModels: Array<string | undefined> = [];
  for (const adapter of adapters) {
    inventory.oem(adapter.resource, adapter.path, dialect.oemNamespaces);
    const model = inventory.text(adapter.resource, adapter.path, 'Model');
    const name = inventory.text(adapter.resource, adapter.path, 'Name');
    const id = idOf(adapter, inventory);
    const isDpu = [model, name, id].some((value) => value !== undefined && dialect.dpuModel.test(value));
    (isDpu ? dpuModels : nicModels).push(model ?? name);
  }

  const sensorSummary = options.readSensors === false ? undefined : await readChassisSensors(chassis, reader, sensorsRec, options.maxSensors ?? 400);

  // ---- BMC identity and session-limit hint
  const bmcIdentities: NodeInventoryObservedData['bmcs'] = managers.map((located) => {
    const identity: NodeInventoryObservedData['bmcs'][number] = { id: idOf(located, inventory), path: located.path };
    const fields: Array<[keyof typeof identity, string]> = [
      ['manufacturer', 'Manufacturer'],
      ['model', 'Model'],
      ['firmwareVersion', 'FirmwareVersion'],
    ];
    for (const [field, key] of fields) {
      const value = inventory.text(located.resource, located.path, key);
      if (value) identity[field] = value;
    }
    const uuid = identityUuid(inventory, located.resource, located.path);
    if (uuid) identity.uuid = uuid;
    return identity;
  });
  // The only session-limit hint a tree gives is a Manager service's MaxConcurrentSessions. The command shell's is the
  // one that tracks the service's own sessions; a serial console takes one user by nature and a KVM often one or two,
  // so they are a hint only when no command shell is described, and never when they say 1.
  const limits: number[] = [];
  const consoleLimits: number[] = [];
  for (const located of managers) {
    for (const service of ['CommandShell', 'GraphicalConsole', 'SerialConsole']) {
      const record = asResource(located.resource[service]);
      const limit = record?.MaxConcurrentSessions;
      if (typeof limit !== 'number' || !Number.isInteger(limit) || limit <= 0) continue;
      if (service === 'CommandShell') limits.push(limit);
      else if (limit > 1) consoleLimits.push(limit);
    }
  }
  if (limits.length === 0) limits.push(...consoleLimits);

  const { health: nodeHealth, conditions } = rollUpHealth(systems, chassis, managers, healthRec);

  // ---- system event logs
  const sel = options.readSel === false ? undefined : await readSelEntries([...systems, ...managers, ...chassis], reader, selRec, options.maxSelEntriesPerLog ?? 500);

  // ---- firmware inventory (read since the root was)
  const firmwareMembers = await firmwareRead;
  const components: FirmwareInventoryObservedData['components'] = [];
  for (const member of firmwareMembers) {
    const { resource, path } = member;
    firmwareRec.oem(resource, path, dialect.oemNamespaces);
    const id = idOf(member, firmwareRec);
    const name = firmwareRec.text(resource, path, 'Name');
    const component = name && !/^Software Inventory$/i.test(name) ? name : id;
    const rawVersion = resource.Version;
    if (typeof rawVersion !== 'string' || rawVersion.length > 512) {
      firmwareRec.note(`${path}#Version`, rawVersion ?? null);
      continue;
    }
    const { normalized, rule } = normalizeFirmwareVersion(dialect, component, rawVersion);
    const entry: FirmwareInventoryObservedData['components'][number] = { id, component, version: rawVersion, normalizedVersion: normalized, normalizationRule: rule };
    const updateable = firmwareRec.boolean(resource, path, 'Updateable');
    if (updateable !== undefined) entry.updateable = updateable;
    const slot = dialect.firmware.slotPrefixes?.find((prefix) => prefix.pattern.test(id))?.slot;
    if (slot) entry.slot = slot;
    components.push(entry);
  }
  const firmwareVersionOf = (pattern: RegExp | undefined): string | undefined => {
    if (!pattern) return undefined;
    const candidates = components.filter((c) => pattern.test(c.id) || pattern.test(c.component));
    const running = candidates.find((c) => c.slot === undefined || c.slot === 'installed' || c.slot === 'current');
    return running?.version.trim() || undefined;
  };

  // ---- power state
  let powerState: PowerState = 'Unknown';
  if (primary) {
    const raw = primary.resource.PowerState;
    if (typeof raw === 'string' && POWER_STATES.has(raw as PowerState)) powerState = raw as PowerState;
    else if (raw !== undefined && raw !== null) powerRec.note(`${primary.path}#PowerState`, raw);
  }

  const latencyMs = Math.round(performance.now() - started);
  const base = <R extends ObservationRecorder>(recorder: R) => ({
    source: 'redfish' as const,
    dialect: dialect.id,
    unrecognized: recorder.unrecognized,
    ...(recorder.unreadable.length > 0 ? { unreadable: recorder.unreadable } : {}),
    latencyMs,
  });

  const primaryManager = bmcIdentities[0] ?? {};
  const biosVersion = primaryIdentity.biosVersion ?? firmwareVersionOf(dialect.firmware.bios);
  const nodeInventory: NodeInventoryObservedData = {
    ...base(inventory),
    system: primaryIdentity,
    systems: systemIdentities,
    bmc: primaryManager.firmwareVersion || !dialect.firmware.bmc ? primaryManager : { ...primaryManager, ...(firmwareVersionOf(dialect.firmware.bmc) ? { firmwareVersion: firmwareVersionOf(dialect.firmware.bmc)! } : {}) },
    bmcs: bmcIdentities,
    ...(biosVersion ? { biosVersion } : {}),
    cpus: { count: cpuCount, models: sortedDistinct(perSystem.flatMap((entry) => entry.cpuModels)) },
    gpus: { count: gpuDevices.length, models: sortedDistinct(gpuDevices.map((device) => device.model)), devices: gpuDevices },
    memory: { moduleCount: memoryModules, ...(totalGiB !== undefined && totalGiB >= 0 ? { totalGiB } : {}) },
    nics: { count: nicModels.length, models: sortedDistinct(nicModels) },
    dpus: { count: dpuModels.length, models: sortedDistinct(dpuModels) },
    ...(limits.length > 0 ? { sessionLimitHint: Math.min(...limits) } : {}),
    ...(typeof root.RedfishVersion === 'string' ? { redfishVersion: root.RedfishVersion } : {}),
  };
  const firmware: FirmwareInventoryObservedData = { ...base(firmwareRec), components };
  const power: PowerStateObservedData = { ...base(powerRec), powerState };
  const health: HealthObservedData = { ...base(healthRec), health: nodeHealth, conditions };
  const sensors: SensorsObservedData | undefined = sensorSummary ? { ...base(sensorsRec), ...sensorSummary } : undefined;
  const selObservation: SelEntriesObservedData | undefined = sel ? { ...base(selRec), ...sel } : undefined;
  return {
    dialect,
    resourcesFetched: reader.resourcesFetched,
    observations: [
      { type: 'NodeInventoryObserved', data: nodeInventory },
      { type: 'FirmwareInventoryObserved', data: firmware },
      { type: 'PowerStateObserved', data: power },
      { type: 'HealthObserved', data: health },
      ...(sensors ? [{ type: 'SensorsObserved' as const, data: sensors }] : []),
      ...(selObservation ? [{ type: 'SelEntriesObserved' as const, data: selObservation }] : []),
    ],
  };
}
