import { z } from 'zod';

/**
 * Who caused an event: a driver reading a BMC, an operator principal issuing an intent, a saga acting on
 * its own progress, or the ledger/system itself. Every intent records the principal who asked.
 */
/**
 * The poll lease under which a poller process wrote (cluster mode): its shard and the lease's fencing epoch. An append
 * carrying a lease whose epoch is no longer the shard's current one is refused (`LEDGER_STALE_EPOCH`), so a process
 * that lost its shard (paused, partitioned) cannot write as if it still owned it; the log keeps who polled under which
 * epoch.
 */
export const leaseSchema = z.object({ shard: z.string().min(1).max(200), epoch: z.number().int().positive() }).strict();
export type Lease = z.infer<typeof leaseSchema>;

/**
 * The saga lease under which a saga's event was written: the saga's lock key and the epoch its owner raised when it
 * took the lock (`saga_leases`). An append carrying an epoch that is no longer the saga's current one is refused
 * (`LEDGER_STALE_EPOCH`), so a process that lost a saga cannot write beside the process that took it over.
 */
export const sagaLeaseSchema = z.object({ saga: z.string().min(1).max(200), epoch: z.number().int().positive() }).strict();
export type SagaLeaseStamp = z.infer<typeof sagaLeaseSchema>;

export const actorSchema = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('driver'), id: z.string().min(1).max(200), lease: leaseSchema.optional() }),
  /**
   * `via`: the door an intent came through when it was not the ledger's own API: `centre:<principal>` for an intent
   * asked at the fleet's centre and forwarded to the site (the centre authenticated `id`; the site trusts the centre).
   */
  z.object({ kind: z.literal('operator'), id: z.string().min(1).max(200), role: z.string().max(50).optional(), via: z.string().min(1).max(200).optional() }),
  z.object({ kind: z.literal('saga'), id: z.string().min(1).max(200), lease: sagaLeaseSchema.optional() }),
  z.object({ kind: z.literal('system'), id: z.string().min(1).max(200), lease: leaseSchema.optional() }),
]);
export type Actor = z.infer<typeof actorSchema>;

/** A stream name: `node-<id>`, `rack-<id>`, `polls-<site>`, `rollout-<id>`, ... */
export const streamNameSchema = z
  .string()
  .min(1)
  .max(200)
  .regex(/^[A-Za-z0-9][A-Za-z0-9._:@-]*$/, 'stream names use letters, digits and . _ : @ - only');

/** An event as a caller proposes it; the ledger fills in the rest of the envelope. */
export interface ProposedEvent<TType extends string = string, TData = unknown> {
  /** Time-ordered UUID (v7). Supplied by the caller to make retries idempotent; generated otherwise. */
  eventId?: string;
  type: TType;
  data: TData;
  /** Defaults to the current schema version of the type. */
  schemaVersion?: number;
  /** Source clock, when the source has one (a BMC's reading time, an agent's sample time). */
  observedAt?: Date | string;
  actor: Actor;
  correlationId?: string;
  causationId?: string;
}

/**
 * The envelope every stored event has around its `type` and `data` (the architecture document's list).
 */
export interface RecordedEnvelope {
  eventId: string;
  schemaVersion: number;
  stream: string;
  streamVersion: number;
  position: number;
  recordedAt: Date;
  observedAt: Date | null;
  actor: Actor;
  correlationId: string | null;
  causationId: string | null;
  /** sha256(prevHash || canonical(event)), hex. */
  hash: string;
  prevHash: string;
}

/**
 * An event as stored in the log: the envelope and one event `E`. `E` defaults to an untyped type and payload;
 * `RecordedEvent<FleetEvent>` (or a closed union of one stream's events) lets `switch (event.type)` narrow `data`.
 */
export type RecordedEvent<E extends { type: string; data: unknown } = { type: string; data: unknown }> = RecordedEnvelope & E;
