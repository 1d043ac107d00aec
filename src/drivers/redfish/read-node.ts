/**
 * Reads one Redfish service into normalized observations: inventory, firmware inventory, power state, health
 * and sensors. Works on any `fetch(path)` (the HTTP client in production, anything in tests); the dialect
 * record decides the vendor-specific parts and `generic` covers vendors with no record.
 */
import type {
  DriverObservation,
  HealthObservedData,
  NodeInventoryObservedData,
  PowerState,
  PowerStateObservedData,
  SelEntriesObservedData,
  SensorsObservedData,
} from '../../../events/index.js';
import { DriverError, driverErrorCodes, type DriverErrorCode } from '../driver-error.js';
import { detectDialect, type RedfishDialect } from './dialect.js';
import { firmwareComponents, firmwareVersionOf, readFirmwareMembers, type FirmwareComponents } from './read-firmware.js';
import { rollUpHealth } from './read-health.js';
import {
  bmcIdentitiesOf,
  idOf,
  readDialectGpus,
  readMemory,
  readNetworkAdapters,
  readSystemProcessors,
  sessionLimitHints,
  sortedDistinct,
  systemIdentitiesOf,
  type SystemProcessors,
} from './read-inventory.js';
import { readChassisSensors, type ChassisSensors } from './read-sensors.js';
import { readSelEntries } from './read-sel.js';
import { asResource, expandQueryOf, lastSegment, ObservationRecorder, ResourceReader, settleAll, type FetchResource, type Located, type Resource } from './resource-reader.js';

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
  const firmwareRead = readFirmwareMembers(root, ROOT_PATH, reader, firmwareRec);
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

const POWER_STATES = new Set<PowerState>(['On', 'Off', 'PoweringOn', 'PoweringOff', 'Paused']);

/** The recorders of one read, one per observation, so each observation carries what was not understood for it. */
interface Recorders {
  inventory: ObservationRecorder;
  firmware: ObservationRecorder;
  health: ObservationRecorder;
  sensors: ObservationRecorder;
  power: ObservationRecorder;
  sel: ObservationRecorder;
}

/**
 * Everything of a read after the service root, step by step; the firmware inventory's members arrive through
 * `firmwareRead`. The steps run in this order (their requests and what they record depend on it).
 */
async function readTree(root: Resource, reader: ResourceReader, firmwareRec: ObservationRecorder, firmwareRead: Promise<Located[]>, options: ReadNodeOptions, started: number): Promise<NodeReading> {
  const recorders: Recorders = {
    inventory: new ObservationRecorder(),
    firmware: firmwareRec,
    health: new ObservationRecorder(),
    sensors: new ObservationRecorder(),
    power: new ObservationRecorder(),
    sel: new ObservationRecorder(),
  };
  const { inventory } = recorders;
  const { systems, managers, chassis } = await readCollections(root, reader, inventory);
  // Members listed but not readable still show their ids (an iDRAC's Manager that answered 500 is `iDRAC.Embedded.1`).
  const listedOnly = inventory.unreadable.map((entry) => entry.path).filter((path) => /^\/redfish\/v1\/(?:Systems|Managers|Chassis)\/[^/?]+\/?$/i.test(path));
  const dialect = options.dialect ?? detectTreeDialect(root, systems, managers, chassis, listedOnly);
  inventory.oem(root, ROOT_PATH, dialect.oemNamespaces);
  for (const located of [...systems, ...managers, ...chassis]) inventory.oem(located.resource, located.path, dialect.oemNamespaces);

  // ---- systems: identity, processors, memory
  const primary = systems.find((s) => dialect.ids.primarySystem?.test(idOf(s, inventory))) ?? systems[0];
  const systemIdentities = systemIdentitiesOf(systems, chassis, inventory);
  const primaryIdentity = primary ? systemIdentities[systems.indexOf(primary)] ?? {} : {};
  const perSystem = await settleAll(systems.map((located) => readSystemProcessors(located, reader, inventory, dialect)));
  const { memoryModules, totalGiB } = await readMemory(primary, reader, inventory);

  // ---- GPUs from dialect-specific places when Processors had none
  let gpuDevices = perSystem.flatMap((entry) => entry.gpus);
  if (gpuDevices.length === 0) gpuDevices = await readDialectGpus(chassis, reader, inventory, dialect);
  gpuDevices = gpuDevices.sort((a, b) => a.id.localeCompare(b.id));

  // ---- chassis: network adapters, sensors
  const { nicModels, dpuModels } = await readNetworkAdapters(chassis, reader, inventory, dialect);
  const sensorSummary = options.readSensors === false ? undefined : await readChassisSensors(chassis, reader, recorders.sensors, options.maxSensors ?? 400);

  // ---- BMC identity and session-limit hint, health, system event logs
  const bmcIdentities = bmcIdentitiesOf(managers, inventory);
  const limits = sessionLimitHints(managers);
  const { health: nodeHealth, conditions } = rollUpHealth(systems, chassis, managers, recorders.health);
  const sel = options.readSel === false ? undefined : await readSelEntries([...systems, ...managers, ...chassis], reader, recorders.sel, options.maxSelEntriesPerLog ?? 500);

  // ---- firmware inventory (read since the root was), power state
  const components = firmwareComponents(await firmwareRead, firmwareRec, dialect);
  const powerState = powerStateOf(primary, recorders.power);

  const primaryManager = bmcIdentities[0] ?? {};
  const bmcFirmware = firmwareVersionOf(components, dialect.firmware.bmc);
  const biosVersion = primaryIdentity.biosVersion ?? firmwareVersionOf(components, dialect.firmware.bios);
  const nodeInventory: Omit<NodeInventoryObservedData, 'source' | 'dialect' | 'unrecognized' | 'unreadable' | 'latencyMs'> = {
    system: primaryIdentity,
    systems: systemIdentities,
    bmc: primaryManager.firmwareVersion || !dialect.firmware.bmc ? primaryManager : { ...primaryManager, ...(bmcFirmware ? { firmwareVersion: bmcFirmware } : {}) },
    bmcs: bmcIdentities,
    ...(biosVersion ? { biosVersion } : {}),
    cpus: { count: cpuCountOf(perSystem, dialect), models: sortedDistinct(perSystem.flatMap((entry) => entry.cpuModels)) },
    gpus: { count: gpuDevices.length, models: sortedDistinct(gpuDevices.map((device) => device.model)), devices: gpuDevices },
    memory: { moduleCount: memoryModules, ...(totalGiB !== undefined && totalGiB >= 0 ? { totalGiB } : {}) },
    nics: { count: nicModels.length, models: sortedDistinct(nicModels) },
    dpus: { count: dpuModels.length, models: sortedDistinct(dpuModels) },
    ...(limits.length > 0 ? { sessionLimitHint: Math.min(...limits) } : {}),
    ...(typeof root.RedfishVersion === 'string' ? { redfishVersion: root.RedfishVersion } : {}),
  };
  return assembleReading(dialect, reader, recorders, started, { nodeInventory, components, powerState, nodeHealth, conditions, sensorSummary, sel });
}

/**
 * The service's Systems, Managers and Chassis members. A service with none of them is refused; so is one whose listed
 * System could not be read (a 5xx, a timeout): a reading without it would record an empty identity over the real one.
 */
async function readCollections(root: Resource, reader: ResourceReader, inventory: ObservationRecorder): Promise<{ systems: Located[]; managers: Located[]; chassis: Located[] }> {
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
  return { systems, managers, chassis };
}

/**
 * The dialect the tree shows: root vendor, product, OEM keys and Redfish version, the first manager's and system's
 * markers, every chassis' OEM keys, and the ids of every member read or listed (`detectDialect` weighs them).
 */
function detectTreeDialect(root: Resource, systems: readonly Located[], managers: readonly Located[], chassis: readonly Located[], listedOnly: readonly string[]): RedfishDialect {
  const firstManager = managers[0];
  return detectDialect({
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
    ...(typeof root.RedfishVersion === 'string' ? { redfishVersion: root.RedfishVersion } : {}),
    memberIds: [
      ...new Set(
        [...systems, ...managers, ...chassis]
          .flatMap((located) => [lastSegment(located.path), ...(typeof located.resource.Id === 'string' ? [located.resource.Id] : [])])
          .concat(listedOnly.map(lastSegment)),
      ),
    ],
  });
}

/** CPUs across systems: summed, or (for a dialect whose systems each describe the same CPUs) the largest count. */
function cpuCountOf(perSystem: readonly SystemProcessors[], dialect: RedfishDialect): number {
  return dialect.cpuCountAcrossSystems === 'max'
    ? Math.max(0, ...perSystem.map((entry) => entry.cpuCount))
    : perSystem.reduce((sum, entry) => sum + entry.cpuCount, 0);
}

/** The primary system's power state; a value outside Redfish's own is recorded, and the state is `Unknown`. */
function powerStateOf(primary: Located | undefined, powerRec: ObservationRecorder): PowerState {
  let powerState: PowerState = 'Unknown';
  if (primary) {
    const raw = primary.resource.PowerState;
    if (typeof raw === 'string' && POWER_STATES.has(raw as PowerState)) powerState = raw as PowerState;
    else if (raw !== undefined && raw !== null) powerRec.note(`${primary.path}#PowerState`, raw);
  }
  return powerState;
}

interface TreeFindings {
  nodeInventory: Omit<NodeInventoryObservedData, 'source' | 'dialect' | 'unrecognized' | 'unreadable' | 'latencyMs'>;
  components: FirmwareComponents;
  powerState: PowerState;
  nodeHealth: ReturnType<typeof rollUpHealth>['health'];
  conditions: ReturnType<typeof rollUpHealth>['conditions'];
  sensorSummary: ChassisSensors | undefined;
  sel: Awaited<ReturnType<typeof readSelEntries>> | undefined;
}

/** The read's observations, each with the read's source, dialect and latency and what its recorder noted. */
function assembleReading(dialect: RedfishDialect, reader: ResourceReader, recorders: Recorders, started: number, found: TreeFindings): NodeReading {
  const latencyMs = Math.round(performance.now() - started);
  const base = <R extends ObservationRecorder>(recorder: R) => ({
    source: 'redfish' as const,
    dialect: dialect.id,
    unrecognized: recorder.unrecognized,
    ...(recorder.unreadable.length > 0 ? { unreadable: recorder.unreadable } : {}),
    latencyMs,
  });
  const nodeInventory: NodeInventoryObservedData = { ...base(recorders.inventory), ...found.nodeInventory };
  const firmware = { ...base(recorders.firmware), components: found.components };
  const power: PowerStateObservedData = { ...base(recorders.power), powerState: found.powerState };
  const health: HealthObservedData = { ...base(recorders.health), health: found.nodeHealth, conditions: found.conditions };
  const sensors: SensorsObservedData | undefined = found.sensorSummary ? { ...base(recorders.sensors), ...found.sensorSummary } : undefined;
  const selObservation: SelEntriesObservedData | undefined = found.sel ? { ...base(recorders.sel), ...found.sel } : undefined;
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
