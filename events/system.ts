import { z } from 'zod';
import { defineEvent } from './define-event.js';

/**
 * What the ledger itself records about its own work. A projection that cannot apply one event sets it aside (in
 * `projection_dead_letters`) and goes on; this event makes that visible to operators (an alarm) and auditors (the
 * log), so one bad event never stops a read model fleet-wide and never disappears silently.
 */
export const ProjectionEventSetAside = defineEvent({
  family: 'system',
  type: 'ProjectionEventSetAside',
  description: 'A projection could not apply one event: it was set aside with the reason and the projection went on.',
  schema: z.object({
    projection: z.string().min(1).max(100),
    projectionVersion: z.number().int().min(1),
    position: z.number().int().min(1),
    eventId: z.string().min(1).max(100),
    type: z.string().min(1).max(200),
    stream: z.string().min(1).max(200),
    reason: z.string().max(2000),
  }),
});

/**
 * The ledger found its own log disagreeing with its Merkle tree or a checkpoint it published (the online tamper check):
 * recorded for operators (a critical alarm) and auditors when the log still takes appends. When the head is behind
 * what was signed, no append is taken (it would reuse a signed position): the alarm is then raised by `/readyz`, the
 * metric and the process log only.
 */
export const LedgerIntegrityAlarmRaised = defineEvent({
  family: 'system',
  type: 'LedgerIntegrityAlarmRaised',
  description: 'The ledger found its log disagreeing with its Merkle tree or a published checkpoint, and stopped signing checkpoints.',
  schema: z.object({
    code: z.enum(['AUDIT_TREE_BEYOND_LOG', 'AUDIT_HEAD_BEHIND_CHECKPOINT', 'AUDIT_LEAF_MISMATCH', 'AUDIT_CHECKPOINT_MISMATCH']),
    summary: z.string().max(2000),
    detectedAt: z.string().max(40),
  }),
});

/** The state of one logical replication slot on a site, as its heartbeat reports it (src/federation). */
const slotStatus = z.object({
  slot: z.string().min(1).max(200),
  /** `reserved`, `extended`, `unreserved` or `lost` (pg_replication_slots.wal_status); null: not known yet. */
  walStatus: z.string().max(40).nullable(),
  /** WAL the slot holds back, in bytes (from its restart position to the current write position). */
  retainedBytes: z.number().int().min(0),
  /** How much more WAL may be written before the slot is at risk of losing what it holds (null: unbounded). */
  safeWalBytes: z.number().int().nullable(),
  /** The bound (`max_slot_wal_keep_size`) in bytes; null when unbounded. */
  limitBytes: z.number().int().min(0).nullable(),
  /** Whether a subscriber is connected to the slot now. */
  active: z.boolean(),
});

/**
 * A site ledger says it is alive, at its interval (src/federation): the centre that federates the sites through
 * logical replication marks a site it has not heard from for two intervals as partitioned since the last heartbeat it
 * received, and labels that site's answers as of then. The site's replication slots ride along, so the centre (and
 * the site) see the backlog a cut is holding.
 */
export const SiteHeartbeat = defineEvent({
  family: 'system',
  type: 'SiteHeartbeat',
  description: 'A site ledger is alive: its interval and the replication slots that hold its backlog for the centre.',
  schema: z.object({
    site: z.string().min(1).max(64),
    intervalS: z.number().positive().max(86_400),
    slots: z.array(slotStatus).max(64),
  }),
});

/**
 * A site's replication slot holds more than the warning share of its bound (`max_slot_wal_keep_size`): the centre has
 * been cut off for long, and if the cut lasts until the bound is reached the slot is lost and the centre must
 * re-synchronise the site from its log. Recorded once per episode, on the site (which is where the operator who can
 * act on it is while the centre cannot hear).
 */
export const SiteReplicationBacklogWarned = defineEvent({
  family: 'system',
  type: 'SiteReplicationBacklogWarned',
  description: "A site's replication slot holds most of what its bound allows: the centre is cut off and the slot is at risk.",
  schema: z.object({
    site: z.string().min(1).max(64),
    slot: slotStatus,
    /** The share of the bound that triggered the warning (0.5 = half). */
    threshold: z.number().min(0).max(1),
    summary: z.string().max(2000),
  }),
});

export const systemEvents = [ProjectionEventSetAside, LedgerIntegrityAlarmRaised, SiteHeartbeat, SiteReplicationBacklogWarned] as const;
