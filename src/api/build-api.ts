/**
 * The HTTP API: intents in, queries out, the log and its live feed, health, metrics and the dashboard.
 * Every route's input is a zod schema (validated by the zod type provider and published at /openapi.json);
 * every error answer is `{ error: { code, message, details } }` with a code from one catalogue.
 */
import fastifySwagger from '@fastify/swagger';
import fastifySwaggerUi from '@fastify/swagger-ui';
import Fastify, { LogController, type FastifyBaseLogger, type FastifyReply } from 'fastify';
import { jsonSchemaTransform, serializerCompiler, validatorCompiler, type ZodTypeProvider } from 'fastify-type-provider-zod';
import type { Kysely } from 'kysely';
import type { ClusterMembership } from '../cluster/index.js';
import { firstUnstorablePart, type EventStore, type ProjectionStatusSource, type DynamicDatabase } from '../ledger/index.js';
import type { PollerStatusSource } from '../poller/index.js';
import type { Simulator } from '../sim/index.js';
import type { ApiContext, ZodApp } from './api-context.js';
import { answerError, errorBody } from './error-answers.js';
import { ApiError } from './api-error.js';
import { authenticate, redactUrl } from './auth.js';
import { bodyCaps } from './body-caps.js';
import { BodyThread, parseJsonOffThread } from './body-parsing.js';
import { createMetrics } from './metrics.js';
import { checkStrictJson, describeStrictJsonProblem } from './strict-json.js';
import { ReadReplica } from './read-replica.js';
import type { AsOfEngine } from '../../replay/as-of/index.js';
import type { AuditService } from '../../replay/audit/index.js';
import { auditRoutes } from './routes/audit-routes.js';
import { clusterRoutes } from './routes/cluster-routes.js';
import { dashboardRoutes } from './routes/dashboard-routes.js';
import { nodeHistoryRoutes } from './routes/node-history-routes.js';
import { pushRoutes } from './routes/push-routes.js';
import { historyRoutes } from './routes/history-routes.js';
import { eventRoutes } from './routes/event-routes.js';
import { liveFeedRoutes } from './routes/live-feed-routes.js';
import { healthRoutes } from './routes/health-routes.js';
import { intentRoutes } from './routes/intent-routes.js';
import { ebomRoutes } from './routes/ebom-routes.js';
import { observationRoutes } from './routes/observation-routes.js';
import { queryRoutes } from './routes/query-routes.js';
import { provisioningRoutes, rolloutRoutes } from './routes/rollout-routes.js';
import { rotationRoutes } from './routes/rotation-routes.js';
import { streamAppendRoutes } from './routes/stream-append-routes.js';
import type { TokenTable } from './tokens.js';

export interface ApiOptions {
  store: EventStore;
  runner?: ProjectionStatusSource | null;
  poller?: PollerStatusSource | null;
  simulator?: Simulator | null;
  tokens: TokenTable;
  /** A pino logger (the process logger); none: silent. Tokens are never logged. */
  logger?: FastifyBaseLogger;
  /** Readiness fails when a projection lags more positions than this (default 10,000). */
  maxLagPositions?: number;
  /** Live feeds (SSE) open at once; one more is answered 429 (default 32). */
  maxLiveFeeds?: number;
  /** Payload bytes in one page of `/v1/events` (default 4 MiB). */
  maxPageBytes?: number;
  /** Wall clock for "seconds since last contact" (default: now). */
  clock?: () => Date;
  /** Export process metrics (CPU, memory, event loop) too (default false). */
  processMetrics?: boolean;
  /** The transparency log (proofs, checkpoints, exports); none: the /v1/audit routes answer 404. */
  audit?: AuditService | null;
  /** Time travel for the query routes. */
  asOf?: AsOfEngine | null;
  /** This process's cluster membership (`/v1/cluster` names it as the one answering; metrics count its leases). */
  cluster?: ClusterMembership | null;
  /**
   * A PostgreSQL streaming replica of the store's database (`DATABASE_READ_URL`): the query routes read the read
   * models there, each answer stating the position it reflects and the replica's lag; intents, the log, rollouts and
   * history stay on the primary. Its pool is closed with the API. None: everything reads the primary, as before.
   */
  readDatabaseUrl?: string | null;
}

/** Builds the API (not listening: call `listen`, or `inject` in tests). */
export async function buildApi(options: ApiOptions): Promise<ZodApp> {
  const app = Fastify({
    ...(options.logger ? { loggerInstance: options.logger } : { logger: false }),
    // Fastify's own request lines would carry `?token=`; ours (onResponse) redact it.
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: bodyCaps.jsonBodyBytes,
    // Closing must not wait for live-feed connections: they end when the server closes.
    forceCloseConnections: true,
    // The router's own refusals (a URL that is not valid percent-encoding, a path parameter over its length) get
    // the same typed answer as every other bad request.
    frameworkErrors: (error, _request, reply: FastifyReply) => {
      const field = error.code === 'FST_ERR_MAX_PARAM_LENGTH' ? 'params' : 'url';
      reply.code(400).send(errorBody('API_INVALID_REQUEST', `${field}: ${error.message}`, { field, reason: error.message }));
    },
  }).withTypeProvider<ZodTypeProvider>();
  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);
  // Large bodies are parsed on a thread of their own: one caller's megabytes never hold up another's answer.
  const bodies = new BodyThread();
  app.addHook('onClose', async () => bodies.close());
  parseJsonOffThread(app, bodies);

  const replica = options.readDatabaseUrl ? new ReadReplica(options.readDatabaseUrl) : null;
  if (replica) app.addHook('onClose', async () => replica.close());
  const db = options.store.db as unknown as Kysely<DynamicDatabase>;
  const partial: Omit<ApiContext, 'timeAppend'> = {
    store: options.store,
    runner: options.runner ?? null,
    poller: options.poller ?? null,
    simulator: options.simulator ?? null,
    db,
    readDb: replica?.db ?? db,
    replica,
    now: options.clock ?? (() => new Date()),
    maxLagPositions: options.maxLagPositions ?? 10_000,
    bodies,
    audit: options.audit ?? null,
    asOf: options.asOf ?? null,
    cluster: options.cluster ?? null,
    maxLiveFeeds: options.maxLiveFeeds ?? 32,
    ...(options.maxPageBytes !== undefined ? { maxPageBytes: options.maxPageBytes } : {}),
  };
  const metrics = createMetrics(partial, { processMetrics: options.processMetrics ?? false });
  const ctx: ApiContext = {
    ...partial,
    async timeAppend(run) {
      const end = metrics.appendDuration.startTimer();
      try {
        return await run();
      } finally {
        end();
      }
    },
  };

  await app.register(fastifySwagger, {
    openapi: {
      info: { title: 'fleet-ledger', description: 'Intents in, projections out, the tamper-evident log and its live feed.', version: '0.1.0' },
      components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } } },
      security: [{ bearer: [] }],
    },
    transform: jsonSchemaTransform,
  });
  await app.register(fastifySwaggerUi, { routePrefix: '/docs' });

  // JSON bodies are read from their bytes: what the default parser would rewrite (bytes that are not UTF-8 become
  // U+FFFD, integers past 2^53 are rounded) is refused naming the field, and the rest parsed as fastify always did.
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, body, done) => {
    const checked = checkStrictJson(body as Buffer);
    if (checked.ok) return parseJson(request, checked.text, done);
    const { field, reason } = describeStrictJsonProblem(checked.problem);
    done(new ApiError('API_INVALID_REQUEST', { field, reason, offset: checked.problem.offset }, `${field} ${reason}`), undefined);
  });

  app.decorateRequest('principal', null);
  app.addHook('onRequest', authenticate(options.tokens));
  // Text PostgreSQL cannot store (NUL, an unpaired surrogate) and nesting deeper than any of our schemas are refused
  // at the door, naming where: whatever a handler does afterwards (store it, walk it, compare it) cannot go wrong.
  app.addHook('preValidation', async (request) => {
    for (const [context, value] of [['params', request.params], ['querystring', request.query], ['body', request.body]] as const) {
      const found = firstUnstorablePart(value);
      if (found !== undefined) {
        const field = found.path ? `${context}.${found.path}` : context;
        throw new ApiError('API_INVALID_REQUEST', { field, reason: found.reason }, `${field} ${found.reason}`);
      }
    }
  });
  app.addHook('onResponse', async (request, reply) => {
    const route = request.routeOptions.url ?? 'unmatched';
    metrics.httpRequests.inc({ method: request.method, route, status: String(reply.statusCode) });
    metrics.httpDuration.observe({ method: request.method, route }, reply.elapsedTime / 1000);
    request.log.debug({ method: request.method, url: redactUrl(request.url), status: reply.statusCode, ms: Math.round(reply.elapsedTime), principal: request.principal?.id }, 'request');
  });

  app.setErrorHandler(answerError);
  app.setNotFoundHandler((request, reply) => {
    reply.code(404).send(errorBody('API_NOT_FOUND', `no route ${request.method} ${redactUrl(request.url.split('?')[0] ?? '')}`, { resource: 'route' }));
  });

  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());
  healthRoutes(app, ctx, metrics);
  intentRoutes(app, ctx);
  ebomRoutes(app, ctx);
  observationRoutes(app, ctx);
  queryRoutes(app, ctx);
  rolloutRoutes(app, ctx);
  provisioningRoutes(app, ctx);
  rotationRoutes(app, ctx);
  eventRoutes(app, ctx);
  liveFeedRoutes(app, ctx);
  streamAppendRoutes(app, ctx);
  auditRoutes(app, ctx);
  historyRoutes(app, ctx);
  nodeHistoryRoutes(app, ctx);
  pushRoutes(app, ctx);
  clusterRoutes(app, ctx);
  dashboardRoutes(app);
  return app;
}
