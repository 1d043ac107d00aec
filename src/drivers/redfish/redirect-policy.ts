/**
 * Which HTTP redirects a Redfish read follows. Some BMCs answer a GET with a redirect instead of the resource: a
 * same-host 301 that adds a trailing slash, or a 301 to another port of the same controller (Lenovo IMM2 moves its
 * service from one port to another). The request carries the BMC's credentials (a session token or basic auth), so
 * a redirect is followed only where those may go.
 *
 * The policy:
 * - only 301, 302, 303, 307 and 308 with a `Location` are redirects; any other 3xx is an answer the driver does not
 *   understand;
 * - the target must be on the same host as the BMC's base URL (name compared without case; the port may differ);
 * - `https` never becomes `http` (the token would travel in clear); `http` may become `https`;
 * - at most `MAX_REDIRECT_HOPS` hops per request, and never back to a URL already visited.
 * A redirect that breaks a rule is refused before anything is sent to its target (`DRIVER_REDIRECT_REFUSED`, naming
 * the `Location`), so no credential ever reaches another host.
 */
import { DriverError } from '../driver-error.js';

export const REDIRECT_STATUSES: ReadonlySet<number> = new Set([301, 302, 303, 307, 308]);

/** Hops one request may take: a slash added, a port changed, and some to spare. */
export const MAX_REDIRECT_HOPS = 5;

/** A header's single value. */
function single(value: string | string[] | undefined): string | undefined {
  const first = Array.isArray(value) ? value[0] : value;
  return first && first.length > 0 ? first : undefined;
}

/**
 * The absolute URL a redirect answer leads to, when the policy allows it; a `DriverError` naming the `Location` and
 * the rule it breaks otherwise. `visited` holds the URLs of this request so far (the first is the one asked for).
 */
export function redirectTarget(
  answer: { status: number; headers: Record<string, string | string[] | undefined> },
  method: string,
  visited: readonly string[],
  origin: string,
): string {
  const from = visited[visited.length - 1] ?? origin;
  const location = single(answer.headers.location);
  const details = { status: answer.status, method, url: from };
  if (location === undefined) {
    throw new DriverError('DRIVER_PROTOCOL', `${method} ${from} answered ${answer.status} (a redirect) without a Location`, details);
  }
  const quoted = location.slice(0, 300);
  let target: URL;
  try {
    target = new URL(location, from);
  } catch {
    throw new DriverError('DRIVER_REDIRECT_REFUSED', `${method} ${from} redirects to ${quoted}, which is not a URL`, { ...details, location: quoted });
  }
  const base = new URL(origin);
  const refuse = (why: string): never => {
    throw new DriverError('DRIVER_REDIRECT_REFUSED', `${method} ${from} redirects to ${quoted}: not followed, ${why}`, { ...details, location: quoted });
  };
  if (target.protocol !== 'http:' && target.protocol !== 'https:') refuse(`${target.protocol} is not http(s)`);
  if (target.hostname.toLowerCase() !== base.hostname.toLowerCase()) refuse(`it leaves the BMC's host ${base.hostname} (credentials stay on the BMC)`);
  if (target.username || target.password) refuse('it carries credentials of its own');
  if (new URL(from).protocol === 'https:' && target.protocol === 'http:') refuse('it would downgrade https to http');
  target.hash = '';
  const next = target.toString();
  if (visited.includes(next)) refuse(`it loops (${visited.length} hops: ${visited.join(' -> ')})`);
  if (visited.length > MAX_REDIRECT_HOPS) refuse(`more than ${MAX_REDIRECT_HOPS} redirects in a row`);
  return next;
}
