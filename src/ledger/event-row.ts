import type { Actor, EventCatalogue, RecordedEvent } from '../../events/index.js';
import type { Selectable } from 'kysely';
import { canonicalJson } from './canonical-json.js';
import type { LedgerEventsTable } from './database.js';

/** A row of ledger_events as pg returns it (int8 parsed to number, see event-store.ts). */
export type EventRow = Selectable<LedgerEventsTable>;

/** The fields the chain hash covers, in the form they are hashed. Everything but the hashes themselves. */
export function canonicalEvent(event: {
  position: number;
  eventId: string;
  stream: string;
  streamVersion: number;
  type: string;
  schemaVersion: number;
  recordedAt: Date;
  observedAt: Date | null;
  actor: unknown;
  correlationId: string | null;
  causationId: string | null;
  data: unknown;
}): string {
  return canonicalJson({
    position: event.position,
    eventId: event.eventId,
    stream: event.stream,
    streamVersion: event.streamVersion,
    type: event.type,
    schemaVersion: event.schemaVersion,
    recordedAt: event.recordedAt,
    observedAt: event.observedAt,
    actor: event.actor,
    correlationId: event.correlationId,
    causationId: event.causationId,
    data: event.data,
  });
}

/** The row as stored, without upcasting: what the chain was computed over. */
export function storedEvent(row: EventRow): RecordedEvent {
  return {
    eventId: row.event_id,
    type: row.type,
    schemaVersion: row.schema_version,
    stream: row.stream,
    streamVersion: row.stream_version,
    position: Number(row.position),
    recordedAt: row.recorded_at,
    observedAt: row.observed_at,
    actor: row.actor as Actor,
    correlationId: row.correlation_id,
    causationId: row.causation_id,
    data: row.data,
    hash: row.hash.toString('hex'),
    prevHash: row.prev_hash.toString('hex'),
  };
}

/** The row as consumers see it: data lifted to the current version of its type. */
export function recordedEvent(row: EventRow, catalogue: EventCatalogue): RecordedEvent {
  const stored = storedEvent(row);
  const lifted = catalogue.upcast(stored.type, stored.schemaVersion, stored.data);
  return { ...stored, schemaVersion: lifted.schemaVersion, data: lifted.data };
}
