/**
 * `POST /v1/streams/:stream`: events appended to a stream named by the caller, the HTTP form of KurrentDB's
 * appendToStream. It asks the authorization policy exactly what the KurrentDB face asks (principal, type, stream,
 * payload), so the two doors answer every append alike; the intent routes remain the way people record intents.
 * One refused or invalid event refuses the whole append: nothing of it is stored.
 */
import { z } from 'zod';
import { instantSchema, type ProposedEvent } from '../../../events/index.js';
import { nameUuid } from '../../ledger/index.js';
import { ApiError } from '../api-error.js';
import type { ApiContext, ZodApp } from '../api-context.js';
import { appendActor, appendRefusal, writerRoles } from '../authorization-policy.js';

const expectedVersion = z.union([z.number().int().min(0).max(Number.MAX_SAFE_INTEGER), z.enum(['any', 'no_stream', 'stream_exists'])]);

export function streamAppendRoutes(app: ZodApp, ctx: ApiContext): void {
  app.post('/v1/streams/:stream', {
    // Who appends at all is the policy's `writerRoles`: analysts and auditors are refused before the body is read.
    config: { access: { roles: writerRoles } },
    schema: {
      tags: ['events'],
      summary: 'append events to a stream, judged by the same authorization policy as the KurrentDB face (an intent belongs in the stream derived from its content; streams the ledger writes are refused)',
      params: z.object({ stream: z.string().min(1).max(200) }),
      headers: z.object({ 'idempotency-key': z.string().min(1).max(200).optional().describe('retrying with the same key returns the original positions') }),
      body: z.object({
        expectedVersion: expectedVersion.default('any').describe('the stream version the append expects (0: no events yet), or any, no_stream, stream_exists'),
        events: z
          .array(z.object({ type: z.string().min(1).max(200), data: z.unknown(), observedAt: instantSchema.optional(), correlationId: z.string().min(1).max(200).optional(), causationId: z.string().min(1).max(200).optional() }))
          .min(1)
          .max(100),
      }),
    },
    handler: async (request, reply) => {
      const principal = request.principal!;
      const { stream } = request.params;
      const key = request.headers['idempotency-key'];
      const events: ProposedEvent[] = request.body.events.map((event, index) => {
        // An unknown type is a bad request whoever sends it, as on the KurrentDB face (the policy speaks of known types).
        if (!ctx.store.catalogue.get(event.type)) {
          throw new ApiError('API_INVALID_REQUEST', { field: `body.events.${index}.type`, reason: `unknown event type '${event.type}'` }, `body.events.${index}.type: unknown event type '${event.type}'`);
        }
        const refusal = appendRefusal({ principal, type: event.type, stream, data: event.data });
        if (refusal) {
          refusal.message = `body.events.${index}: ${refusal.message}`;
          throw refusal;
        }
        return {
          ...(typeof key === 'string' ? { eventId: nameUuid(`${principal.id}\u0000${key}\u0000POST /v1/streams/${stream}#${index}`) } : {}),
          type: event.type,
          data: event.data,
          ...(event.observedAt ? { observedAt: event.observedAt } : {}),
          ...(event.correlationId ? { correlationId: event.correlationId } : {}),
          ...(event.causationId ? { causationId: event.causationId } : {}),
          actor: appendActor(principal, stream, event.type, 'http'),
        };
      });
      const wanted = request.body.expectedVersion;
      // A version counts the stream's events (`streamVersion`); 0 is a stream with none yet.
      const result = await ctx.timeAppend(() => ctx.store.append(stream, events, { expectedVersion: wanted === 0 ? 'no_stream' : wanted }));
      reply.code(result.idempotentReplay ? 200 : 201);
      return { stream, positions: result.positions, streamVersion: result.nextExpectedVersion, idempotentReplay: result.idempotentReplay };
    },
  });
}
