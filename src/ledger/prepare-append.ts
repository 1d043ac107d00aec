import { randomFillSync } from 'node:crypto';
import { actorSchema, streamNameSchema, unstorableInstant, uuidPattern, uuidV7, type Actor, type EventCatalogue, type ProposedEvent } from '../../events/index.js';
import { canonicalJson, sha256Hex, UnrepresentableValueError } from './canonical-json.js';
import { LedgerError } from './ledger-error.js';

/** An event validated and completed, ready to be given a position. */
export interface PreparedEvent {
  eventId: string;
  type: string;
  schemaVersion: number;
  data: unknown;
  observedAt: Date | null;
  actor: Actor;
  correlationId: string | null;
  causationId: string | null;
  /** Digest of everything the caller supplied; equal digests mean a retry of the same event. */
  contentDigest: string;
  /** The canonical JSON of `data` and of `actor`, computed once: hashed into the chain and stored as given. */
  canonicalData: string;
  canonicalActor: string;
}

/**
 * The canonical JSON of an object whose members are given already canonical, in any order: what `canonicalJson`
 * gives for the object of those values (keys sorted; the keys here are plain ASCII names).
 */
export function canonicalObjectOf(members: ReadonlyArray<readonly [string, string]>): string {
  return `{${[...members].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([key, text]) => `"${key}":${text}`).join(',')}}`;
}

/** The caller-supplied content of an event, as hashed for idempotency (no position, version or ledger time). */
export function contentDigest(stream: string, event: Omit<PreparedEvent, 'contentDigest' | 'eventId' | 'canonicalData' | 'canonicalActor'>): string {
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
  return events.map((event, index) => {
    const invalid = (path: string, message: string): LedgerError<'LEDGER_INVALID_EVENT'> =>
      new LedgerError(
        'LEDGER_INVALID_EVENT',
        { stream, index, type: String(event?.type), issues: [{ path, message }] },
        `event ${index} (${String(event?.type)}) in ${stream}: ${path} ${message}`,
      );
    if (event === null || typeof event !== 'object') throw invalid('(event)', 'is not an object');
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
    const actor = actorSchema.safeParse(event.actor);
    if (!actor.success) {
      const issue = actor.error.issues[0];
      throw invalid(`actor${issue?.path.length ? `.${issue.path.join('.')}` : ''}`, issue?.message ?? 'is invalid');
    }
    const eventId = event.eventId ?? uuidV7(now(), randomBytes);
    if (!uuidPattern.test(eventId)) throw invalid('eventId', 'is not a UUID');
    if (seen.has(eventId.toLowerCase())) throw invalid('eventId', 'appears twice in this append');
    seen.add(eventId.toLowerCase());
    let observedAt: Date | null = null;
    if (event.observedAt !== undefined && event.observedAt !== null) {
      const text = event.observedAt instanceof Date ? (Number.isNaN(event.observedAt.getTime()) ? 'invalid' : event.observedAt.toISOString()) : String(event.observedAt);
      const problem = /^[+-]\d{6}-/.test(text) ? 'must lie between 1970-01-01 and 9999-12-31' : unstorableInstant(text);
      if (problem) throw invalid('observedAt', problem);
      observedAt = new Date(text);
    }
    for (const [field, value] of [['correlationId', event.correlationId], ['causationId', event.causationId]] as const) {
      if (value !== undefined && (typeof value !== 'string' || value.length === 0 || value.length > 200)) throw invalid(field, 'must be a string of 1 to 200 characters');
    }
    const prepared = {
      type: event.type,
      schemaVersion: check.schemaVersion,
      data: check.data,
      observedAt,
      actor: actor.data,
      correlationId: event.correlationId ?? null,
      causationId: event.causationId ?? null,
    };
    let digest: string;
    let canonicalData: string;
    let canonicalActor: string;
    try {
      canonicalData = canonicalJson(prepared.data, 'data');
      canonicalActor = canonicalJson(prepared.actor, 'actor');
      // What `contentDigest` computes, from the parts already canonical (data is most of the work).
      digest = sha256Hex(
        canonicalObjectOf([
          ['stream', canonicalJson(stream)],
          ['type', canonicalJson(prepared.type)],
          ['schemaVersion', canonicalJson(prepared.schemaVersion)],
          ['data', canonicalData],
          ['observedAt', canonicalJson(prepared.observedAt)],
          ['actor', canonicalActor],
          ['correlationId', canonicalJson(prepared.correlationId, 'correlationId')],
          ['causationId', canonicalJson(prepared.causationId, 'causationId')],
        ]),
      );
    } catch (error) {
      if (error instanceof UnrepresentableValueError) throw invalid(error.path, error.message);
      throw error;
    }
    return { ...prepared, eventId: eventId.toLowerCase(), contentDigest: digest, canonicalData, canonicalActor };
  });
}
