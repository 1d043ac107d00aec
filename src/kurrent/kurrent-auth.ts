import type { Metadata } from '@grpc/grpc-js';
import { logReaderRoles, type Principal, type TokenTable } from '../api/index.js';
import { KurrentCallError } from './kurrent-error.js';

/**
 * Who is calling, from the call's `authorization` metadata: `Basic` with the principal as username and its API
 * token as password (what the KurrentDB clients send for `esdb://principal:token@host`), or `Bearer <token>`.
 * The token table is the API's own, so a principal has the same role on both faces. Without the header the caller
 * is `anonymous` (the plaintext face's read-only principal, when the server has one), else refused.
 */
export function callerOf(metadata: Metadata, tokens: TokenTable, anonymous: Principal | null): Principal {
  const header = metadata.get('authorization')[0];
  if (header === undefined) {
    if (anonymous) return anonymous;
    throw KurrentCallError.unauthenticated('this server needs credentials: esdb://<principal>:<token>@host:port (over TLS: the client sends no credentials on a plaintext channel)');
  }
  const text = typeof header === 'string' ? header : header.toString('utf8');
  const bearer = /^Bearer\s+(\S+)\s*$/i.exec(text);
  if (bearer) {
    const principal = tokens.resolve(bearer[1]!);
    if (!principal) throw KurrentCallError.unauthenticated('the bearer token is not known');
    return principal;
  }
  const basic = /^Basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(text);
  if (basic) {
    const decoded = Buffer.from(basic[1]!, 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    const username = colon < 0 ? decoded : decoded.slice(0, colon);
    const password = colon < 0 ? '' : decoded.slice(colon + 1);
    const principal = tokens.resolve(password);
    // The username must be the token's principal: a token shown under another name is refused, not re-labelled.
    if (!principal || principal.id !== username) throw KurrentCallError.unauthenticated('the username and password (principal and API token) are not known');
    return principal;
  }
  throw KurrentCallError.unauthenticated('the authorization header is neither Basic nor Bearer');
}

/** Refuses a caller whose role may not read the log. */
export function requireReader(principal: Principal): void {
  if (!logReaderRoles.includes(principal.role)) throw KurrentCallError.accessDenied(`role ${principal.role} may not read the log`);
}
