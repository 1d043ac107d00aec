/**
 * The live feed as Server-Sent Events: id = `<position>.<hash prefix>`, resumable with `Last-Event-ID` (an id this
 * feed sent, checked against the log), paced by the client, envelopes for the roles that may not read payloads.
 */
import type { ServerResponse } from 'node:http';
import type { FastifyBaseLogger } from 'fastify';
import { z } from 'zod';
import { ApiError } from '../api-error.js';
import type { ApiContext, ZodApp } from '../api-context.js';
import { logView, rolesWithView } from '../authorization-policy.js';
import { eventJson, typesList } from './event-routes.js';

export function liveFeedRoutes(app: ZodApp, ctx: ApiContext): void {
  let liveFeeds = 0;
  const tags = ['events'];

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
      const resumeAfter = await resumePoint(ctx, request.headers['last-event-id']);
      const limit = ctx.maxLiveFeeds ?? 32;
      if (liveFeeds >= limit) throw new ApiError('API_TOO_MANY_REQUESTS', { limit, resource: 'live feeds' }, `${limit} live feeds are open, the most this server serves at once; try again later`);
      liveFeeds += 1;
      reply.raw.once('close', () => (liveFeeds -= 1));
      const fromPosition = resumeAfter !== undefined ? resumeAfter + 1 : (request.query.from ?? (await ctx.store.head()).position + 1);
      const withPayload = readsLog && (request.query.payload ?? 'full') === 'full';
      reply.hijack();
      await streamFeed(ctx, reply.raw, request.log, { fromPosition, withPayload, types: request.query.types, stream: request.query.stream });
    },
  });
}

/** Where a follower resumes: after the position of its `Last-Event-ID`, which must be an id this feed sent. */
async function resumePoint(ctx: ApiContext, lastEventId: string | undefined): Promise<number | undefined> {
  // Resume ids are `<position>.<first 16 hex of its hash>`: after the log was restored from an older backup, the
  // same position may hold another event, and a follower resuming there would skip what it never saw. A bare
  // position cannot be checked against the log, so it is refused (409 resume-id-without-hash), never trusted:
  // the client re-reads from a checkpoint it trusts, or resumes with an id this feed sent.
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
  return resumeAfter;
}

/** Writes the feed to the hijacked response, paced by the client, until it goes away (or the server closes). */
async function streamFeed(
  ctx: ApiContext,
  raw: ServerResponse,
  log: FastifyBaseLogger,
  feed: { fromPosition: number; withPayload: boolean; types: string[] | undefined; stream: string | undefined },
): Promise<void> {
  raw.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache, no-transform', connection: 'keep-alive', 'x-accel-buffering': 'no' });
  raw.write(`retry: 2000\n: from ${feed.fromPosition}\n\n`);
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
      { fromPosition: feed.fromPosition, pool: 'feeds', ...(feed.types ? { types: feed.types } : {}), ...(feed.stream ? { streamPrefix: feed.stream } : {}) },
      async (batch) => {
        let chunk = '';
        for (const event of batch.events) {
          const json = eventJson(event);
          chunk += `id: ${event.position}.${event.hash.slice(0, 16)}\ndata: ${JSON.stringify(feed.withPayload ? json : { ...json, data: null })}\n\n`;
        }
        if (chunk) await write(chunk);
      },
      abort.signal,
    );
  } catch (error) {
    log.warn({ error: String(error) }, 'live feed stopped by an error');
  } finally {
    clearInterval(heartbeat);
    raw.end();
  }
}
