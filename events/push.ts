import { z } from 'zod';
import { defineEvent } from './define-event.js';
import { instantSchema, nodeIdSchema } from './common.js';

/**
 * Push: what a BMC's event stream told the ledger, and when a stream could not be trusted. A stream is audited by
 * poll (`docs/push.md`); every way it fails is recorded as a push gap for the node, with since when.
 */

/** How an event reached the ledger: pushed on the BMC's stream, or read by a poll. */
export const eventOriginSchema = z.enum(['pushed', 'polled']);

export const RedfishEventObserved = defineEvent({
  family: 'driver-observation',
  type: 'RedfishEventObserved',
  description: 'A Redfish event a BMC sent (or a poll read), recorded once per event id, with how it reached the ledger.',
  schema: z.strictObject({
    nodeId: nodeIdSchema,
    origin: eventOriginSchema,
    /** The BMC's `EventId` (kept once: duplicates of an id, timestamp and message are dropped). */
    eventId: z.string().min(1).max(256),
    messageId: z.string().min(1).max(256),
    message: z.string().max(4096).optional(),
    severity: z.string().max(64).optional(),
    /** The resource it concerns (`OriginOfCondition`). */
    resource: z.string().max(1024).optional(),
    /** When the BMC says it happened; events that arrive out of order are ordered by it. */
    eventTimestamp: instantSchema.optional(),
    receivedAt: instantSchema,
  }),
});

export const PushStreamOpened = defineEvent({
  family: 'liveness',
  type: 'PushStreamOpened',
  description: 'The ledger holds an SSE stream from the node\'s BMC: its events are pushed, and polls audit it.',
  schema: z.strictObject({
    nodeId: nodeIdSchema,
    uri: z.string().min(1).max(1024),
    /** The heartbeat the BMC announces for it, or null: without one, the stream is no evidence of contact. */
    heartbeatMs: z.number().int().positive().nullable(),
    at: instantSchema,
  }),
});

/**
 * Why a node's push cannot be trusted: `silent` (the BMC changed and the stream said nothing), `subscription-lost`
 * (the BMC no longer lists it: a reboot), `stalled` (nothing, heartbeats neither, past the heartbeat's deadline),
 * `refused` (the BMC would not open a stream: its event connections are taken), `ended` (the BMC closed it).
 */
export const pushGapKinds = ['silent', 'subscription-lost', 'stalled', 'refused', 'ended'] as const;
export const pushGapKindSchema = z.enum(pushGapKinds);
export type PushGapKind = z.infer<typeof pushGapKindSchema>;

export const PushGapOpened = defineEvent({
  family: 'liveness',
  type: 'PushGapOpened',
  description: 'A node\'s push stream could not be trusted from `since` on; the node is polled again and its subscription re-created.',
  schema: z.strictObject({
    nodeId: nodeIdSchema,
    kind: pushGapKindSchema,
    /** The last moment the stream was known good (its last audit that agreed, its last heartbeat). */
    since: instantSchema,
    detectedAt: instantSchema,
    detail: z.string().max(1024),
  }),
});

export const pushEvents = [RedfishEventObserved, PushStreamOpened, PushGapOpened] as const;
