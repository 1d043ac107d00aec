/**
 * Between the ledger's events and KurrentDB's records. A revision is the stream version less one (KurrentDB counts
 * from 0, the ledger from 1); a position (commit and prepare alike) is the ledger's global position. Data is the
 * payload as JSON; the custom metadata carries our envelope: actor, observedAt, correlationId, causationId, hash.
 */
import { ApplicationEvent, type ProposedEvent, type RecordedEvent, type StoredBytes } from '../../events/index.js';
import { checkStrictJson, describeStrictJsonProblem } from '../api/index.js';
import { KurrentCallError } from './kurrent-error.js';
import { shared, streams, type ReadResp, type UUID } from './protocol.js';
import { kurrentStreamName } from './stream-names.js';

/**
 * .NET ticks (100 ns) since the Unix epoch, what the client reads from the `created` metadata entry: milliseconds
 * times 10,000, written as the milliseconds' digits and four zeros (no BigInt per event read).
 */
function createdTicks(at: Date): string {
  const ms = at.getTime();
  return ms === 0 ? '0' : ms > 0 ? `${ms}0000` : (BigInt(ms) * 10_000n).toString();
}

/** The metadata members a client may send with an event; they fill the envelope (`$`-prefixed: KurrentDB's names). */
const metadataMembers: Record<string, 'correlationId' | 'causationId' | 'observedAt'> = {
  correlationId: 'correlationId',
  $correlationId: 'correlationId',
  causationId: 'causationId',
  $causationId: 'causationId',
  observedAt: 'observedAt',
};

export function uuidText(uuid: UUID | undefined): string | null {
  if (!uuid) return null;
  if (uuid.hasString()) return uuid.getString();
  if (uuid.hasStructured()) {
    const structured = uuid.getStructured()!;
    const hex = (value: string): string => BigInt.asUintN(64, BigInt(value)).toString(16).padStart(16, '0');
    const digits = hex(structured.getMostSignificantBits()) + hex(structured.getLeastSignificantBits());
    return `${digits.slice(0, 8)}-${digits.slice(8, 12)}-${digits.slice(12, 16)}-${digits.slice(16, 20)}-${digits.slice(20)}`;
  }
  return null;
}

export function uuidMessage(id: string, structured: boolean): UUID {
  const uuid = new shared.UUID();
  if (!structured) return uuid.setString(id);
  const digits = id.replace(/-/g, '');
  const part = new shared.UUID.Structured();
  part.setMostSignificantBits(BigInt.asIntN(64, BigInt(`0x${digits.slice(0, 16)}`)).toString());
  part.setLeastSignificantBits(BigInt.asIntN(64, BigInt(`0x${digits.slice(16)}`)).toString());
  return uuid.setStructured(part);
}

/** The identifier of a ledger stream, in its KurrentDB name (`stream-names.ts`). */
export function streamIdentifier(stream: string) {
  return new shared.StreamIdentifier().setStreamName(kurrentStreamName(stream));
}

/** The bytes of a KurrentDB stream name, as the client sent them. */
export function streamNameBytes(identifier: { getStreamName_asU8(): Uint8Array } | undefined): Buffer {
  if (!identifier) throw KurrentCallError.badRequest('stream_identifier', 'is missing');
  return Buffer.from(identifier.getStreamName_asU8());
}

/** An application event's data and metadata as the log keeps them, in `ApplicationEvent`. */
export interface ApplicationData {
  type: string;
  contentType: string;
  data: StoredBytes;
  metadata: StoredBytes;
}

/** Bytes as the log keeps them: as text when they are UTF-8 that jsonb can hold (no NUL), else base64. */
export function storedBytes(bytes: Uint8Array): StoredBytes {
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (!buffer.includes(0)) {
    const text = buffer.toString('utf8');
    // Only bytes that come back the same: malformed UTF-8 would be read back as U+FFFD.
    if (Buffer.byteLength(text, 'utf8') === buffer.length && Buffer.from(text, 'utf8').equals(buffer)) return { text };
  }
  return { base64: buffer.toString('base64') };
}

export function bytesOf(stored: StoredBytes): Buffer {
  return 'text' in stored ? Buffer.from(stored.text, 'utf8') : Buffer.from(stored.base64, 'base64');
}

/** Whether an event is an application's (`ApplicationEvent`): its data is then what the catalogue validated for it. */
export function isApplicationEvent<E extends { type: string; data: unknown }>(event: E): event is E & { data: ApplicationData } {
  return event.type === ApplicationEvent.type;
}

/** The KurrentDB type of a ledger event: an application's own type, or the catalogue's. */
export function kurrentTypeOf(event: RecordedEvent): string {
  return isApplicationEvent(event) ? event.data.type : event.type;
}

/** The envelope members a KurrentDB reader finds in an event's custom metadata. */
export function envelopeMetadata(event: RecordedEvent): Record<string, unknown> {
  return {
    actor: event.actor,
    observedAt: event.observedAt?.toISOString() ?? null,
    recordedAt: event.recordedAt.toISOString(),
    correlationId: event.correlationId,
    causationId: event.causationId,
    schemaVersion: event.schemaVersion,
    hash: event.hash,
    prevHash: event.prevHash,
  };
}

/**
 * One ledger event as the `event` of a read or subscription answer. In the `envelopes` view the data is JSON `null`,
 * as the HTTP live feed's `data: null`: the reader learns that something happened, not the payload.
 */
export function readEventMessage(event: RecordedEvent, structuredIds: boolean, view: 'payloads' | 'envelopes'): ReadResp {
  return readEventMessageOf(recordFields(event, view), structuredIds);
}

/** The read answer for one event's fields, as google-protobuf's message objects (`read-wire.ts` encodes it directly). */
export function readEventMessageOf(fields: RecordFields, structuredIds: boolean): ReadResp {
  const record = fillRecordFields(new streams.ReadResp.ReadEvent.RecordedEvent(), fields, structuredIds);
  const read = new streams.ReadResp.ReadEvent();
  read.setEvent(record);
  read.setCommitPosition(String(fields.position));
  return new streams.ReadResp().setEvent(read);
}

/** What a recorded-event message of either service (Streams, PersistentSubscriptions) is filled through. */
export interface RecordMessage {
  setId(value?: UUID): unknown;
  setStreamIdentifier(value?: import('./protocol.js').StreamIdentifier): unknown;
  setStreamRevision(value: string): unknown;
  setCommitPosition(value: string): unknown;
  setPreparePosition(value: string): unknown;
  getMetadataMap(): { set(key: string, value: string): unknown };
  setData(value: Uint8Array | string): unknown;
  setCustomMetadata(value: Uint8Array | string): unknown;
}

/** What a KurrentDB recorded event carries of one ledger event, as the caller's view shows it (both encodings use it). */
export interface RecordFields {
  id: string;
  streamName: Buffer;
  /** The stream revision (from 0). */
  revision: number;
  /** Commit and prepare position alike. */
  position: number;
  /** The `metadata` map: created (.NET ticks), type, content-type. */
  metadata: Array<[string, string]>;
  customMetadata: Buffer;
  data: Buffer;
}

const noBytes = Buffer.alloc(0);

export function recordFields(event: RecordedEvent, view: 'payloads' | 'envelopes'): RecordFields {
  const created = createdTicks(event.recordedAt);
  const common = { id: event.eventId, streamName: kurrentStreamName(event.stream), revision: event.streamVersion - 1, position: event.position };
  if (isApplicationEvent(event)) {
    // An application's event: its own type, content type, data and metadata, byte for byte (nothing of them in the
    // envelopes view); the ledger's envelope (actor, hash) stays in the log, where an auditor reads it.
    const application = event.data;
    return {
      ...common,
      metadata: [['created', created], ['type', application.type], ['content-type', application.contentType]],
      data: view === 'payloads' ? bytesOf(application.data) : noBytes,
      customMetadata: view === 'payloads' ? bytesOf(application.metadata) : noBytes,
    };
  }
  return {
    ...common,
    metadata: [['created', created], ['type', event.type], ['content-type', 'application/json']],
    data: Buffer.from(view === 'payloads' ? JSON.stringify(event.data) : 'null', 'utf8'),
    customMetadata: Buffer.from(JSON.stringify(envelopeMetadata(event)), 'utf8'),
  };
}

/** Fills a recorded-event message with one ledger event, as the caller's view shows it. */
export function fillRecord<R extends RecordMessage>(record: R, event: RecordedEvent, structuredIds: boolean, view: 'payloads' | 'envelopes'): R {
  return fillRecordFields(record, recordFields(event, view), structuredIds);
}

export function fillRecordFields<R extends RecordMessage>(record: R, fields: RecordFields, structuredIds: boolean): R {
  record.setId(uuidMessage(fields.id, structuredIds));
  record.setStreamIdentifier(new shared.StreamIdentifier().setStreamName(fields.streamName));
  record.setStreamRevision(String(fields.revision));
  record.setCommitPosition(String(fields.position));
  record.setPreparePosition(String(fields.position));
  const metadata = record.getMetadataMap();
  for (const [key, value] of fields.metadata) metadata.set(key, value);
  record.setData(fields.data);
  record.setCustomMetadata(fields.customMetadata);
  return record;
}

/** A read answer for a link (`$>`) resolved to its target: the target as `event`, the link itself as `link`. */
export function resolvedLinkMessage(link: ReadResp, target: ReadResp | null): ReadResp {
  const linkRecord = link.getEvent()!.getEvent()!;
  const read = new streams.ReadResp.ReadEvent();
  if (target) read.setEvent(target.getEvent()!.getEvent()!);
  read.setLink(linkRecord);
  read.setCommitPosition(link.getEvent()!.getCommitPosition());
  return new streams.ReadResp().setEvent(read);
}

/**
 * A client's proposed message for an application stream, as an `ApplicationEvent` (without its actor): any type and
 * content type, data and metadata as they were sent.
 */
export function proposedApplicationEvent(message: ProposedMessage, index: number): Omit<ProposedEvent, 'actor'> & { data: ApplicationData } {
  const at = `events[${index}]`;
  const entries = message.getMetadataMap();
  const type = entries.get('type');
  if (!type) throw KurrentCallError.badRequest(`${at}.type`, 'is missing');
  if (type.includes('\u0000')) throw KurrentCallError.badRequest(`${at}.type`, 'contains NUL');
  const contentType = entries.get('content-type') ?? 'application/octet-stream';
  const eventId = uuidText(message.getId());
  return {
    ...(eventId ? { eventId } : {}),
    type: ApplicationEvent.type,
    data: { type, contentType, data: storedBytes(message.getData_asU8()), metadata: storedBytes(message.getCustomMetadata_asU8()) },
  };
}

/** What a proposed message of Append or BatchAppend carries. */
interface ProposedMessage {
  getId(): UUID | undefined;
  getMetadataMap(): { get(key: string): string | undefined };
  getData_asU8(): Uint8Array;
  getCustomMetadata_asU8(): Uint8Array;
}

/** Parses a message's JSON as the HTTP API does: bytes that are not UTF-8 and unsafe integers are refused, not rewritten. */
function parseJson(bytes: Uint8Array, field: string): unknown {
  const checked = checkStrictJson(bytes, field);
  if (!checked.ok) {
    const problem = describeStrictJsonProblem(checked.problem);
    throw KurrentCallError.badRequest(problem.field, problem.reason);
  }
  try {
    return JSON.parse(checked.text);
  } catch (error) {
    throw KurrentCallError.badRequest(field, `is not JSON (${error instanceof Error ? error.message : String(error)})`);
  }
}

/**
 * A client's proposed message as a ledger event, without its actor (the caller's, set once the authorization policy
 * allowed it: `appendActor`). The content type must be JSON (the ledger validates payloads against the catalogue);
 * metadata may carry correlationId, causationId and observedAt, nothing else: the actor is always the caller, never
 * what the metadata says.
 */
export function proposedEvent(message: ProposedMessage, index: number): Omit<ProposedEvent, 'actor'> {
  const at = `events[${index}]`;
  const entries = message.getMetadataMap();
  const type = entries.get('type');
  if (!type) throw KurrentCallError.badRequest(`${at}.type`, 'is missing');
  const contentType = entries.get('content-type') ?? 'application/octet-stream';
  if (contentType !== 'application/json') {
    throw KurrentCallError.badRequest(`${at}.contentType`, `is ${contentType}; the ledger stores JSON events validated by their schema (application/json)`);
  }
  const eventId = uuidText(message.getId());
  const event: Omit<ProposedEvent, 'actor'> = {
    ...(eventId ? { eventId } : {}),
    type,
    data: parseJson(message.getData_asU8(), `${at}.data`),
  };
  const metadataBytes = message.getCustomMetadata_asU8();
  if (metadataBytes.length > 0) {
    const metadata = parseJson(metadataBytes, `${at}.metadata`);
    if (metadata === null || typeof metadata !== 'object' || Array.isArray(metadata)) throw KurrentCallError.badRequest(`${at}.metadata`, 'must be a JSON object');
    for (const [key, value] of Object.entries(metadata)) {
      const member = metadataMembers[key];
      if (!member) {
        throw KurrentCallError.badRequest(`${at}.metadata.${key}`, `is not kept by the ledger (accepted: ${Object.keys(metadataMembers).join(', ')}; the actor is always the caller)`);
      }
      if (typeof value !== 'string') throw KurrentCallError.badRequest(`${at}.metadata.${key}`, 'must be a string');
      event[member] = value;
    }
  }
  return event;
}
