import type { Metadata } from '@grpc/grpc-js';
import { ApiError, readVerdict, type AnonymousReads, type Principal, type TokenTable } from '../api/index.js';
import { KurrentCallError } from './kurrent-error.js';

/**
 * Who is calling, from the call's `authorization` metadata: `Basic` with the principal as username and its API
 * token as password (what the KurrentDB clients send for `esdb://principal:token@host`), or `Bearer <token>`.
 * The token table is the API's own, so a principal has the same role on both faces. Without the header the caller
 * is anonymous (null): the authorization policy decides what it may do, which by default is nothing.
 *
 * On a plaintext face credentials are refused, never used: a token that crossed the network in the clear may have
 * been read on the way, and the KurrentDB clients themselves never send one there (so a caller that does is not one).
 */
export function callerOf(metadata: Metadata, tokens: TokenTable, tls: boolean): Principal | null {
  const header = metadata.get('authorization')[0];
  if (header === undefined) return null;
  const unauthorized = (reason: 'unknown' | 'plaintext', message: string) => KurrentCallError.refused(new ApiError('API_UNAUTHORIZED', { reason }, message));
  if (!tls) throw unauthorized('plaintext', 'credentials are refused on a plaintext face (serve TLS with --kurrent-tls-cert and --kurrent-tls-key to authenticate)');
  const text = typeof header === 'string' ? header : header.toString('utf8');
  const bearer = /^Bearer\s+(\S+)\s*$/i.exec(text);
  if (bearer) {
    const principal = tokens.resolve(bearer[1]!);
    if (!principal) throw unauthorized('unknown', 'the bearer token is not known');
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
    if (!principal || principal.id !== username) throw unauthorized('unknown', 'the username and password (principal and API token) are not known');
    return principal;
  }
  throw unauthorized('unknown', 'the authorization header is neither Basic nor Bearer');
}

/** The view of the log the caller gets (the policy's, as over HTTP), or the policy's refusal. */
export function readerView(principal: Principal | null, anonymousReads: AnonymousReads): 'payloads' | 'envelopes' {
  const verdict = readVerdict(principal, anonymousReads);
  if (verdict.view === 'none') throw KurrentCallError.refused(verdict.refusal);
  return verdict.view;
}
