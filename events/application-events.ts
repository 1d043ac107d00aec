import { z } from 'zod';
import { defineEvent } from './define-event.js';

/**
 * The streams of the fleet: those the catalogue's events are recorded in (an intent's `node-`, `rack-`, `alarm-`
 * stream, the ones the ledger's own components write). Every other stream is an application's: a KurrentDB client's
 * stream beside the fleet's, holding `ApplicationEvent`s.
 */
export const fleetStreamPrefixes: readonly string[] = [
  'node-',
  'rack-',
  'alarm-',
  'polls-',
  'rollout-',
  'fwstep-',
  'capacity-',
  'provision-',
  'saga-',
  'lease-',
  'ebom-',
  'projection-',
  'witness-',
];

/** Whether `stream` is one of the fleet's (its events are the catalogue's, validated), not an application's. */
export function isFleetStream(stream: string): boolean {
  return fleetStreamPrefixes.some((prefix) => stream.startsWith(prefix));
}

/**
 * Bytes as the log keeps them: UTF-8 text as it is (readable in the log), anything else (other bytes, text holding NUL,
 * which jsonb cannot store) as base64. Either way the bytes given are the bytes read back.
 */
export const storedBytesSchema = z.union([z.object({ text: z.string() }).strict(), z.object({ base64: z.base64() }).strict()]);
export type StoredBytes = z.infer<typeof storedBytesSchema>;

/**
 * An event of an application stream, as a KurrentDB client appended it: its own type (any name the catalogue does not
 * define), its content type (`application/json`, `application/octet-stream`, ...), and its data and metadata byte for
 * byte. The ledger keeps it as it keeps every event (hash-chained, in the Merkle tree, an auditor sees it) and reads
 * nothing into it: no projection or saga takes this type, and its content is the application's.
 */
export const ApplicationEvent = defineEvent({
  family: 'application',
  type: 'ApplicationEvent',
  description: "An application's event in an application stream, kept byte for byte (type, content type, data, metadata); no projection reads it.",
  schema: z
    .object({
      type: z.string().min(1).max(1000),
      contentType: z.string().min(1).max(200),
      data: storedBytesSchema,
      metadata: storedBytesSchema,
    })
    .strict(),
});

export const applicationEvents = [ApplicationEvent] as const;
