import { z } from 'zod';
import { defineEvent } from './define-event.js';
import { nodeIdSchema } from './common.js';

/** Saga progress: each saga (rollout, provisioning) records its own steps in its own stream. */

const sagaKind = z.enum(['firmware-rollout', 'provisioning']);

export const SagaStarted = defineEvent({
  family: 'saga-progress',
  type: 'SagaStarted',
  description: 'A process (rollout, provisioning) begins with its plan.',
  schema: z.object({
    sagaId: z.string().min(1).max(200),
    kind: sagaKind,
    plan: z.object({
      nodes: z.array(nodeIdSchema),
      component: z.string().max(200).optional(),
      targetVersion: z.string().max(200).optional(),
      maxShareOfFailureDomain: z.number().min(0).max(1).optional(),
      failureThreshold: z.number().int().min(0).optional(),
    }),
  }),
});

export const SagaStepRecorded = defineEvent({
  family: 'saga-progress',
  type: 'SagaStepRecorded',
  description: 'One step of a saga for one node: issued, succeeded or failed, with its idempotency key.',
  schema: z.object({
    sagaId: z.string().min(1).max(200),
    step: z.string().min(1).max(100),
    nodeId: nodeIdSchema.optional(),
    status: z.enum(['issued', 'succeeded', 'failed']),
    idempotencyKey: z.string().min(1).max(200),
    detail: z.string().max(2000).optional(),
  }),
});

export const SagaStatusChanged = defineEvent({
  family: 'saga-progress',
  type: 'SagaStatusChanged',
  description: 'A saga was paused, resumed, aborted or completed, by an operator or by its own rules.',
  schema: z.object({
    sagaId: z.string().min(1).max(200),
    status: z.enum(['running', 'paused', 'aborted', 'completed']),
    reason: z.string().max(1000).optional(),
  }),
});

export const sagaProgressEvents = [SagaStarted, SagaStepRecorded, SagaStatusChanged] as const;
