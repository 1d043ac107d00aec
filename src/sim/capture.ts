/**
 * A capture tree: one Mockup-Creator folder (`redfish/v1/.../index.json`) loaded once and shared by every BMC
 * built from it. Each resource is kept as its compact JSON split around the values that differ per BMC (identity,
 * BMC firmware version, the link prefix in path-prefix mode), so serving it for one BMC is a join of shared strings
 * with that BMC's few values: nothing per BMC is copied.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { basename, join } from 'node:path';
import { SimError } from './errors.ts';
import { collectIdentity, pruneNestedHostnames, type IdentityToken } from './identity.ts';
import { fnv1a } from './random.ts';

/** A value that differs per BMC inside a shared resource body or path. */
export type CaptureSlot =
  | { kind: 'identity'; token: IdentityToken }
  /** The BMC firmware version (the core of `Manager.FirmwareVersion`), which is drawn from a mix per BMC. */
  | { kind: 'firmware'; original: string }
  /** The opening `"/redfish/v1` of a link: served as `"<prefix>/redfish/v1` in path-prefix mode. */
  | { kind: 'link' };

export interface ResourceTemplate {
  /** The path as stored, with `?$skip=N` for a stored page; no trailing slash. */
  path: string;
  /** Literal pieces of the compact JSON body; `parts.length === slots.length + 1`. */
  parts: string[];
  /** Index into `Capture.slots` for each gap between parts. */
  slots: number[];
}

export interface CaptureLatency {
  /** Average response time recorded by Mockup Creator, in milliseconds. */
  averageMs: number;
  minimumMs: number;
  maximumMs: number;
  /** The resource that took `maximumMs` when captured. */
  slowestPath: string | undefined;
}

export interface Capture {
  name: string;
  dir: string;
  /** `ServiceRoot.Vendor`, else the first manager's or system's `Manufacturer`. */
  vendor: string | undefined;
  product: string | undefined;
  resources: Map<string, ResourceTemplate>;
  /** The same resources by lower-cased path: iLO links `/redfish/v1/systems/1/bios` to the stored `Bios`. */
  resourcesByLowerPath: Map<string, ResourceTemplate>;
  slots: CaptureSlot[];
  /** Slots that occur in some resource path (a Dell firmware inventory id holds the version, for instance). */
  pathSlots: number[];
  latency: CaptureLatency;
  /**
   * Where the service root says sessions are created (`Links.Sessions`, iLO 4's `links.Sessions.href`), when that is
   * not the standard `/redfish/v1/SessionService/Sessions` (iDRAC 8: `/redfish/v1/Sessions`).
   */
  sessionsPath?: string;
  /** The BMC firmware version as captured (the core of the first manager's `FirmwareVersion`, else the inventory's `BMC` entry). */
  firmwareVersion: string | undefined;
  /** `SessionService.SessionTimeout` in seconds, when the capture has one. */
  sessionTimeoutS: number | undefined;
  /** The firmware inventory members, by path. */
  firmwareInventory: string[];
  /** Total bytes of the shared bodies (for the memory report). */
  bytes: number;
}

const LINK = '"/redfish/v1';

/** A Redfish tree in memory: resource bodies by canonical path (`?$skip=N` kept for stored pages). */
export type RedfishTree = Map<string, unknown>;

/** Reads a Mockup-Creator folder into a tree. Throws SIM_MOCKUP_INVALID when it holds no `redfish/v1/index.json`. */
export function readMockupTree(dir: string): RedfishTree {
  const root = join(dir, 'redfish', 'v1');
  const raw: RedfishTree = new Map();
  try {
    statSync(join(root, 'index.json'));
  } catch {
    throw new SimError('SIM_MOCKUP_INVALID', `${dir} is not a Mockup-Creator folder (no redfish/v1/index.json)`, { dir });
  }
  walk(root, '/redfish/v1', raw);
  return raw;
}

/** Loads a Mockup-Creator folder (a real capture) as a capture tree, with the latency its README recorded. */
export function loadCapture(dir: string, name: string = basename(dir)): Capture {
  return buildCapture({ name, dir, tree: readMockupTree(dir), latency: readLatency(dir) });
}

export interface CaptureSource {
  name: string;
  /** The folder it was read from; for a generated tree, a label such as `profile:dell`. */
  dir: string;
  tree: RedfishTree;
  latency: CaptureLatency;
}

/**
 * Prepares a tree for serving to many BMCs: finds the identity values and the BMC firmware version, and splits
 * every body around them. The same code serves real captures and trees generated from vendor profiles.
 */
export function buildCapture({ name, dir, tree: raw, latency }: CaptureSource): Capture {
  const identity = new Map<string, IdentityToken>();
  for (const resource of raw.values()) collectIdentity(resource, identity);
  pruneNestedHostnames(identity);

  const serviceRoot = raw.get('/redfish/v1') as Record<string, unknown> | undefined;
  const managers = membersOf(raw.get('/redfish/v1/Managers')).map((path) => raw.get(path) as Record<string, unknown> | undefined);
  const systems = membersOf(raw.get('/redfish/v1/Systems')).map((path) => raw.get(path) as Record<string, unknown> | undefined);
  const managerFirmware = managers.map((manager) => manager?.['FirmwareVersion']).find((value) => typeof value === 'string') as
    | string
    | undefined;
  // A BMC whose Managers say no version (HPE Cray EX's nC) states it only in its firmware inventory entry `BMC`.
  const firmwareVersion = managerFirmware ? firmwareCore(managerFirmware) : inventoryBmcVersion(raw);

  const slots: CaptureSlot[] = [{ kind: 'link' }];
  const patternSources: string[] = [escapeRegExp(LINK)];
  if (firmwareVersion) {
    slots.push({ kind: 'firmware', original: firmwareVersion });
    patternSources.push(`(?<![\\d.])${escapeRegExp(firmwareVersion)}(?![\\d.])`);
  }
  const tokens = [...identity.values()].sort((a, b) => b.original.length - a.original.length);
  for (const token of tokens) {
    slots.push({ kind: 'identity', token });
    patternSources.push(escapeRegExp(token.original));
  }
  // One alternation, longest identity first, so a value that contains another is replaced whole.
  const pattern = new RegExp(patternSources.map((source) => `(${source})`).join('|'), 'g');
  const slotOfGroup = (match: RegExpExecArray): number => {
    for (let group = 1; group < match.length; group++) if (match[group] !== undefined) return group - 1;
    return 0;
  };

  const resources = new Map<string, ResourceTemplate>();
  const pathSlots = new Set<number>();
  let bytes = 0;
  for (const [path, resource] of raw) {
    const body = JSON.stringify(resource);
    const parts: string[] = [];
    const slotIds: number[] = [];
    let last = 0;
    for (const match of body.matchAll(pattern)) {
      parts.push(body.slice(last, match.index));
      slotIds.push(slotOfGroup(match));
      last = match.index + match[0].length;
    }
    parts.push(body.slice(last));
    bytes += body.length;
    resources.set(path, { path, parts, slots: slotIds });
    for (const match of path.matchAll(pattern)) {
      const slot = slotOfGroup(match);
      if (slot !== 0) pathSlots.add(slot);
    }
  }

  const sessionService = raw.get('/redfish/v1/SessionService') as Record<string, unknown> | undefined;
  const timeout = sessionService?.['SessionTimeout'];
  return {
    name,
    dir,
    ...advertisedSessions(serviceRoot),
    vendor: stringOr(serviceRoot?.['Vendor'], managers[0]?.['Manufacturer'], systems[0]?.['Manufacturer']),
    product: stringOr(serviceRoot?.['Product'], systems[0]?.['Model']),
    resources,
    resourcesByLowerPath: new Map([...resources].map(([path, template]) => [path.toLowerCase(), template])),
    slots,
    pathSlots: [...pathSlots],
    latency,
    firmwareVersion,
    sessionTimeoutS: typeof timeout === 'number' && timeout > 0 ? timeout : undefined,
    firmwareInventory: membersOf(raw.get('/redfish/v1/UpdateService/FirmwareInventory')),
    bytes,
  };
}

/**
 * The part of a manager's `FirmwareVersion` that is the version proper: `iLO 5 v2.72` -> `2.72` (HPE's firmware
 * inventory says `2.72 Sep 04 2022`, so only the core appears everywhere); other vendors use the whole string.
 */
export function firmwareCore(firmwareVersion: string): string {
  const iloStyle = /\bv(\d+(?:\.\d+)+)$/.exec(firmwareVersion);
  return iloStyle?.[1] ?? firmwareVersion;
}

/** The canonical path of a stored resource: no trailing slash; pages keep their `?$skip=N`. */
export function canonicalPath(path: string): string {
  return path.length > 1 && path.endsWith('/') ? path.replace(/\/+$/, '') : path;
}

function walk(dir: string, path: string, into: Map<string, unknown>): void {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.isDirectory()) {
      walk(join(dir, entry.name), `${path}/${entry.name}`, into);
    } else if (entry.name === 'index.json') {
      const text = readFileSync(join(dir, entry.name), 'utf8');
      let parsed: unknown;
      try {
        parsed = JSON.parse(text);
      } catch (error) {
        throw new SimError('SIM_MOCKUP_INVALID', `${join(dir, entry.name)} is not JSON: ${(error as Error).message}`, {
          file: join(dir, entry.name),
        });
      }
      // Mockup Creator stores `Collection?$skip=50` as a sibling folder of `Collection`.
      const stored = path.replace(/\/([^/]*)\?\$skip=(\d+)$/, '/$1?$$skip=$2');
      into.set(canonicalPath(stored), parsed);
    }
  }
}

function advertisedSessions(serviceRoot: Record<string, unknown> | undefined): { sessionsPath?: string } {
  const links = serviceRoot?.['Links'] as { Sessions?: { '@odata.id'?: unknown } } | undefined;
  const legacy = serviceRoot?.['links'] as { Sessions?: { href?: unknown } } | undefined;
  const advertised = links?.Sessions?.['@odata.id'] ?? legacy?.Sessions?.href;
  if (typeof advertised !== 'string' || !advertised.startsWith('/redfish/v1/')) return {};
  const path = canonicalPath(advertised);
  return path === '/redfish/v1/SessionService/Sessions' ? {} : { sessionsPath: path };
}

/** The version of the firmware inventory member named `BMC` (by `Id` or `Name`), if the tree has one. */
function inventoryBmcVersion(raw: RedfishTree): string | undefined {
  const service = raw.get('/redfish/v1/UpdateService') as Record<string, unknown> | undefined;
  const link = ((service?.['FirmwareInventory'] ?? service?.['SoftwareInventory']) as { '@odata.id'?: unknown } | undefined)?.['@odata.id'];
  if (typeof link !== 'string') return undefined;
  for (const path of membersOf(raw.get(link.replace(/\/+$/, '')))) {
    const member = raw.get(path) as Record<string, unknown> | undefined;
    if ((member?.['Id'] === 'BMC' || member?.['Name'] === 'BMC') && typeof member['Version'] === 'string' && member['Version'].length > 0) return member['Version'];
  }
  return undefined;
}

function membersOf(collection: unknown): string[] {
  const members = (collection as { Members?: unknown } | undefined)?.Members;
  if (!Array.isArray(members)) return [];
  return members
    .map((member) => (member as { '@odata.id'?: unknown })['@odata.id'])
    .filter((id): id is string => typeof id === 'string')
    .map(canonicalPath);
}

/** The response times Mockup Creator recorded in the folder's README (a plain 200 ms average without one). */
export function readLatency(dir: string): CaptureLatency {
  let text = '';
  try {
    text = readFileSync(join(dir, 'README'), 'utf8');
  } catch {
    // A mockup without a README gets a plain 200 ms average: the middle of the captures we have.
  }
  const seconds = (label: string): [number | undefined, string | undefined] => {
    const match = new RegExp(`${label} response time:\\s*(-?[\\d.]+)(?:,\\s*(\\S+))?`).exec(text);
    return [match?.[1] !== undefined ? Number(match[1]) * 1000 : undefined, match?.[2]];
  };
  const [averageMs = 200] = seconds('Average');
  const [minimumMs] = seconds('Minimum');
  const [maximumMs, slowestPath] = seconds('Maximum');
  return {
    averageMs: Math.max(1, averageMs),
    // Clock skew during capture can record a negative minimum (nvidia_dpu); never go below a tenth of the average.
    minimumMs: Math.max(averageMs / 10, minimumMs ?? averageMs / 2),
    maximumMs: Math.max(averageMs, maximumMs ?? averageMs),
    slowestPath: slowestPath ? canonicalPath(slowestPath) : undefined,
  };
}

function stringOr(...values: unknown[]): string | undefined {
  return values.find((value): value is string => typeof value === 'string' && value.length > 0);
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** A stable short hash of a served body, used as its weak ETag. */
export function bodyTag(body: string): string {
  return fnv1a(body).toString(16).padStart(8, '0') + (body.length % 65536).toString(16);
}
