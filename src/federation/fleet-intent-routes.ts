/**
 * Intents asked at the centre, forwarded to the site that holds their node or alarm (src/federation/site-doors.ts).
 * The paths are the site API's own (`POST /v1/nodes/:nodeId/cordon`, `/v1/alarms/:alarmId/ack`, ...), so the CLI's
 * verbs work against the centre unchanged (`--url` the centre). The body is the site's to judge: the centre checks the
 * node, the site and the key, and passes the site's answer through with `site` and `idempotencyKey` added. Without an
 * Idempotency-Key the centre makes one and returns it, so a caller whose answer was lost can retry safely.
 */
import { randomUUID } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { nodeIdSchema } from '../../events/index.js';
import type { Principal } from '../api/index.js';
import type { Centre } from './centre.js';
import { CentreError } from './centre-errors.js';
import { siteOfAlarm, siteOfNode } from './fleet-lookups.js';
import type { SiteAnswer } from './site-doors.js';

/** The node intents a site's API takes (src/api/routes/intent-routes.ts), forwarded as they are. */
export const forwardedNodeVerbs = ['cordon', 'uncordon', 'decommission', 'quarantine', 'release', 'clear-latch', 'accept-certificate', 'maintenance'] as const;

interface Forwarding {
  centre: Centre;
  principalOf: (request: FastifyRequest) => Principal;
}

/** The caller's Idempotency-Key, or a new one the answer returns. */
export function idempotencyKeyOf(request: FastifyRequest): string {
  const key = request.headers['idempotency-key'];
  if (key === undefined) return `centre-${randomUUID()}`;
  if (typeof key !== 'string' || key.length === 0 || key.length > 200) throw new CentreError('CENTRE_INVALID_REQUEST', { field: 'idempotency-key', reason: 'one key of 1 to 200 characters' }, 'Idempotency-Key: one key of 1 to 200 characters');
  return key;
}

/** The site named by `?site=` (which must be federated), else the one `find` names; a typed refusal otherwise. */
async function siteFor(centre: Centre, request: FastifyRequest, resource: string, id: string, find: () => Promise<string | null>): Promise<string> {
  const named = (request.query as { site?: unknown } | undefined)?.site;
  if (typeof named === 'string') {
    if (!centre.sites.includes(named)) throw new CentreError('CENTRE_INVALID_REQUEST', { field: 'site', reason: `not a federated site (${centre.sites.join(', ')})` }, `site ${named} is not federated here`);
    return named;
  }
  const site = await find();
  if (!site) throw new CentreError('CENTRE_NOT_FOUND', { resource, id }, `no federated site holds ${resource} ${id} (as far as the centre has applied their logs; name the site with ?site=)`);
  return site;
}

/** The site's answer with the site and the key named (an error's details name them too). */
export function answerFromSite(reply: FastifyReply, answer: SiteAnswer, idempotencyKey: string): FastifyReply {
  const body = answer.body;
  if (body && typeof body === 'object' && 'error' in body && body.error && typeof body.error === 'object') {
    const error = body.error;
    const details = 'details' in error && error.details && typeof error.details === 'object' ? error.details : {};
    return reply.code(answer.status).send({ error: { ...error, details: { ...details, site: answer.site, idempotencyKey } } });
  }
  return reply.code(answer.status).send({ ...(body && typeof body === 'object' ? body : { answer: body }), site: answer.site, idempotencyKey });
}

export function fleetIntentRoutes(app: FastifyInstance, { centre, principalOf }: Forwarding): void {
  for (const verb of forwardedNodeVerbs) {
    app.post<{ Params: { nodeId: string } }>(`/v1/nodes/:nodeId/${verb}`, async (request, reply) => {
      const node = nodeIdSchema.safeParse(request.params.nodeId);
      if (!node.success) throw new CentreError('CENTRE_INVALID_REQUEST', { field: 'nodeId', reason: node.error.issues[0]?.message ?? 'invalid' }, `nodeId: ${node.error.issues[0]?.message ?? 'invalid'}`);
      const idempotencyKey = idempotencyKeyOf(request);
      const site = await siteFor(centre, request, 'node', node.data, () => siteOfNode(centre.readModels.db, centre.sites, node.data));
      const answer = await centre.doors.forward(site, { method: 'POST', path: `/v1/nodes/${encodeURIComponent(node.data)}/${verb}`, body: request.body ?? {}, onBehalfOf: principalOf(request).id, idempotencyKey });
      return answerFromSite(reply, answer, idempotencyKey);
    });
  }
  app.post<{ Params: { alarmId: string } }>('/v1/alarms/:alarmId/ack', async (request, reply) => {
    const alarmId = request.params.alarmId;
    if (alarmId.length === 0 || alarmId.length > 200) throw new CentreError('CENTRE_INVALID_REQUEST', { field: 'alarmId', reason: '1 to 200 characters' }, 'alarmId: 1 to 200 characters');
    const idempotencyKey = idempotencyKeyOf(request);
    const site = await siteFor(centre, request, 'alarm', alarmId, () => siteOfAlarm(centre.readModels.db, centre.sites, alarmId));
    const answer = await centre.doors.forward(site, { method: 'POST', path: `/v1/alarms/${encodeURIComponent(alarmId)}/ack`, body: request.body ?? {}, onBehalfOf: principalOf(request).id, idempotencyKey });
    return answerFromSite(reply, answer, idempotencyKey);
  });
}
