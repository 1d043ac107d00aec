/**
 * Observations from in-band agents (GPU telemetry, XID errors): an agent speaks for its own host and only in-band
 * (`appendRefusal`), each payload validated by the catalogue with the field named as the client sent it.
 */
import { z } from 'zod';
import { driverObservationEvents, instantSchema, nodeIdSchema } from '../../../events/index.js';
import { nameUuid } from '../../ledger/index.js';
import { ApiError } from '../api-error.js';
import type { ApiContext, ZodApp } from '../api-context.js';
import { appendRefusal } from '../authorization-policy.js';
import { idempotencyHeaders } from './intent-routes.js';

const observationTypes = driverObservationEvents.map((d) => d.type) as [string, ...string[]];

export function observationRoutes(app: ZodApp, ctx: ApiContext): void {
  const tags = ['intents'];

  app.post('/v1/observations', {
    config: { access: { roles: ['agent', 'operator'] } },
    schema: {
      tags,
      summary: 'observations from an in-band agent (GpuTelemetryObserved, GpuXidObserved, ...), appended to node-<nodeId>',
      headers: idempotencyHeaders,
      body: z.object({
        nodeId: nodeIdSchema,
        source: z.string().min(1).max(64).regex(/^[A-Za-z0-9._-]+$/),
        observedAt: instantSchema.optional(),
        observations: z.array(z.object({ type: z.enum(observationTypes), data: z.unknown() })).min(1).max(200),
      }),
    },
    handler: async (request, reply) => {
      const { nodeId, source, observations, observedAt } = request.body;
      const principal = request.principal!;
      // An agent reports what it sees in-band on its own host; what the BMC says (firmware, inventory, health) is the
      // poller's, so an agent token cannot forge drift or compliance, nor speak for another node (`appendRefusal`,
      // the rule the KurrentDB face applies too).
      observations.forEach((observation, index) => {
        const refusal = appendRefusal({ principal, type: observation.type, stream: `node-${nodeId}`, data: observation.data });
        if (refusal) {
          refusal.message = `body.observations.${index}.type is ${observation.type}: ${refusal.message}`;
          throw refusal;
        }
      });
      // Validate every payload here so the answer names the field as the client sent it.
      observations.forEach((observation, index) => {
        const check = ctx.store.catalogue.check(observation.type, observation.data);
        if (!check.ok) {
          const issue = check.issues[0];
          const field = `body.observations.${index}.data${issue?.path ? `.${issue.path}` : ''}`;
          throw new ApiError('API_INVALID_REQUEST', { field, reason: issue?.message ?? 'is invalid', issues: check.issues.map((i) => ({ field: `body.observations.${index}.data.${i.path}`, reason: i.message })) }, `${field} ${issue?.message ?? 'is invalid'}`);
        }
      });
      const key = request.headers['idempotency-key'];
      const stream = `node-${nodeId}`;
      const result = await ctx.timeAppend(() =>
        ctx.store.append(
          stream,
          observations.map((observation, index) => ({
            ...(typeof key === 'string' ? { eventId: nameUuid(`${principal.id}\u0000${key}\u0000POST /v1/observations#${index}`) } : {}),
            type: observation.type,
            data: observation.data,
            ...(observedAt ? { observedAt } : {}),
            actor: { kind: 'driver' as const, id: `${source}:${nodeId}@${principal.id}` },
          })),
        ),
      );
      reply.code(result.idempotentReplay ? 200 : 201);
      return { position: result.positions[result.positions.length - 1]!, stream, streamVersion: result.nextExpectedVersion, idempotentReplay: result.idempotentReplay, positions: result.positions };
    },
  });
}
