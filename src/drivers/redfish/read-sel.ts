/**
 * Reads the system event logs (SEL) a Redfish service exposes: the `LogServices` of every system, manager and
 * chassis, keeping those whose `LogEntryType` is `SEL` (Dell `Managers/iDRAC.Embedded.1/LogServices/Sel`, AMI
 * `Managers/Self/LogServices/SEL`, Supermicro `Systems/1/LogServices/Log1`) or, where the service does not say
 * (older schemas, OpenBMC, Intel), whose id is `SEL` (`nvidia_gb200/.../System_0/LogServices/SEL`,
 * `intel_s2600bpb/.../Systems/QSBP74100021/LogServices/SEL`). Event logs, audit logs, journals, dumps and HPE's IML
 * are other logs and are not read here.
 *
 * Entries are taken from the `Entries` collection as the BMC lists them; every capture that holds entries lists
 * them expanded in the collection, so an entry is fetched on its own only when the collection gives just its link.
 * At most `maxEntriesPerLog` entries per log are read (following `Members@odata.nextLink`), because a full SEL is
 * thousands of records and the iDRAC takes 18 s to list even a short one.
 *
 * Each entry gets a `key`: its identity across reads (the log, `Id`, `Created` and `MessageId`, hashed), so the
 * same entry read twice is recognised as one (see `changedObservations`).
 */
import { createHash } from 'node:crypto';
import type { SelEntriesObservedData, SelEntry } from '../../../events/index.js';
import { asResource, canonicalPath, lastSegment, type ObservationRecorder, type Resource, type ResourceReader } from './resource-reader.js';

type Located = { path: string; resource: Resource };

const MESSAGE_LIMIT = 512;

/** Whether a LogService holds the system event log: its `LogEntryType` says `SEL`, or it says nothing and is named `SEL`. */
export function isSelLogService(service: Resource, path: string): boolean {
  const type = service.LogEntryType;
  if (typeof type === 'string') return type === 'SEL';
  const id = typeof service.Id === 'string' ? service.Id : lastSegment(path);
  return /^sel$/i.test(id);
}

/** The identity of an entry across reads: the same entry read twice has the same key. */
export function selEntryKey(log: string, entry: Pick<SelEntry, 'id' | 'created' | 'messageId' | 'message'>): string {
  return createHash('sha256')
    .update([log, entry.id, entry.created ?? '', entry.messageId ?? entry.message ?? ''].join('\u0000'))
    .digest('hex')
    .slice(0, 16);
}

function toEntry(log: string, path: string, resource: Resource, recorder: ObservationRecorder): SelEntry {
  const id = recorder.text(resource, path, 'Id') ?? lastSegment(path);
  const entry: Omit<SelEntry, 'key'> = { log, id };
  const created = recorder.text(resource, path, 'Created');
  if (created) entry.created = created;
  for (const [field, key] of [
    ['severity', 'Severity'],
    ['entryType', 'EntryType'],
    ['entryCode', 'EntryCode'],
    ['sensorType', 'SensorType'],
    ['messageId', 'MessageId'],
  ] as const) {
    const value = recorder.text(resource, path, key);
    if (value) entry[field] = value;
  }
  // A message is text for people, sometimes long: kept, shortened, rather than dropped as an identity string would be.
  const rawMessage = resource.Message;
  const message = typeof rawMessage === 'string' ? rawMessage.trim() : undefined;
  if (message) entry.message = message.length > MESSAGE_LIMIT ? `${message.slice(0, MESSAGE_LIMIT)}…` : message;
  else if (rawMessage !== undefined && rawMessage !== null && typeof rawMessage !== 'string') recorder.note(`${path}#Message`, rawMessage);
  const sensorNumber = resource.SensorNumber;
  if (typeof sensorNumber === 'number' && Number.isInteger(sensorNumber)) entry.sensorNumber = sensorNumber;
  return { key: selEntryKey(log, entry), ...entry };
}

/** Every SEL LogService under `owners` and its entries (at most `maxEntriesPerLog` each), in the BMC's order. */
export async function readSelEntries(
  owners: readonly Located[],
  reader: ResourceReader,
  recorder: ObservationRecorder,
  maxEntriesPerLog: number,
): Promise<Pick<SelEntriesObservedData, 'logs' | 'entries'>> {
  const logs: string[] = [];
  const entries: SelEntry[] = [];
  for (const owner of owners) {
    const servicesPath = recorder.link(owner.resource, owner.path, 'LogServices');
    if (!servicesPath) continue;
    const services = await reader.members(servicesPath, recorder);
    for (const service of services) {
      if (!isSelLogService(service.resource, service.path)) continue;
      const log = service.path;
      if (logs.includes(log)) continue;
      logs.push(log);
      const entriesPath = recorder.link(service.resource, log, 'Entries');
      if (!entriesPath) continue;
      entries.push(...(await readLogEntries(canonicalPath(entriesPath), log, reader, recorder, maxEntriesPerLog)));
    }
  }
  return { logs, entries };
}

async function readLogEntries(collectionPath: string, log: string, reader: ResourceReader, recorder: ObservationRecorder, max: number): Promise<SelEntry[]> {
  const out: SelEntry[] = [];
  const seen = new Set<string>();
  const pages = new Set<string>();
  let next: string | undefined = collectionPath;
  while (next && out.length < max && !pages.has(canonicalPath(next)) && pages.size < 100) {
    pages.add(canonicalPath(next));
    const page = await reader.read(next, recorder);
    if (!page) break;
    const members = recorder.array(page, next, 'Members');
    for (const [index, raw] of members.entries()) {
      if (out.length >= max) break;
      const member = asResource(raw);
      const link = member?.['@odata.id'];
      if (!member || typeof link !== 'string' || !link.startsWith('/')) {
        recorder.note(`${next}#Members/${index}`, raw);
        continue;
      }
      const path = canonicalPath(link);
      if (seen.has(path)) continue;
      seen.add(path);
      // Expanded in the collection (every capture with entries does this), else read on its own.
      const expanded = Object.keys(member).some((key) => !key.startsWith('@odata.'));
      const resource = expanded ? member : await reader.read(path, recorder);
      if (resource) out.push(toEntry(log, path, resource, recorder));
    }
    const nextLink: unknown = page['Members@odata.nextLink'];
    next = typeof nextLink === 'string' && nextLink.startsWith('/') ? nextLink : undefined;
  }
  return out;
}
