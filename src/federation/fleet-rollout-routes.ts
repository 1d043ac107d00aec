/**
 * The centre's fleet rollout routes (src/federation/fleet-rollouts.ts):
 *   POST /v1/fleet/rollouts                 { fleetRolloutId, sites?, request }: one child per site, requested there
 *   POST /v1/fleet/rollouts/:id/{approve,pause,resume,abort}   { reason }: forwarded to every child
 *   GET  /v1/fleet/rollouts, /v1/fleet/rollouts/:id             the plans; one with each child as its site's log says
 * A POST answers 200 with each child's answer; `complete` says whether every site took it (a cut site's child is
 * refused as retryable: send the same request again once the site is live).
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { rolloutIdSchema } from '../../events/index.js';
import type { Principal } from '../api/index.js';
import { CentreError } from './centre-errors.js';
import { idempotencyKeyOf } from './fleet-intent-routes.js';
import type { Centre } from './centre.js';
import { fleetRolloutVerbs, type ChildAnswer } from './fleet-rollouts.js';

const planBody = z.object({ fleetRolloutId: rolloutIdSchema, sites: z.array(z.string().min(1).max(40)).min(1).max(1000).optional(), request: z.record(z.string(), z.unknown()) }).strict();
const verbBody = z.object({ reason: z.string().min(1).max(500) }).strict();

/** The parsed value, or a refusal naming the first field that is wrong (nothing forwarded). */
function parsed<T>(schema: z.ZodType<T>, value: unknown, where: string): T {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  const field = [where, ...(issue?.path ?? []).map(String)].join('.');
  throw new CentreError('CENTRE_INVALID_REQUEST', { field, reason: issue?.message ?? 'invalid' }, `${field}: ${issue?.message ?? 'invalid'}`);
}

const answered = (result: { fleetRolloutId: string; children: ChildAnswer[] }) => ({ ...result, complete: result.children.every((child) => child.outcome !== 'refused') });

export function fleetRolloutRoutes(app: FastifyInstance, { centre, principalOf }: { centre: Centre; principalOf: (request: FastifyRequest) => Principal }): void {
  // Reached at each request, never while the routes are made (the door is tested before any centre answers).
  const rollouts = () => centre.rollouts;
  app.post('/v1/fleet/rollouts', async (request) => {
    const plan = parsed(planBody, request.body, 'body');
    return answered(await rollouts().plan(plan, principalOf(request).id));
  });
  for (const verb of fleetRolloutVerbs) {
    app.post<{ Params: { id: string } }>(`/v1/fleet/rollouts/:id/${verb}`, async (request) => {
      const id = parsed(rolloutIdSchema, request.params.id, 'id');
      const { reason } = parsed(verbBody, request.body, 'body');
      return answered(await rollouts().verb(id, verb, reason, principalOf(request).id, idempotencyKeyOf(request)));
    });
  }
  app.get('/v1/fleet/rollouts', async () => ({ rollouts: await rollouts().list() }));
  app.get<{ Params: { id: string } }>('/v1/fleet/rollouts/:id', async (request) => rollouts().show(parsed(rolloutIdSchema, request.params.id, 'id')));
}
