/**
 * The building blocks of a generated Redfish tree: a writer that writes resources and collections in a profile's own
 * style, a status block, and the expansion of a profile's repeated parts.
 */
import type { BmcProfile, Repeated, StatusSpec } from './profiles/bmc-profile.ts';
import type { RedfishTree } from './capture.ts';

export type Body = Record<string, unknown>;

export const ROOT = '/redfish/v1';

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

/** `value` with every string inside it passed through `replace`. */
export function replaceDeep(value: unknown, replace: (text: string) => string): unknown {
  if (typeof value === 'string') return replace(value);
  if (Array.isArray(value)) return value.map((item) => replaceDeep(item, replace));
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value as Body).map(([key, item]) => [key, replaceDeep(item, replace)]));
  }
  return value;
}

/** Writes resources in the profile's own style (`@odata.context` or not, trailing slashes or not). */
export class TreeWriter {
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

export function withoutUndefined(body: Body): Body {
  return Object.fromEntries(Object.entries(body).filter(([, value]) => value !== undefined));
}

export function status(spec: StatusSpec | undefined, fallback: StatusSpec = { state: 'Enabled', health: 'OK' }): Body | undefined {
  const merged = { ...fallback, ...spec };
  if (merged.omit) return undefined;
  const out: Body = {};
  if (merged.state) out['State'] = merged.state;
  if (merged.health) out['Health'] = merged.health;
  if (merged.healthRollup) out[merged.rollupSpelling ?? 'HealthRollup'] = merged.healthRollup;
  if (merged.conditions) out['Conditions'] = merged.conditions;
  return out;
}

