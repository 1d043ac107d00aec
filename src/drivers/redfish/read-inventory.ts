/**
 * The hardware inventory steps of a node read: system and BMC identities, processors and GPUs, memory, network
 * adapters and DPUs, and the session-limit hint. Each step reads what it needs through the read's `ResourceReader` and
 * records what it could not interpret in the inventory's recorder.
 */
import type { GpuDevice, NodeInventoryObservedData } from '../../../events/index.js';
import { canonicalVendor } from '../vendor-name.js';
import type { RedfishDialect } from './dialect.js';
import { linkedPcieDevice } from './linked-pcie-device.js';
import { asResource, canonicalPath, lastSegment, settleAll, type Located, type ObservationRecorder, type ResourceReader } from './resource-reader.js';

export function sortedDistinct(values: Array<string | undefined>): string[] {
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

export function idOf(located: Located, recorder: ObservationRecorder): string {
  return recorder.text(located.resource, located.path, 'Id') ?? lastSegment(located.path);
}

/** Each system's identity; a field the system does not give is taken from the first chassis it links to. */
export function systemIdentitiesOf(systems: readonly Located[], chassis: readonly Located[], inventory: ObservationRecorder): NodeInventoryObservedData['systems'] {
  const chassisByPath = new Map(chassis.map((located) => [located.path, located]));
  return systems.map((located) => {
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
      const value = field === 'manufacturer' ? canonicalVendor(pick(key)) : pick(key);
      if (value) identity[field] = value;
    }
    const uuid = identityUuid(inventory, resource, path);
    if (uuid) identity.uuid = uuid;
    const bios = inventory.text(resource, path, 'BiosVersion');
    if (bios) identity.biosVersion = bios;
    return identity;
  });
}

export interface SystemProcessors {
  located: Located;
  cpuCount: number;
  cpuModels: Array<string | undefined>;
  gpus: GpuDevice[];
}

/** One system's CPUs (from its Processors, else its ProcessorSummary) and the GPUs its Processors list. */
export async function readSystemProcessors(located: Located, reader: ResourceReader, inventory: ObservationRecorder, dialect: RedfishDialect): Promise<SystemProcessors> {
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
      // Some GPUs' Processor names no model; the PCIe device it links to, directly or through its PCIe functions, does.
      const pcie = await linkedPcieDevice(processor.resource, reader, inventory);
      if (pcie) model = inventory.text(pcie.resource, pcie.path, 'Model');
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
}

/** The primary system's memory: modules present (not absent, not of zero capacity) and the summary's total. */
export async function readMemory(primary: Located | undefined, reader: ResourceReader, inventory: ObservationRecorder): Promise<{ memoryModules: number; totalGiB: number | undefined }> {
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
  return { memoryModules, totalGiB };
}

/** GPUs from the dialect's own places (chassis of their own, or PCIe devices), for a tree whose Processors list none. */
export async function readDialectGpus(chassis: readonly Located[], reader: ResourceReader, inventory: ObservationRecorder, dialect: RedfishDialect): Promise<GpuDevice[]> {
  const gpuDevices: GpuDevice[] = [];
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
  return gpuDevices;
}

/** The chassis' network adapters, told apart into NICs and DPUs by the dialect's DPU pattern. */
export async function readNetworkAdapters(
  chassis: readonly Located[],
  reader: ResourceReader,
  inventory: ObservationRecorder,
  dialect: RedfishDialect,
): Promise<{ nicModels: Array<string | undefined>; dpuModels: Array<string | undefined> }> {
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
  return { nicModels, dpuModels };
}

/** Each manager's (BMC's) identity. */
export function bmcIdentitiesOf(managers: readonly Located[], inventory: ObservationRecorder): NodeInventoryObservedData['bmcs'] {
  return managers.map((located) => {
    const identity: NodeInventoryObservedData['bmcs'][number] = { id: idOf(located, inventory), path: located.path };
    const fields: Array<[keyof typeof identity, string]> = [
      ['manufacturer', 'Manufacturer'],
      ['model', 'Model'],
      ['firmwareVersion', 'FirmwareVersion'],
    ];
    for (const [field, key] of fields) {
      const text = inventory.text(located.resource, located.path, key);
      const value = field === 'manufacturer' ? canonicalVendor(text) : text;
      if (value) identity[field] = value;
    }
    const uuid = identityUuid(inventory, located.resource, located.path);
    if (uuid) identity.uuid = uuid;
    return identity;
  });
}

/**
 * The session limits a tree hints at. The only hint it gives is a Manager service's MaxConcurrentSessions. The command
 * shell's is the one that tracks the service's own sessions; a serial console takes one user by nature and a KVM often
 * one or two, so they are a hint only when no command shell is described, and never when they say 1.
 */
export function sessionLimitHints(managers: readonly Located[]): number[] {
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
  return limits;
}
