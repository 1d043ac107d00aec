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

export const systemEvents = [ProjectionEventSetAside, LedgerIntegrityAlarmRaised] as const;
