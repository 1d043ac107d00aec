/**
 * The log for auditors: paged reads of the whole log and of one stream, the hash-chain verification, and the
 * live feed as Server-Sent Events (id = position, resumable with `Last-Event-ID`).
 */
import { z } from 'zod';
import type { RecordedEvent } from '../../../events/index.js';
import { ApiError } from '../api-error.js';
import { type ApiContext, type ZodApp } from '../api-context.js';
import { logView, rolesWithView } from '../authorization-policy.js';
import { decodeCursor, defaultMaxPageBytes, encodeCursor, maxPageLimit } from '../paging.js';

// Who reads what is the authorization policy's answer (the KurrentDB face asks the same): the paged log carries
// payloads, so it is for the roles whose view is `payloads`; the live feed also serves envelopes.
const access = { access: { roles: rolesWithView('payloads') } };
const typesList = z
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
  let liveFeeds = 0;
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

  app.get('/v1/events/live', {
    // The dashboard (an analyst's view) follows the feed too; EventSource cannot set headers, hence ?token=.
    config: { access: { roles: rolesWithView('envelopes'), queryToken: true } },
    schema: {
      tags,
      summary: 'live feed (text/event-stream): id = position; resume with Last-Event-ID; default starts after the head',
      headers: z.object({ 'last-event-id': z.string().max(64).regex(/^\d{1,15}(\.[0-9a-f]{16})?$/, 'a resume id this feed sent: <position>.<hash prefix>').optional() }),
      querystring: z.object({
        from: z.coerce.number().int().min(1).optional().describe('first position to send (ignored when Last-Event-ID is given)'),
        types: typesList.optional(),
        stream: z.string().min(1).max(200).optional(),
        payload: z
          .enum(['full', 'none'])
          .optional()
          .describe("'none' sends the envelope without data (a dashboard needs to know that something happened, not 25,000 poll outcomes); the default, and the only form analysts get: payloads are the log's, which auditors read"),
        token: z.string().optional(),
      }),
    },
    handler: async (request, reply) => {
      const principal = request.principal!;
      const readsLog = logView(principal) === 'payloads';
      if (request.query.payload === 'full' && !readsLog) {
        throw new ApiError('API_FORBIDDEN', { role: principal.role, allowed: rolesWithView('payloads') }, `role ${principal.role} may follow the live feed without payloads only (payload=none): event payloads are the log's, which auditors read`);
      }
      // Resume ids are `<position>.<first 16 hex of its hash>`: after the log was restored from an older backup, the
      // same position may hold another event, and a follower resuming there would skip what it never saw. A bare
      // position cannot be checked against the log, so it is refused (409 resume-id-without-hash), never trusted:
      // the client re-reads from a checkpoint it trusts, or resumes with an id this feed sent.
      const lastEventId = request.headers['last-event-id'];
      let resumeAfter: number | undefined;
      if (lastEventId !== undefined) {
        const parsed = /^(\d{1,15})(?:\.([0-9a-f]{16}))?$/.exec(String(lastEventId).trim());
        if (!parsed) throw new ApiError('API_INVALID_REQUEST', { field: 'last-event-id', reason: 'not a resume id (<position>.<hash prefix>) this feed sent' }, `Last-Event-ID ${JSON.stringify(String(lastEventId).slice(0, 40))} is not a resume id this feed sent`);
        resumeAfter = Number(parsed[1]);
        if (parsed[2] === undefined) {
          throw new ApiError(
            'API_CONFLICT',
            { reason: 'resume-id-without-hash' },
            `Last-Event-ID ${resumeAfter} carries no hash, so this feed cannot tell whether position ${resumeAfter} of the log is still the event the client saw: resume with the id the feed sent (<position>.<hash prefix>), or re-read the log from a checkpoint you trust (?from=)`,
          );
        }
        const [at] = await ctx.store.readAll({ fromPosition: resumeAfter, toPosition: resumeAfter, limit: 1 });
        if (!at || !at.hash.startsWith(parsed[2])) {
          throw new ApiError(
            'API_CONFLICT',
            { reason: 'resume-point-not-in-log' },
            `position ${resumeAfter} of this log is ${at ? 'another event' : 'not written'} than the one the client last saw: the log was restored or replaced; re-read it from a checkpoint you trust`,
          );
        }
      }
      const limit = ctx.maxLiveFeeds ?? 32;
      if (liveFeeds >= limit) throw new ApiError('API_TOO_MANY_REQUESTS', { limit, resource: 'live feeds' }, `${limit} live feeds are open, the most this server serves at once; try again later`);
      liveFeeds += 1;
      reply.raw.once('close', () => (liveFeeds -= 1));
      const fromPosition = resumeAfter !== undefined ? resumeAfter + 1 : (request.query.from ?? (await ctx.store.head()).position + 1);
      const withPayload = readsLog && (request.query.payload ?? 'full') === 'full';
      reply.hijack();
      const raw = reply.raw;
      raw.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache, no-transform', connection: 'keep-alive', 'x-accel-buffering': 'no' });
      raw.write(`retry: 2000\n: from ${fromPosition}\n\n`);
      const abort = new AbortController();
      const stop = (): void => abort.abort();
      // The response closes when the client goes away (or the server closes): stop following then.
      raw.on('close', stop);
      const heartbeat = setInterval(() => raw.write(': keep-alive\n\n'), 15_000);
      const write = async (chunk: string): Promise<void> => {
        // Paced by the client: the next page is read only once this one is in the socket buffer.
        if (!raw.write(chunk) && !abort.signal.aborted) await new Promise<void>((resolve) => { raw.once('drain', resolve); abort.signal.addEventListener('abort', () => resolve(), { once: true }); });
      };
      try {
        await ctx.store.follow(
          // The feeds' own pool: followers outside the process never take the connections appends need.
          { fromPosition, pool: 'feeds', ...(request.query.types ? { types: request.query.types } : {}), ...(request.query.stream ? { streamPrefix: request.query.stream } : {}) },
          async (batch) => {
            let chunk = '';
            for (const event of batch.events) {
              const json = eventJson(event);
              chunk += `id: ${event.position}.${event.hash.slice(0, 16)}\ndata: ${JSON.stringify(withPayload ? json : { ...json, data: null })}\n\n`;
            }
            if (chunk) await write(chunk);
          },
          abort.signal,
        );
      } catch (error) {
        request.log.warn({ error: String(error) }, 'live feed stopped by an error');
      } finally {
        clearInterval(heartbeat);
        raw.end();
      }
    },
  });
}
