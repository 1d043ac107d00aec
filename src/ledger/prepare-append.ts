import { randomFillSync } from 'node:crypto';
import { actorSchema, streamNameSchema, unstorableInstant, uuidPattern, uuidV7, type Actor, type EventCatalogue, type ProposedEvent } from '../../events/index.js';
import { canonicalJson, sha256Hex, UnrepresentableValueError, unstorable } from './canonical-json.js';
import { LedgerError } from './ledger-error.js';

/**
 * An event validated and completed, ready to be given a position. Its content digest (what an idempotent retry is
 * recognised by) is computed only when asked: an append whose event ids are new never needs it.
 */
export class PreparedEvent {
  #digest: string | undefined;

  constructor(
    readonly stream: string,
    readonly eventId: string,
    /** Whether the caller gave the id (a retry may carry it again) or the ledger made it for this append. */
    readonly idGiven: boolean,
    readonly type: string,
    readonly schemaVersion: number,
    readonly data: unknown,
    readonly observedAt: Date | null,
    readonly actor: Actor,
    readonly correlationId: string | null,
    readonly causationId: string | null,
    /** The canonical JSON of `data` and of `actor`, computed once: hashed into the chain and stored as given. */
    readonly canonicalData: string,
    readonly canonicalActor: string,
  ) {}

  /** Digest of everything the caller supplied (what `contentDigest` gives); equal digests mean a retry of the same event. */
  get contentDigest(): string {
    this.#digest ??= sha256Hex(
      // The members of `contentDigest`'s object, in canonical (sorted) order, from the parts already canonical.
      `{"actor":${this.canonicalActor},"causationId":${jsonOrNull(this.causationId)},"correlationId":${jsonOrNull(this.correlationId)},"data":${this.canonicalData},` +
        `"observedAt":${this.observedAt === null ? 'null' : JSON.stringify(this.observedAt.toISOString())},"schemaVersion":${this.schemaVersion},"stream":${JSON.stringify(this.stream)},"type":${JSON.stringify(this.type)}}`,
    );
    return this.#digest;
  }
}

function jsonOrNull(text: string | null): string {
  return text === null ? 'null' : JSON.stringify(text);
}

/**
 * The text the hash chain is computed over (what `canonicalEvent` gives) for a prepared event at its place in the
 * log: its members in canonical (sorted) order, written out once instead of sorted per event. `streamJson` and
 * `recordedAtJson` are JSON strings, shared by the events of one append and one commit; `observedAtJson` likewise.
 */
export function chainText(event: PreparedEvent, position: number, streamJson: string, streamVersion: number, recordedAtJson: string, observedAtJson: string): string {
  return (
    `{"actor":${event.canonicalActor},"causationId":${jsonOrNull(event.causationId)},"correlationId":${jsonOrNull(event.correlationId)},"data":${event.canonicalData},` +
    `"eventId":"${event.eventId}","observedAt":${observedAtJson},"position":${position},"recordedAt":${recordedAtJson},"schemaVersion":${event.schemaVersion},` +
    `"stream":${streamJson},"streamVersion":${streamVersion},"type":${JSON.stringify(event.type)}}`
  );
}

/** The caller-supplied content of an event, as hashed for idempotency (no position, version or ledger time). */
export function contentDigest(
  stream: string,
  event: { type: string; schemaVersion: number; data: unknown; observedAt: Date | null; actor: Actor; correlationId: string | null; causationId: string | null },
): string {
  return sha256Hex(
    canonicalJson({
      stream,
      type: event.type,
      schemaVersion: event.schemaVersion,
      data: event.data,
      observedAt: event.observedAt,
      actor: event.actor,
      correlationId: event.correlationId,
      causationId: event.causationId,
    }),
  );
}

// Random bytes for event ids come from a pool refilled 4 KiB at a time: one getrandom call per 256 ids
// instead of one per id (which was most of the cost of preparing an event).
const randomPool = Buffer.alloc(4096);
let randomOffset = randomPool.length;
const randomBytes = (bytes: Uint8Array): Uint8Array => {
  if (randomOffset + bytes.length > randomPool.length) {
    randomFillSync(randomPool);
    randomOffset = 0;
  }
  bytes.set(randomPool.subarray(randomOffset, randomOffset + bytes.length));
  randomOffset += bytes.length;
  return bytes;
};

function invalidEvent(stream: string, index: number, type: unknown, path: string, message: string): LedgerError<'LEDGER_INVALID_EVENT'> {
  return new LedgerError('LEDGER_INVALID_EVENT', { stream, index, type: String(type), issues: [{ path, message }] }, `event ${index} (${String(type)}) in ${stream}: ${path} ${message}`);
}

/**
 * Validates one append before it joins a group commit: stream name, non-empty, every payload against
 * its schema, ids and times well formed. Anything wrong rejects this append alone and writes nothing.
 */
export function prepareAppend(stream: string, events: readonly ProposedEvent[], catalogue: EventCatalogue, now: () => number): PreparedEvent[] {
  const streamCheck = streamNameSchema.safeParse(stream);
  if (!streamCheck.success) {
    throw new LedgerError('LEDGER_INVALID_STREAM', { stream, reason: streamCheck.error.issues[0]?.message ?? 'invalid' }, `invalid stream name '${stream}': ${streamCheck.error.issues[0]?.message}`);
  }
  if (!Array.isArray(events) || events.length === 0) {
    throw new LedgerError('LEDGER_EMPTY_APPEND', { stream }, `append to ${stream} carries no events`);
  }
  const seen = new Set<string>();
  // The events of one append mostly share one actor object (a batch from one poller, one operator's command): it is
  // checked and made canonical once per append. Only within this call, so a caller changing the object later is seen.
  const actors = new Map<unknown, { actor: Actor; canonical: string }>();
  return events.map((event, index) => {
    if (event === null || typeof event !== 'object') throw invalidEvent(stream, index, undefined, '(event)', 'is not an object');
    const check = catalogue.check(event.type, event.data, event.schemaVersion);
    if (!check.ok) {
      if (check.reason === 'unknown-type') {
        throw new LedgerError('LEDGER_UNKNOWN_EVENT_TYPE', { stream, index, type: String(event.type) }, `event ${index} in ${stream}: unknown event type '${String(event.type)}'`);
      }
      const first = check.issues[0];
      throw new LedgerError(
        'LEDGER_INVALID_EVENT',
        { stream, index, type: event.type, issues: check.issues },
        `event ${index} (${event.type}) in ${stream}: ${check.issues.map((i) => `data.${i.path} ${i.message}`).join('; ') || first?.message}`,
      );
    }
    let actor = typeof event.actor === 'object' && event.actor !== null ? actors.get(event.actor) : undefined;
    if (!actor) {
      const parsed = actorSchema.safeParse(event.actor);
      if (!parsed.success) {
        const issue = parsed.error.issues[0];
        throw invalidEvent(stream, index, event.type, `actor${issue?.path.length ? `.${issue.path.join('.')}` : ''}`, issue?.message ?? 'is invalid');
      }
      actor = { actor: parsed.data, canonical: canonicalOrRefused(parsed.data, 'actor', stream, index, event.type) };
      if (typeof event.actor === 'object' && event.actor !== null) actors.set(event.actor, actor);
    }
    let eventId: string;
    if (event.eventId === undefined || event.eventId === null) {
      eventId = uuidV7(now(), randomBytes);
    } else {
      if (typeof event.eventId !== 'string' || !uuidPattern.test(event.eventId)) throw invalidEvent(stream, index, event.type, 'eventId', 'is not a UUID');
      eventId = event.eventId.toLowerCase();
    }
    if (seen.has(eventId)) throw invalidEvent(stream, index, event.type, 'eventId', 'appears twice in this append');
    seen.add(eventId);
    let observedAt: Date | null = null;
    if (event.observedAt !== undefined && event.observedAt !== null) {
      const text = event.observedAt instanceof Date ? (Number.isNaN(event.observedAt.getTime()) ? 'invalid' : event.observedAt.toISOString()) : String(event.observedAt);
      const problem = /^[+-]\d{6}-/.test(text) ? 'must lie between 1970-01-01 and 9999-12-31' : unstorableInstant(text);
      if (problem) throw invalidEvent(stream, index, event.type, 'observedAt', problem);
      observedAt = new Date(text);
    }
    for (const [field, value] of [['correlationId', event.correlationId], ['causationId', event.causationId]] as const) {
      if (value !== undefined && (typeof value !== 'string' || value.length === 0 || value.length > 200)) throw invalidEvent(stream, index, event.type, field, 'must be a string of 1 to 200 characters');
      if (value !== undefined && unstorable(value)) throw invalidEvent(stream, index, event.type, field, 'contains NUL or an unpaired surrogate');
    }
    return new PreparedEvent(
      stream,
      eventId,
      event.eventId !== undefined && event.eventId !== null,
      event.type,
      check.schemaVersion,
      check.data,
      observedAt,
      actor.actor,
      event.correlationId ?? null,
      event.causationId ?? null,
      canonicalOrRefused(check.data, 'data', stream, index, event.type),
      actor.canonical,
    );
  });
}

/** `canonicalJson`, with a value JSON or jsonb cannot hold refused as this event's invalid part. */
function canonicalOrRefused(value: unknown, path: string, stream: string, index: number, type: unknown): string {
  try {
    return canonicalJson(value, path);
  } catch (error) {
    if (error instanceof UnrepresentableValueError) throw invalidEvent(stream, index, type, error.path, error.message);
    throw error;
  }
}
