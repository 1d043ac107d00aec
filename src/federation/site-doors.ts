/**
 * The centre's doors into the sites' APIs: an intent asked at the centre is forwarded to the site that holds the node,
 * on behalf of the principal the centre authenticated (`Fleet-On-Behalf-Of`), with the site's token for the centre
 * (a forwarder token: the site records who asked and `via: centre:<name>`) and the caller's Idempotency-Key.
 *
 * Guarantees:
 * - While the centre shows the site partitioned, nothing is sent: `CENTRE_SITE_UNREACHABLE` (retryable), nothing
 *   recorded. The site's operators act on the site's own API meanwhile; nothing there needs the centre.
 * - A site that does not answer in time is `CENTRE_SITE_UNREACHABLE` too, marked `ambiguous` when the request may
 *   have reached it: the retry with the same key is then answered by the site's idempotent append (the original
 *   position), so the site records the intent exactly once either way.
 * - A site's answer (recorded, unchanged, refused) is passed through as the site gave it, with the site named.
 * The token is never logged and never stored in the centre's database (it lives in the site's card only).
 */
import type pg from 'pg';
import { CentreError } from './centre-errors.js';

/** Where a site's API answers the centre, and the forwarder token the site issued it (the card's `api`). */
export interface SiteApi {
  url: string;
  token: string;
}

export interface ForwardedRequest {
  method: 'POST';
  /** The site API's path (`/v1/nodes/n1/cordon`). */
  path: string;
  body: unknown;
  /** The principal the centre authenticated: the site records it as the author. */
  onBehalfOf: string;
  idempotencyKey: string;
}

export interface SiteAnswer {
  site: string;
  status: number;
  body: unknown;
}

/** The system error code under a failed fetch (`ECONNREFUSED`, ...), when there is one. */
function causeCode(error: unknown): string | undefined {
  const cause = error instanceof Error ? error.cause : undefined;
  return cause && typeof cause === 'object' && 'code' in cause && typeof cause.code === 'string' ? cause.code : undefined;
}

export class SiteDoors {
  readonly #apis = new Map<string, SiteApi>();

  constructor(
    private readonly pool: pg.Pool,
    private readonly timeoutMs = 5_000,
  ) {}

  set(site: string, api: SiteApi): void {
    this.#apis.set(site, { url: api.url.replace(/\/+$/, ''), token: api.token });
  }

  has(site: string): boolean {
    return this.#apis.has(site);
  }

  /** Forwards one request to the site, or refuses it with a typed `CentreError` (nothing sent). */
  async forward(site: string, request: ForwardedRequest): Promise<SiteAnswer> {
    const api = this.#apis.get(site);
    if (!api) throw new CentreError('CENTRE_SITE_NO_DOOR', { site }, `site ${site}'s card names no API: the centre cannot forward to it`);
    const shown = (await this.pool.query<{ state: string; as_of: Date | null }>('SELECT state, as_of FROM fleet_site_state WHERE site = $1', [site])).rows[0];
    const state = shown?.state ?? 'new';
    const asOf = shown?.as_of ? shown.as_of.toISOString() : null;
    if (state === 'refused') throw new CentreError('CENTRE_SITE_REFUSED', { site }, `the centre refused site ${site}'s log: act on the site itself`);
    const unreachable = (reason: string, ambiguous: boolean): CentreError<'CENTRE_SITE_UNREACHABLE'> =>
      new CentreError('CENTRE_SITE_UNREACHABLE', { site, state, asOf, reason, ambiguous, idempotencyKey: request.idempotencyKey }, `site ${site} cannot be reached (${reason}); retry with Idempotency-Key ${request.idempotencyKey} when it is live`);
    if (state === 'partitioned') throw unreachable(`partitioned since ${asOf ?? 'it was added'}`, false);
    let response: Response;
    try {
      response = await fetch(`${api.url}${request.path}`, {
        method: request.method,
        headers: { authorization: `Bearer ${api.token}`, 'content-type': 'application/json', 'fleet-on-behalf-of': request.onBehalfOf, 'idempotency-key': request.idempotencyKey },
        body: JSON.stringify(request.body ?? {}),
        signal: AbortSignal.timeout(this.timeoutMs),
      });
    } catch (error) {
      const code = causeCode(error);
      // A refused connection never carried the request; anything else (a timeout, a reset) may have.
      throw unreachable(code ?? (error instanceof Error ? error.name : 'failed'), code !== 'ECONNREFUSED');
    }
    let body: unknown;
    try {
      body = await response.json();
    } catch {
      throw unreachable(`the site answered ${response.status} without JSON`, true);
    }
    return { site, status: response.status, body };
  }
}
