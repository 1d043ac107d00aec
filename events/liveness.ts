import { z } from 'zod';
import { defineEvent } from './define-event.js';
import { instantSchema, nodeIdSchema } from './common.js';

/**
 * Liveness transitions: sustained changes in whether a node answers. They are facts derived by the
 * scheduler from consecutive poll outcomes, recorded so alarms and audits need not re-derive them.
 */

export const NodeWentDark = defineEvent({
  family: 'liveness',
  type: 'NodeWentDark',
  description: 'A node missed its threshold of consecutive polls; the gap started at its last contact.',
  schema: z.object({
    nodeId: nodeIdSchema,
    lastContactAt: instantSchema.nullable(),
    consecutiveMisses: z.number().int().min(1),
    detectedAt: instantSchema,
  }),
});

export const NodeRecovered = defineEvent({
  family: 'liveness',
  type: 'NodeRecovered',
  description: 'A dark node answered again for its recovery threshold of consecutive polls (hysteresis).',
  schema: z.object({
    nodeId: nodeIdSchema,
    darkSince: instantSchema.nullable(),
    recoveredAt: instantSchema,
    consecutiveSuccesses: z.number().int().min(1),
  }),
});

export const LockoutLatched = defineEvent({
  family: 'liveness',
  type: 'LockoutLatched',
  description: 'Authentication to a BMC failed; no further logins with these credentials until they change or an operator clears the latch.',
  schema: z.object({
    nodeId: nodeIdSchema,
    /** The driver error code that latched it (DRIVER_AUTH, DRIVER_PASSWORD_CHANGE_REQUIRED). */
    cause: z.string().min(1).max(100),
    /** A short digest of the credential reference and version, so a change can be told; never the secret. */
    credentialFingerprint: z.string().min(1).max(64),
    at: instantSchema,
  }),
});

export const livenessEvents = [NodeWentDark, NodeRecovered, LockoutLatched] as const;
