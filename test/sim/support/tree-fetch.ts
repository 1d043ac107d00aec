/**
 * Reads a Redfish tree in memory the way a BMC serves it: a trailing slash and path case are ignored, and
 * `?$skip=N` names a stored page. Lets the drivers read a generated tree or a capture without a socket, which is
 * how a vendor profile is held against the capture it was written from.
 */
import { DriverError } from '../../../src/drivers/index.js';
import type { RedfishTree } from '../../../src/sim/index.js';

/** A `fetch(path)` over a tree; an absent resource rejects with `DRIVER_NOT_FOUND`, as the HTTP client does on 404. */
export function treeFetch(tree: RedfishTree): (path: string) => Promise<unknown> {
  const byLower = new Map([...tree].map(([path, body]) => [path.toLowerCase(), body]));
  return async (path: string) => {
    const [pathname = '', query = ''] = path.split('?', 2);
    const trimmed = pathname.length > 1 ? pathname.replace(/\/+$/, '') : pathname;
    const skip = new URLSearchParams(query).get('$skip');
    const key = skip !== null && skip !== '0' ? `${trimmed}?$skip=${skip}` : trimmed;
    const body = tree.get(key) ?? byLower.get(key.toLowerCase());
    if (body === undefined) throw new DriverError('DRIVER_NOT_FOUND', `${path} is not in the tree`, { url: path });
    return structuredClone(body);
  };
}

/** The Redfish collections a partial capture may lack the file of (as the drivers' mockup server lists them). */
const collectionNames = /^(Systems|Managers|Chassis|Processors|Memory|PCIeDevices|EthernetInterfaces|FirmwareInventory|SoftwareInventory|NetworkAdapters|PowerSupplies|Fans|Sensors|LogServices|Entries)$/;

/**
 * `tree` with every collection it lacks the resource of listed from the members it holds, as the drivers' mockup
 * server serves a partial capture (`redfish-partial/`: single resources, no collections). A tree that has its
 * collections is returned unchanged.
 */
export function withImpliedCollections(tree: RedfishTree): RedfishTree {
  const out: RedfishTree = new Map(tree);
  const implied = new Map<string, string[]>();
  for (const path of tree.keys()) {
    const parts = path.split('/');
    for (let at = 3; at < parts.length - 1; at++) {
      const collection = parts.slice(0, at + 1).join('/');
      if (!collectionNames.test(parts[at]!) || tree.has(collection)) continue;
      const member = parts.slice(0, at + 2).join('/');
      const members = implied.get(collection) ?? [];
      if (!members.includes(member)) members.push(member);
      implied.set(collection, members);
    }
  }
  for (const [collection, members] of implied) {
    out.set(collection, { '@odata.id': collection, Name: `${collection.split('/').pop()} Collection (implied)`, Members: members.map((id) => ({ '@odata.id': id })), 'Members@odata.count': members.length });
  }
  return out;
}
