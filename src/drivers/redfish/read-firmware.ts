/**
 * The firmware inventory of a node read: its members (read alongside the rest of the tree, see `readRedfishNode`),
 * each normalized by the dialect's version rules, and the running version of a component the dialect names.
 */
import type { FirmwareInventoryObservedData } from '../../../events/index.js';
import { normalizeFirmwareVersion } from '../../firmware/index.js';
import type { RedfishDialect } from './dialect.js';
import { idOf } from './read-inventory.js';
import type { Located, ObservationRecorder, Resource, ResourceReader } from './resource-reader.js';

export type FirmwareComponents = FirmwareInventoryObservedData['components'];

/** The firmware inventory's members: `UpdateService.FirmwareInventory`, else `SoftwareInventory`. */
export async function readFirmwareMembers(root: Resource, rootPath: string, reader: ResourceReader, firmwareRec: ObservationRecorder): Promise<Located[]> {
  const updateServicePath = firmwareRec.link(root, rootPath, 'UpdateService');
  const updateService = updateServicePath ? await reader.read(updateServicePath, firmwareRec) : undefined;
  // Firmware is listed in `FirmwareInventory`; an Intel S2600 BMC lists it in `SoftwareInventory` instead
  // (`intel_s2600bpb/redfish/v1/UpdateService`), which is read only when there is no `FirmwareInventory`.
  const firmwareCollection =
    updateService && updateServicePath
      ? (firmwareRec.link(updateService, updateServicePath, 'FirmwareInventory') ?? firmwareRec.link(updateService, updateServicePath, 'SoftwareInventory'))
      : undefined;
  return firmwareCollection ? reader.members(firmwareCollection, firmwareRec) : [];
}

/** The members as components: a version that is not text (or is too long to be one) is recorded, not kept. */
export function firmwareComponents(firmwareMembers: readonly Located[], firmwareRec: ObservationRecorder, dialect: RedfishDialect): FirmwareComponents {
  const components: FirmwareComponents = [];
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
    const entry: FirmwareComponents[number] = { id, component, version: rawVersion, normalizedVersion: normalized, normalizationRule: rule };
    const updateable = firmwareRec.boolean(resource, path, 'Updateable');
    if (updateable !== undefined) entry.updateable = updateable;
    const slot = dialect.firmware.slotPrefixes?.find((prefix) => prefix.pattern.test(id))?.slot;
    if (slot) entry.slot = slot;
    components.push(entry);
  }
  return components;
}

/** The running version of the component `pattern` names (by id or name): the installed or current slot's. */
export function firmwareVersionOf(components: FirmwareComponents, pattern: RegExp | undefined): string | undefined {
  if (!pattern) return undefined;
  const candidates = components.filter((c) => pattern.test(c.id) || pattern.test(c.component));
  const running = candidates.find((c) => c.slot === undefined || c.slot === 'installed' || c.slot === 'current');
  return running?.version.trim() || undefined;
}
