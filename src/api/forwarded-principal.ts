/**
 * A request a forwarder (the fleet's centre) makes on behalf of a principal it authenticated. The forwarder's token
 * says it may forward (`forwards: true` in the tokens file); its request names who asked in `Fleet-On-Behalf-Of`.
 * The principal then acts with the forwarder's role (never more than the site granted the centre) and is recorded
 * with `via: centre:<forwarder>`, so the site's log says who asked and that it came through the centre. A forwarder's
 * request that names nobody is refused: every intent records who asked.
 */
import type { FastifyRequest } from 'fastify';
import { ApiError } from './api-error.js';
import { principalIdSchema, type Principal } from './tokens.js';

export const onBehalfOfHeader = 'fleet-on-behalf-of';

/** The principal a forwarder's request speaks for (the forwarder itself is never the author). */
export function forwardedPrincipal(forwarder: Principal, request: Pick<FastifyRequest, 'headers'>): Principal {
  const named = request.headers[onBehalfOfHeader];
  if (typeof named !== 'string' || named.length === 0) {
    throw new ApiError('API_INVALID_REQUEST', { field: onBehalfOfHeader, reason: 'missing' }, `${forwarder.id} forwards requests: each must name who asked (${onBehalfOfHeader} header)`);
  }
  const parsed = principalIdSchema.safeParse(named);
  if (!parsed.success) {
    throw new ApiError('API_INVALID_REQUEST', { field: onBehalfOfHeader, reason: parsed.error.issues[0]?.message ?? 'invalid' }, `${onBehalfOfHeader}: ${parsed.error.issues[0]?.message ?? 'invalid'}`);
  }
  return { id: parsed.data, role: forwarder.role, via: `centre:${forwarder.id}` };
}
