/**
 * The centre's HTTP face: read-only JSON answers over the federated fleet (bound to 127.0.0.1 unless told otherwise).
 *
 *   GET /v1/fleet/sites     each site: live, partitioned since T (last heard at P), catching up or refused; its
 *                           replicated, verified and applied positions, witnessed checkpoints, refusals, site alarms
 *   GET /v1/fleet/vector    the read models' position per site
 *   GET /v1/fleet/liveness  liveness counts per site and for the fleet, each site labelled
 *   GET /v1/fleet/nodes     ?state=dark&site=ams1&limit=N: nodes with their site's label ("as of T")
 *                           both also ?asOf=<instant> or ?at=<site:position,...>: as of then (src/federation/fleet-as-of.ts)
 *   GET /v1/fleet/alarms    site alarms, then each site's node alarms, labelled
 *   GET /v1/fleet/rebuild-check   rebuilds every site's read models from its replicated log into a scratch schema and
 *                           compares them with the live ones (holding each site's still meanwhile): the proof that
 *                           the answers are what the logs say
 *   GET /healthz
 *   POST /v1/nodes/:nodeId/{cordon,uncordon,maintenance,...}, POST /v1/alarms/:alarmId/ack
 *                           intents forwarded to the node's site (src/federation/fleet-intent-routes.ts)
 *   GET /v1/fleet/audit/keys              the sites' verifier keys as the centre pinned them (auditors)
 *   GET /v1/fleet/audit/export?site=S&to=N   site S's log as the centre witnessed it, in the format of a site's own
 *                           export, checked offline against S's own key (auditors; src/federation/site-audit-export.ts)
 *   /v1/fleet/rollouts      fleet rollouts: one child per site, run by the site (src/federation/fleet-rollout-routes.ts)
 *
 * Every answer but `/healthz` needs a bearer token of a role that reads read models (the API's tokens: analysts,
 * auditors, operators); `rebuild-check`, which rebuilds every site's read models, needs an operator or an auditor and
 * runs one at a time (429 while one runs); every POST (an intent) needs a role that may ask intents.
 * The centre's own refusals carry a code of its catalogue (src/federation/centre-errors.ts).
 */
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import { intentRoles, queryRoles, type Principal, type Role, type TokenTable } from '../api/index.js';
import type { Centre } from './centre.js';
import { CentreError } from './centre-errors.js';
import { fleetAlarms, fleetLiveness, fleetNodes, fleetSites, fleetVector } from './fleet-answers.js';
import { fleetIntentRoutes } from './fleet-intent-routes.js';
import { fleetRolloutRoutes } from './fleet-rollout-routes.js';
import { fleetAuditRoutes } from './fleet-audit-routes.js';
import { fleetLivenessAsOf, fleetNodesAsOf, parseVector, type AsOfQuestion } from './fleet-as-of.js';

interface AsOfParameters {
  asOf?: string;
  at?: string;
}

/** The as-of question of a request (`asOf=<instant>` or `at=<site:position,...>`), or null for the live answer. */
function asOfQuestion(query: AsOfParameters, sites: readonly string[]): AsOfQuestion | null {
  if (query.asOf !== undefined && query.at !== undefined) throw new CentreError('CENTRE_INVALID_REQUEST', { field: 'asOf', reason: 'give asOf or at, not both' }, 'give asOf (an instant) or at (a position per site), not both');
  if (query.at !== undefined) return { vector: parseVector(query.at, sites) };
  if (query.asOf === undefined) return null;
  const instant = new Date(query.asOf);
  if (!/^\d{4}-\d{2}-\d{2}T/.test(query.asOf) || Number.isNaN(instant.getTime())) throw new CentreError('CENTRE_INVALID_REQUEST', { field: 'asOf', reason: 'an ISO 8601 instant (2026-12-08T01:00:00Z)' }, `asOf: '${query.asOf}' is not an ISO 8601 instant`);
  return { instant };
}

const refuse = (reply: FastifyReply, status: number, code: string, message: string, details: Record<string, unknown>): FastifyReply => reply.code(status).send({ error: { code, message, details } });

/** The roles each route admits (`admin` everywhere); `/healthz` is public. */
function rolesFor(method: string, url: string): readonly Role[] | null {
  if (url === '/healthz') return null;
  if (method !== 'GET' && method !== 'HEAD') return intentRoles;
  if (url === '/v1/fleet/rebuild-check') return ['operator', 'auditor'];
  if (url.startsWith('/v1/fleet/audit/')) return ['auditor'];
  return queryRoles;
}

export async function serveCentreApi(centre: Centre, options: { port: number; host?: string; tokens: TokenTable }): Promise<FastifyInstance> {
  const app = Fastify({ logger: false, bodyLimit: 64 * 1024 });
  const principals = new WeakMap<FastifyRequest, Principal>();
  const principalOf = (request: FastifyRequest): Principal => {
    const principal = principals.get(request);
    if (!principal) throw new Error('a route that needs a principal was reached without one');
    return principal;
  };
  app.setErrorHandler((error, _request, reply) => {
    if (error instanceof CentreError) return refuse(reply, error.status, error.code, error.message, { ...error.details, retryable: error.retryable });
    const status = error && typeof error === 'object' && 'statusCode' in error && typeof error.statusCode === 'number' ? error.statusCode : 500;
    const message = error instanceof Error ? error.message : String(error);
    if (status < 500) return refuse(reply, status, 'CENTRE_INVALID_REQUEST', message, { field: 'body', reason: message });
    return refuse(reply, 500, 'API_INTERNAL', 'an unexpected failure at the centre', {});
  });
  app.addHook('onRequest', async (request: FastifyRequest, reply: FastifyReply) => {
    const roles = rolesFor(request.method, request.routeOptions.url ?? request.url.split('?')[0] ?? '');
    if (!roles) return;
    const token = /^Bearer\s+(\S+)\s*$/i.exec(String(request.headers.authorization ?? ''))?.[1];
    if (!token) return refuse(reply, 401, 'API_UNAUTHORIZED', 'this route needs a bearer token (Authorization: Bearer <token>)', { reason: 'missing' });
    const principal = options.tokens.resolve(token);
    if (!principal) return refuse(reply, 401, 'API_UNAUTHORIZED', 'the bearer token is not known', { reason: 'unknown' });
    if (principal.role !== 'admin' && !roles.includes(principal.role)) return refuse(reply, 403, 'API_FORBIDDEN', `role ${principal.role} may not ${request.method} ${request.routeOptions.url}`, { role: principal.role, allowed: [...roles, 'admin'] });
    principals.set(request, principal);
  });
  fleetIntentRoutes(app, { centre, principalOf });
  fleetRolloutRoutes(app, { centre, principalOf });
  fleetAuditRoutes(app, centre);
  app.get('/healthz', async () => ({ ok: true }));
  app.get('/v1/fleet/sites', async () => ({ sites: await fleetSites(centre.pool) }));
  app.get('/v1/fleet/vector', async () => ({ vector: await fleetVector(centre.pool) }));
  // Answers as of an instant or a position vector rebuild the sites' read models: one such question at a time.
  let answeringAsOf = false;
  const asOf = async <T>(reply: FastifyReply, answer: () => Promise<T>): Promise<T | FastifyReply> => {
    if (answeringAsOf) return refuse(reply, 429, 'API_TOO_MANY_REQUESTS', 'an answer as of another point is being computed; try again when it is done', { resource: 'as-of', limit: 1 });
    answeringAsOf = true;
    try {
      return await answer();
    } finally {
      answeringAsOf = false;
    }
  };
  app.get<{ Querystring: AsOfParameters }>('/v1/fleet/liveness', async (request, reply) => {
    const question = asOfQuestion(request.query, centre.sites);
    return question ? asOf(reply, () => fleetLivenessAsOf(centre.pool, centre.readModels, centre.sites, question)) : fleetLiveness(centre.pool, centre.readModels.db);
  });
  app.get<{ Querystring: AsOfParameters & { state?: string; site?: string; limit?: string } }>('/v1/fleet/nodes', async (request, reply) => {
    const limit = request.query.limit === undefined ? 1000 : Math.max(1, Math.min(10_000, Number(request.query.limit) || 1000));
    const question = asOfQuestion(request.query, centre.sites);
    const sites = request.query.site ? centre.sites.filter((site) => site === request.query.site) : centre.sites;
    if (question) return asOf(reply, () => fleetNodesAsOf(centre.pool, centre.readModels, sites, question, { ...(request.query.state ? { state: request.query.state } : {}), limit }));
    return fleetNodes(centre.pool, centre.readModels.db, { ...(request.query.state ? { state: request.query.state } : {}), ...(request.query.site ? { site: request.query.site } : {}), limit });
  });
  let rebuilding = false;
  app.get('/v1/fleet/rebuild-check', async (_request, reply) => {
    if (rebuilding) return refuse(reply, 429, 'API_TOO_MANY_REQUESTS', 'a rebuild check is running; try again when it is done', { resource: 'rebuild-check', limit: 1 });
    rebuilding = true;
    try {
      const sites = await centre.compareWithRebuild();
      return { matches: sites.every((site) => site.matches), sites };
    } finally {
      rebuilding = false;
    }
  });
  app.get('/v1/fleet/alarms', async () => fleetAlarms(centre.pool, centre.readModels.db));
  await app.listen({ port: options.port, host: options.host ?? '127.0.0.1' });
  return app;
}
