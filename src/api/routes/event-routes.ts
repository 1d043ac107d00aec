/**
 * The log for auditors: paged reads of the whole log and of one stream, and the hash-chain verification. The live
 * feed is `live-feed-routes.ts`.
 */
import { z } from 'zod';
import type { RecordedEvent } from '../../../events/index.js';
import { ApiError } from '../api-error.js';
import { type ApiContext, type ZodApp } from '../api-context.js';
import { rolesWithView } from '../authorization-policy.js';
import { decodeCursor, defaultMaxPageBytes, encodeCursor, maxPageLimit } from '../paging.js';

// Who reads what is the authorization policy's answer (the KurrentDB face asks the same): the paged log carries
// payloads, so it is for the roles whose view is `payloads`; the live feed also serves envelopes.
const access = { access: { roles: rolesWithView('payloads') } };
export const typesList = z
  .string()
  .max(2000)
  .regex(/^[A-Za-z0-9]+(,[A-Za-z0-9]+)*$/, 'a comma-separated list of event types')
  .transform((value) => value.split(','));
const positionCursor = z.object({ p: z.number().int().min(1) });
const versionCursor = z.object({ v: z.number().int().min(1) });

/** The JSON form of an event (times as ISO strings). */
export function eventJson(event: RecordedEvent) {
  return {
    position: event.position,
    eventId: event.eventId,
    type: event.type,
    schemaVersion: event.schemaVersion,
    stream: event.stream,
    streamVersion: event.streamVersion,
    recordedAt: event.recordedAt.toISOString(),
    observedAt: event.observedAt ? event.observedAt.toISOString() : null,
    actor: event.actor,
    correlationId: event.correlationId,
    causationId: event.causationId,
    data: event.data,
    hash: event.hash,
    prevHash: event.prevHash,
  };
}

export function eventRoutes(app: ZodApp, ctx: ApiContext): void {
  const tags = ['events'];

  app.get('/v1/events', {
    config: access,
    schema: {
      tags,
      summary: 'the log in position order, filtered by types and stream prefix; a page holds at most `limit` events and about 4 MiB of payloads (the first event always)',
      querystring: z.object({
        from: z.coerce.number().int().min(1).optional().describe('first position (inclusive)'),
        types: typesList.optional(),
        stream: z.string().min(1).max(200).optional().describe('stream name prefix (node-, polls-, rack-r07 ...)'),
        cursor: z.string().max(500).optional(),
        limit: z.coerce.number().int().min(1).max(maxPageLimit).default(100),
      }),
    },
    handler: async (request) => {
      const q = request.query;
      const from = decodeCursor(q.cursor, positionCursor)?.p ?? q.from ?? 1;
      const head = await ctx.store.head();
      const { events, cut } = await ctx.store.readAllBounded({
        fromPosition: from,
        toPosition: head.position,
        limit: q.limit,
        maxBytes: ctx.maxPageBytes ?? defaultMaxPageBytes,
        ...(q.types ? { types: q.types } : {}),
        ...(q.stream ? { streamPrefix: q.stream } : {}),
      });
      const last = events[events.length - 1];
      // A full page (by count or by bytes) may be followed by more; a short one read up to the head.
      const next = (events.length === q.limit || cut) && last ? last.position + 1 : null;
      return { items: events.map(eventJson), nextCursor: next !== null && next <= head.position ? encodeCursor({ p: next }) : null, headPosition: head.position };
    },
  });

  app.get('/v1/streams/:stream', {
    config: access,
    schema: {
      tags,
      summary: 'the events of one stream in version order; a page holds at most `limit` events and about 4 MiB of payloads (the first event always)',
      params: z.object({ stream: z.string().min(1).max(200) }),
      querystring: z.object({ cursor: z.string().max(500).optional(), limit: z.coerce.number().int().min(1).max(maxPageLimit).default(100) }),
    },
    handler: async (request) => {
      const { stream } = request.params;
      const version = await ctx.store.streamVersion(stream);
      if (version === null) throw new ApiError('API_NOT_FOUND', { resource: 'stream', id: stream }, `stream ${stream} has no events`);
      const fromVersion = decodeCursor(request.query.cursor, versionCursor)?.v ?? 1;
      const { events } = await ctx.store.readStreamBounded(stream, { fromVersion, limit: request.query.limit, maxBytes: ctx.maxPageBytes ?? defaultMaxPageBytes });
      const last = events[events.length - 1];
      return { stream, version, items: events.map(eventJson), nextCursor: last && last.streamVersion < version ? encodeCursor({ v: last.streamVersion + 1 }) : null };
    },
  });

  app.get('/v1/verify', {
    config: access,
    schema: {
      tags,
      summary: 'recompute the hash chain over [from, to] (default: the whole log)',
      querystring: z.object({ from: z.coerce.number().int().min(1).optional(), to: z.coerce.number().int().min(1).optional() }),
    },
    handler: async (request) => {
      // The head answered is the one the rows were judged against (same snapshot), not one read after.
      return ctx.store.verifyChain({ ...(request.query.from ? { from: request.query.from } : {}), ...(request.query.to ? { to: request.query.to } : {}) });
    },
  });
}
