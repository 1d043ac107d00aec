import type { FastifyRequest } from 'fastify';
import { ApiError } from './api-error.js';
import { forwardedPrincipal } from './forwarded-principal.js';
import type { TokenTable } from './tokens.js';

function bearerOf(request: FastifyRequest): string | null {
  const header = request.headers.authorization;
  if (typeof header === 'string') {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
    return match ? match[1]! : null;
  }
  return null;
}

/**
 * Resolves the caller of a protected route and checks its role: 401 without a known token, 403 with a
 * role the route does not admit. `admin` is admitted everywhere. Routes without `access` are public. A forwarder's
 * request (the centre's) is answered for the principal it names (src/api/forwarded-principal.ts).
 */
export function authenticate(tokens: TokenTable) {
  return async (request: FastifyRequest): Promise<void> => {
    const access = request.routeOptions.config?.access;
    if (!access) return;
    let token = bearerOf(request);
    if (!token && access.queryToken) {
      const fromQuery = (request.query as Record<string, unknown> | undefined)?.token;
      if (typeof fromQuery === 'string' && fromQuery.length > 0) token = fromQuery;
    }
    if (!token) throw new ApiError('API_UNAUTHORIZED', { reason: 'missing' }, 'this route needs a bearer token (Authorization: Bearer <token>)');
    const principal = tokens.resolve(token);
    if (!principal) throw new ApiError('API_UNAUTHORIZED', { reason: 'unknown' }, 'the bearer token is not known');
    if (principal.role !== 'admin' && !access.roles.includes(principal.role)) {
      throw new ApiError('API_FORBIDDEN', { role: principal.role, allowed: [...access.roles, 'admin'] }, `role ${principal.role} may not ${request.method} ${request.routeOptions.url}`);
    }
    request.principal = principal.forwards ? forwardedPrincipal(principal, request) : principal;
  };
}

/**
 * Removes the value of every query parameter that is `token` once decoded (`?token=`, `?%74oken=`, `?tok%65n=`: the
 * query parser decodes names, so they all authenticate) before a URL is logged. A name that does not decode is
 * redacted too: it is not logged as it came.
 */
export function redactUrl(url: string): string {
  const mark = url.indexOf('?');
  if (mark < 0) return url;
  const query = url
    .slice(mark + 1)
    .split('&')
    .map((pair) => {
      const equals = pair.indexOf('=');
      const rawName = equals < 0 ? pair : pair.slice(0, equals);
      let name: string;
      try {
        name = decodeURIComponent(rawName.replace(/\+/g, ' '));
      } catch {
        return `${rawName}=***`;
      }
      return name.trim().toLowerCase() === 'token' ? `${rawName}=***` : pair;
    })
    .join('&');
  return `${url.slice(0, mark)}?${query}`;
}
