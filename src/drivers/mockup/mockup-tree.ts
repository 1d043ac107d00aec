import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';

/** The standard session collection. */
export const SESSIONS_PATH = '/redfish/v1/SessionService/Sessions';

/** The Redfish collections a partial capture may lack the file of (a resource folder is never listed as one). */
const collectionNames = /^(Systems|Managers|Chassis|Processors|Memory|PCIeDevices|PCIeFunctions|EthernetInterfaces|FirmwareInventory|SoftwareInventory|Storage|Drives|Volumes|NetworkAdapters|NetworkDeviceFunctions|Ports|PowerSupplies|Fans|Sensors|Batteries|LogServices|Entries)$/;

/** The resources of a Mockup-Creator folder, each read once (cached, absent ones too), and the collections they imply. */
export class MockupTree {
  readonly #cache = new Map<string, unknown>();
  #sessionPaths: Set<string> | undefined;

  constructor(
    private readonly folder: string,
    private readonly transform: ((path: string, body: unknown) => unknown) | undefined,
  ) {}

  /** The resource stored at `key` (a path with its query), or undefined. */
  async resource(key: string): Promise<unknown> {
    if (this.#cache.has(key)) return this.#cache.get(key);
    let body: unknown;
    try {
      body = JSON.parse(await readFile(join(this.folder, ...key.split('/').filter(Boolean), 'index.json'), 'utf8'));
    } catch {
      body = undefined;
    }
    this.#cache.set(key, body);
    return body;
  }

  /** The paths that take a session POST: the standard one and the one the service root advertises. */
  async sessionPaths(): Promise<Set<string>> {
    if (this.#sessionPaths) return this.#sessionPaths;
    const stored = await this.resource('/redfish/v1');
    // The root as it is served (a transform may advertise another path).
    const root = (this.transform && stored !== undefined ? this.transform('/redfish/v1', structuredClone(stored)) : stored) as { Links?: { Sessions?: { '@odata.id'?: unknown } } } | undefined;
    const advertised = root?.Links?.Sessions?.['@odata.id'];
    this.#sessionPaths = new Set([SESSIONS_PATH, ...(typeof advertised === 'string' ? [advertised.replace(/\/+$/, '')] : [])]);
    return this.#sessionPaths;
  }

  /** A collection the capture has no file for, listed from the member folders it does have (partial captures). */
  async impliedCollection(key: string): Promise<unknown> {
    if (key.includes('?') || !key.startsWith('/redfish/v1/') || !collectionNames.test(key.split('/').pop() ?? '')) return undefined;
    let entries: string[];
    try {
      entries = await readdir(join(this.folder, ...key.split('/').filter(Boolean)));
    } catch {
      return undefined;
    }
    const members: Array<{ '@odata.id': string }> = [];
    for (const entry of entries.sort()) {
      if (entry.includes('?') || (await this.resource(`${key}/${entry}`)) === undefined) continue;
      members.push({ '@odata.id': `${key}/${entry}` });
    }
    if (members.length === 0) return undefined;
    return { '@odata.id': key, Name: `${key.split('/').pop()} Collection (implied by the capture's folders)`, Members: members, 'Members@odata.count': members.length };
  }
}
