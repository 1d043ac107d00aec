/**
 * What is where, as observed: a pure fold of registrations and driver observations into one record per node
 * and one per firmware component. Each fact keeps when it was last observed; a firmware version keeps when it
 * was first seen on the node, so the heterogeneity report can put the oldest first.
 */
import type { BmcCertificateObservedData, FirmwareInventoryObservedData, NodeInventoryObservedData } from '../../events/index.js';

export interface NodeInventory {
  nodeId: string;
  site: string | null;
  rack: string | null;
  manufacturer: string | null;
  model: string | null;
  serial: string | null;
  bmcModel: string | null;
  bmcFirmware: string | null;
  biosVersion: string | null;
  cpuCount: number | null;
  gpuModel: string | null;
  gpuCount: number | null;
  memoryGiB: number | null;
  dialect: string | null;
  source: string | null;
  firstSeenAt: number | null;
  inventoryObservedAt: number | null;
  firmwareObservedAt: number | null;
  /** The BMC's certificate as last trusted: its SHA-256 fingerprint, when it expires, whether it signs itself. */
  certificateFingerprint: string | null;
  certificateNotAfter: number | null;
  certificateSelfSigned: boolean | null;
}

export interface FirmwareFact {
  nodeId: string;
  component: string;
  version: string;
  normalizedVersion: string;
  normalizationRule: string;
  dialect: string;
  /** `Updateable` as the BMC states it; null when it does not say (Intel S2600, older firmware). */
  updateable: boolean | null;
  firstSeenAt: number;
  lastObservedAt: number;
}

export function emptyInventory(nodeId: string): NodeInventory {
  return {
    nodeId,
    site: null,
    rack: null,
    manufacturer: null,
    model: null,
    serial: null,
    bmcModel: null,
    bmcFirmware: null,
    biosVersion: null,
    cpuCount: null,
    gpuModel: null,
    gpuCount: null,
    memoryGiB: null,
    dialect: null,
    source: null,
    firstSeenAt: null,
    inventoryObservedAt: null,
    firmwareObservedAt: null,
    certificateFingerprint: null,
    certificateNotAfter: null,
    certificateSelfSigned: null,
  };
}

/** The certificate a BMC presented and the poller trusted (pinned, accepted, site CA or insecure). */
export function observeCertificate(state: NodeInventory, data: BmcCertificateObservedData): NodeInventory {
  return { ...state, certificateFingerprint: data.certificate.fingerprint, certificateNotAfter: Date.parse(data.certificate.validTo), certificateSelfSigned: data.certificate.selfSigned };
}

export function registerNode(state: NodeInventory, site: string, rack: string): NodeInventory {
  return { ...state, site, rack };
}

export function observeInventory(state: NodeInventory, data: NodeInventoryObservedData, at: number): NodeInventory {
  return {
    ...state,
    manufacturer: data.system.manufacturer ?? state.manufacturer,
    model: data.system.model ?? state.model,
    serial: data.system.serialNumber ?? state.serial,
    bmcModel: data.bmc.model ?? state.bmcModel,
    bmcFirmware: data.bmc.firmwareVersion ?? state.bmcFirmware,
    biosVersion: data.biosVersion ?? data.system.biosVersion ?? state.biosVersion,
    cpuCount: data.cpus?.count ?? state.cpuCount,
    gpuModel: data.gpus ? data.gpus.models.join('; ') || null : state.gpuModel,
    gpuCount: data.gpus?.count ?? state.gpuCount,
    memoryGiB: data.memory?.totalGiB ?? state.memoryGiB,
    dialect: data.dialect,
    source: data.source,
    firstSeenAt: state.firstSeenAt ?? at,
    inventoryObservedAt: at,
  };
}

/** Copies that do not run (Dell `Previous-`, Supermicro `Golden_`/`Backup_`/`Staging_`) are not the node's firmware. */
const idleSlots = new Set(['previous', 'staging', 'golden', 'backup']);

/**
 * The node's firmware after an inventory observation: the reported components replace the previous set; a
 * component whose version did not change keeps its first-seen time.
 */
export function observeFirmware(
  state: NodeInventory,
  previous: ReadonlyMap<string, FirmwareFact>,
  data: FirmwareInventoryObservedData,
  at: number,
): { state: NodeInventory; firmware: Map<string, FirmwareFact> } {
  const firmware = new Map<string, FirmwareFact>();
  for (const component of data.components) {
    if (component.slot && idleSlots.has(component.slot)) continue;
    if (component.normalizationRule === 'not-present') continue;
    const before = previous.get(component.component);
    const sameVersion = before !== undefined && before.normalizedVersion === component.normalizedVersion;
    firmware.set(component.component, {
      nodeId: state.nodeId,
      component: component.component,
      version: component.version,
      normalizedVersion: component.normalizedVersion,
      normalizationRule: component.normalizationRule,
      dialect: data.dialect,
      updateable: component.updateable ?? null,
      firstSeenAt: sameVersion ? before.firstSeenAt : at,
      lastObservedAt: at,
    });
  }
  return { state: { ...state, dialect: data.dialect, source: data.source, firstSeenAt: state.firstSeenAt ?? at, firmwareObservedAt: at }, firmware };
}
