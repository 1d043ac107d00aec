/**
 * Tolerant access to Redfish resources: typed field reads that record what they could not interpret, collection
 * walks that follow `Members@odata.nextLink`, and a per-read record of unrecognized values and unreadable
 * resources. A wrong type or a missing member is recorded, never thrown; only failures that make the whole read
 * meaningless (auth, session limit, deadline, unreachable, 5xx) propagate.
 */
import { DriverError } from '../driver-error.js';
import { withoutCredentials } from '../../../events/index.js';
import type { UnrecognizedValue } from '../../../events/index.js';
import { storableText } from '../storable-text.js';
import { placeholderKindOf, presentText } from '../placeholder.js';

export type Resource = Record<string, unknown>;

/** A resource with the path it was read from. */
export interface Located {
  path: string;
  resource: Resource;
}

/** Codes that concern one resource only: the read continues without it. */
const RESOURCE_LOCAL_CODES = new Set(['DRIVER_NOT_FOUND', 'DRIVER_PROTOCOL', 'DRIVER_REJECTED', 'DRIVER_CONFLICT', 'DRIVER_REDIRECT_REFUSED']);

const MAX_VALUE_CHARS = 1024;
const MAX_TEXT_CHARS = 512;

/** A raw value bounded in size, so one huge OEM blob cannot bloat an observation; credential-named members redacted. */
export function boundedValue(raw: unknown): unknown {
  let text: string | undefined;
  let value: unknown;
  try {
    value = withoutCredentials(raw);
    text = JSON.stringify(value);
  } catch {
    return { unserializable: storableText(String(raw).slice(0, 200)) };
  }
  if (text === undefined) return null;
  if (text.length <= MAX_VALUE_CHARS) return value;
  return { truncated: true, chars: text.length, preview: storableText(text.slice(0, 256)) };
}

export function asResource(value: unknown): Resource | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Resource) : undefined;
}

/** `/redfish/v1/Systems/1/` and `/redfish/v1/Systems/1` are one resource (HPE writes the slash). */
export function canonicalPath(path: string): string {
  // Nearly every link: no query and no final slash, already canonical (this runs for every link of a read).
  if (!path.endsWith('/') && !path.includes('?')) return path;
  const [pathname = '', query] = path.split('?', 2);
  const trimmed = pathname.length > 1 ? pathname.replace(/\/+$/, '') : pathname;
  return query === undefined ? trimmed : `${trimmed}?${query}`;
}

export function lastSegment(path: string): string {
  const segments = canonicalPath(path).split('?')[0]!.split('/');
  return segments[segments.length - 1] ?? '';
}

export class ObservationRecorder {
  readonly unrecognized: UnrecognizedValue[] = [];
  readonly unreadable: Array<{ path: string; code: string }> = [];

  note(path: string, value: unknown): void {
    this.unrecognized.push({ path, value: boundedValue(value) });
  }

  /**
   * A string field: trimmed, `undefined` when absent, null, blank or a vendor placeholder (`N/A`, `To Be Filled By
   * O.E.M.`, a serial of zeros: `presentText`, the one place that decides it); any other type is recorded.
   */
  text(resource: Resource, path: string, key: string): string | undefined {
    const value = resource[key];
    if (value === undefined || value === null) return undefined;
    if (typeof value === 'string') {
      const trimmed = value.trim();
      // No identity or version string is this long; a BMC that sends one is not believed (and the event stays small).
      if (trimmed.length > MAX_TEXT_CHARS) {
        this.note(`${path}#${key}`, value);
        return undefined;
      }
      return presentText(trimmed, placeholderKindOf(key));
    }
    this.note(`${path}#${key}`, value);
    return undefined;
  }

  number(resource: Resource, path: string, key: string): number | undefined {
    const value = resource[key];
    if (value === undefined || value === null) return undefined;
    if (typeof value === 'number' && Number.isFinite(value)) return value;
    this.note(`${path}#${key}`, value);
    return undefined;
  }

  boolean(resource: Resource, path: string, key: string): boolean | undefined {
    const value = resource[key];
    if (value === undefined || value === null) return undefined;
    if (typeof value === 'boolean') return value;
    this.note(`${path}#${key}`, value);
    return undefined;
  }

  object(resource: Resource, path: string, key: string): Resource | undefined {
    const value = resource[key];
    if (value === undefined || value === null) return undefined;
    const record = asResource(value);
    if (!record) this.note(`${path}#${key}`, value);
    return record;
  }

  array(resource: Resource, path: string, key: string): unknown[] {
    const value = resource[key];
    if (value === undefined || value === null) return [];
    if (Array.isArray(value)) return value;
    this.note(`${path}#${key}`, value);
    return [];
  }

  /** The `@odata.id` of a link property (`{ "@odata.id": "..." }`), recorded when malformed. */
  link(resource: Resource, path: string, key: string): string | undefined {
    const value = resource[key];
    if (value === undefined || value === null) return undefined;
    const id = asResource(value)?.['@odata.id'];
    if (typeof id === 'string' && id.startsWith('/')) return id;
    this.note(`${path}#${key}`, value);
    return undefined;
  }

  readonly #oemNamespacesNoted = new Set<string>();

  /**
   * Records each OEM namespace the dialect does not understand, once per reading (at the first resource that has
   * it): a generic read of a vendor's tree names what it did not understand in a few lines, not one per resource.
   */
  oem(resource: Resource, path: string, known: readonly string[]): void {
    const oem = resource.Oem;
    if (oem === undefined || oem === null) return;
    const record = asResource(oem);
    if (!record) {
      this.note(`${path}#Oem`, oem);
      return;
    }
    for (const [namespace, value] of Object.entries(record)) {
      // `@odata.id`/`@odata.type` annotate the Oem object itself; they are not vendor data.
      if (namespace.startsWith('@odata.')) continue;
      if (known.includes(namespace) || this.#oemNamespacesNoted.has(namespace)) continue;
      this.#oemNamespacesNoted.add(namespace);
      this.note(`${path}#Oem.${namespace}`, value);
    }
  }
}

export type FetchResource = (path: string) => Promise<unknown>;

/** Runs every task, waits for all of them, then rethrows the first failure (no request outlives the read). */
export async function settleAll<T>(tasks: Array<Promise<T>>): Promise<T[]> {
  const results = await Promise.allSettled(tasks);
  const failure = results.find((result): result is PromiseRejectedResult => result.status === 'rejected');
  if (failure) throw failure.reason;
  return results.map((result) => (result as PromiseFulfilledResult<T>).value);
}

/**
 * The `$expand` query a service root says it answers (`ProtocolFeaturesSupported.ExpandQuery`): a collection's members
 * given in its own answer, one level down and no `Links`. Undefined when the root does not announce `NoLinks`.
 */
export function expandQueryOf(root: Resource): string | undefined {
  const expand = asResource(asResource(root.ProtocolFeaturesSupported)?.ExpandQuery);
  if (expand?.NoLinks !== true) return undefined;
  return expand.Levels === true ? '$expand=.($levels=1)' : '$expand=.';
}

/** A request (a path or URL) that asks a collection for its members expanded (`?$expand=`). */
export function isExpandQuery(path: string): boolean {
  return /[?&]\$expand=/.test(path);
}

/** A member listed by a collection: its link, and the resource itself when the collection gave it expanded. */
interface ListedMember {
  link: string;
  resource?: Resource;
}

/** A member the collection gave whole (any property but `@odata.*`), not just its link. */
function expandedMember(member: Resource): boolean {
  return Object.keys(member).some((key) => !key.startsWith('@odata.'));
}

/**
 * What a BMC may answer to a `$expand` it announced and cannot serve, beside the resource-local codes: the feature not
 * licensed (iDRAC 8: a 400 "No sufficient LICENSE"), or a 5xx such as 501 Not Implemented. Either turns expansion off
 * for the read; the plain request that follows then says whether the BMC itself is unavailable.
 */
const EXPAND_REFUSAL_CODES = new Set([...RESOURCE_LOCAL_CODES, 'DRIVER_UNSUPPORTED', 'DRIVER_BMC_UNAVAILABLE']);

/** Reads Redfish resources through `fetch`, recording local failures in `recorder` and rethrowing global ones. */
export class ResourceReader {
  private fetched = 0;
  #expand: string | undefined;

  constructor(
    private readonly fetch: FetchResource,
    private readonly maxResources: number,
  ) {}

  get resourcesFetched(): number {
    return this.fetched;
  }

  /**
   * Asks collections for their members expanded (`expandQueryOf` the service root): one request per collection page
   * instead of one per member. A BMC that refuses the query, or answers it without a `Members` array, is asked
   * plainly for the rest of this read; members it leaves as links are fetched one by one as without it.
   */
  expandWith(query: string | undefined): void {
    this.#expand = query;
  }

  /** A resource, or `undefined` when it is missing or unreadable (recorded). */
  async read(path: string, recorder: ObservationRecorder): Promise<Resource | undefined> {
    if (this.fetched >= this.maxResources) {
      recorder.unreadable.push({ path, code: 'BUDGET_EXHAUSTED' });
      return undefined;
    }
    this.fetched += 1;
    try {
      const body = await this.fetch(path);
      const resource = asResource(body);
      if (!resource) {
        recorder.note(path, body);
        recorder.unreadable.push({ path, code: 'DRIVER_PROTOCOL' });
      }
      return resource;
    } catch (error) {
      if (error instanceof DriverError && RESOURCE_LOCAL_CODES.has(error.code)) {
        recorder.unreadable.push({ path, code: error.code });
        return undefined;
      }
      throw error;
    }
  }

  /**
   * The first page of a collection asked with `$expand`, or undefined when the BMC would not answer it with a
   * `Members` array (`EXPAND_REFUSAL_CODES`, or an answer without `Members`): expansion is then off for the rest of the read
   * and nothing is recorded, since the plain request that follows says what there is to say.
   */
  async #expandedPage(collectionPath: string, query: string): Promise<Resource | undefined> {
    if (this.fetched >= this.maxResources) return undefined;
    this.fetched += 1;
    try {
      const page = asResource(await this.fetch(`${collectionPath}?${query}`));
      if (page && Array.isArray(page.Members) && page.error === undefined) return page;
    } catch (error) {
      if (!(error instanceof DriverError && EXPAND_REFUSAL_CODES.has(error.code))) throw error;
    }
    if (this.#expand === query) this.#expand = undefined;
    return undefined;
  }

  /** The members a collection lists, across every `Members@odata.nextLink` page (loops are cut), expanded if asked. */
  async #listMembers(collectionPath: string, recorder: ObservationRecorder, expand: boolean): Promise<ListedMember[]> {
    const members: ListedMember[] = [];
    const seenPages = new Set<string>();
    const seenMembers = new Set<string>();
    const query = expand && !collectionPath.includes('?') ? this.#expand : undefined;
    let first = query ? await this.#expandedPage(collectionPath, query) : undefined;
    let next: string | undefined = collectionPath;
    while (next && !seenPages.has(canonicalPath(next)) && seenPages.size < 200) {
      seenPages.add(canonicalPath(next));
      const page = first ?? (await this.read(next, recorder));
      first = undefined;
      if (!page) break;
      for (const [index, member] of recorder.array(page, next, 'Members').entries()) {
        const listed = asResource(member);
        const id = listed?.['@odata.id'];
        if (typeof id !== 'string' || !id.startsWith('/')) {
          recorder.note(`${next}#Members/${index}`, member);
          continue;
        }
        if (!seenMembers.has(canonicalPath(id))) {
          seenMembers.add(canonicalPath(id));
          members.push(listed && expandedMember(listed) ? { link: id, resource: listed } : { link: id });
        }
      }
      const nextLink: unknown = page['Members@odata.nextLink'];
      if (nextLink !== undefined && nextLink !== null && typeof nextLink !== 'string') recorder.note(`${next}#Members@odata.nextLink`, nextLink);
      next = typeof nextLink === 'string' && nextLink.startsWith('/') ? nextLink : undefined;
    }
    return members;
  }

  /** The member links of a collection, across every `Members@odata.nextLink` page (loops are cut). */
  async memberLinks(collectionPath: string, recorder: ObservationRecorder): Promise<string[]> {
    return (await this.#listMembers(collectionPath, recorder, false)).map((member) => member.link);
  }

  /**
   * Every readable member of a collection, each with the path it was read from: taken from the collection's own
   * answer where it gave them expanded, fetched otherwise. `filter` picks members by link, `limit` takes the first
   * that many of those.
   */
  async members(collectionPath: string, recorder: ObservationRecorder, filter?: (link: string) => boolean, limit = Number.POSITIVE_INFINITY): Promise<Array<{ path: string; resource: Resource }>> {
    const listed = (await this.#listMembers(collectionPath, recorder, true)).filter((member) => !filter || filter(member.link)).slice(0, limit);
    const resources = await settleAll(listed.map((member) => (member.resource ? Promise.resolve(member.resource) : this.read(member.link, recorder))));
    return listed.flatMap((member, index) => {
      const resource = resources[index];
      return resource ? [{ path: canonicalPath(member.link), resource }] : [];
    });
  }
}
