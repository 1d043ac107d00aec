/**
 * A Redfish event as a stream delivers it (`#Event.v1_x.Event`: an `Events` array of records), read into what the
 * ledger keeps of each record. A record without `MessageId` is not an event the ledger can use and is named as
 * malformed; unknown members are ignored. A heartbeat (`HeartbeatEvent.*.RedfishServiceFunctional`) is flagged so the
 * caller counts it as contact and records nothing else of it.
 */
import { z } from 'zod';

export interface PushedEventRecord {
  /** The record's `EventId`, else the message's SSE `id` (with the record's index when it holds several). */
  eventId: string;
  messageId: string;
  message: string | undefined;
  severity: string | undefined;
  /** The resource it concerns (`OriginOfCondition`), when given. */
  origin: string | undefined;
  /** When the BMC says it happened (`EventTimestamp`), when given. */
  timestamp: string | undefined;
  heartbeat: boolean;
}

const recordSchema = z.object({
  EventId: z.union([z.string(), z.number()]).optional(),
  MessageId: z.string().min(1),
  Message: z.string().optional(),
  MessageSeverity: z.string().optional(),
  Severity: z.string().optional(),
  EventTimestamp: z.string().optional(),
  OriginOfCondition: z.union([z.object({ '@odata.id': z.string() }), z.string()]).optional(),
});

const eventSchema = z.object({ Id: z.union([z.string(), z.number()]).optional(), Events: z.array(z.unknown()).min(1) });

export type EventReading = { ok: true; records: PushedEventRecord[] } | { ok: false; reason: string };

/** Reads the Redfish Event one SSE message's data holds. */
export function readRedfishEvent(data: string, sseId: string | undefined): EventReading {
  let parsed: unknown;
  try {
    parsed = JSON.parse(data);
  } catch {
    return { ok: false, reason: 'not JSON' };
  }
  const event = eventSchema.safeParse(parsed);
  if (!event.success) return { ok: false, reason: 'not a Redfish Event (no Events array)' };
  const records: PushedEventRecord[] = [];
  for (const [index, raw] of event.data.Events.entries()) {
    const record = recordSchema.safeParse(raw);
    if (!record.success) return { ok: false, reason: `Events.${index}: ${record.error.issues[0]?.path.join('.') || '(record)'} ${record.error.issues[0]?.message ?? ''}`.trim() };
    const r = record.data;
    const fallbackId = `${sseId ?? String(event.data.Id ?? '')}${event.data.Events.length > 1 ? `.${index}` : ''}`;
    records.push({
      eventId: r.EventId !== undefined ? String(r.EventId) : fallbackId,
      messageId: r.MessageId,
      message: r.Message,
      severity: r.MessageSeverity ?? r.Severity,
      origin: typeof r.OriginOfCondition === 'string' ? r.OriginOfCondition : r.OriginOfCondition?.['@odata.id'],
      timestamp: r.EventTimestamp,
      heartbeat: /^HeartbeatEvent\.[\d.]+\.RedfishServiceFunctional$/.test(r.MessageId),
    });
  }
  return { ok: true, records };
}
