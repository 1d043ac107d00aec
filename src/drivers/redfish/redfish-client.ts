/**
 * A Redfish HTTP client over undici: one session per client, reused for every request, and closed on `logout()`.
 *
 * Guarantees:
 * - every request has a deadline (`requestTimeoutMs`), enforced on headers and body alike;
 * - every failure is a `DriverError` (never an undici or JSON error);
 * - a session that was created is deleted by `logout()` even if the token was never used, and the client knows
 *   at every moment whether it holds one (`hasSession`), because a leaked session is what exhausts an iDRAC;
 * - a session the BMC forgot is replaced once for every request in flight (`renewSession`), and a 401 to an older
 *   token never deletes a newer session;
 * - a certificate is judged by `tls` (a pin, a site CA, or nothing where the site chose `insecure`) before any byte of a
 *   request is written, so a refused certificate never receives a credential; without `tls`, by the system's CAs
 *   unless `insecure` is set.
 */
import { Agent, type Dispatcher } from 'undici';
import { bmcConnector } from '../tls/bmc-connector.js';
import type { BmcTlsOptions } from '../tls/bmc-tls-policy.js';
import { DriverError, toDriverError } from '../driver-error.js';
import { normalizeRedfishError, type RedfishRequestPhase } from './redfish-error.js';
import { storableValue } from '../storable-text.js';
import { REDIRECT_STATUSES, redirectTarget } from './redirect-policy.js';
import { RequestBudget, visitDeadlineError, type BoundedAnswer } from './bounded-request.js';

const standardSessionsPath = '/redfish/v1/SessionService/Sessions';

/**
 * A body parsed into what the ledger can store: a NUL or a lone surrogate can reach a string only through a `\u`
 * escape, so the walk that replaces them runs only for the rare body whose text has one.
 */
function parsedStorable(text: string): unknown {
  const parsed = JSON.parse(text) as unknown;
  // `includes` first: a body without any `\u` (nearly all) is not walked by the regular expression at all.
  return text.includes('\\u') && /\\u(?:0000|[dD][89a-fA-F])/.test(text) ? storableValue(parsed) : parsed;
}

/**
 * Why the client's connections are let go when its work is done. Made without a stack trace: undici hands it to
 * every socket it destroys and Node reads its stack there; a stack of its own for each one (formatted through the
 * source maps) cost a poller closing 225 clients a second more than the sockets' close itself (34 s against 22 s).
 */
function clientClosed(): Error {
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = 0;
  try {
    return new Error('redfish client closed');
  } finally {
    Error.stackTraceLimit = limit;
  }
}

export interface RedfishClientOptions {
  /** `https://bmc.example` or `http://127.0.0.1:8000`; anything after the authority is ignored. */
  baseUrl: string;
  username?: string;
  password?: string;
  /** Accept self-signed or mismatched certificates. Off by default. Ignored when `tls` is given. */
  insecure?: boolean;
  /** How the BMC's certificate is trusted (pinned, site CA, insecure) and the oldest TLS version allowed. */
  tls?: BmcTlsOptions;
  /**
   * The connections to use instead of the client's own (a poller's kept-alive pool for this BMC, `BmcConnection`):
   * left open at `close()`, which then only logs out.
   */
  dispatcher?: Dispatcher;
  /** Deadline per request, headers and body included. Default 10 s. */
  requestTimeoutMs?: number;
  /** `auto` tries a session and falls back to basic auth when sessions are refused (405/501). Default `auto`. */
  authMode?: 'auto' | 'session' | 'basic' | 'none';
  /** Requests in flight at once. Default 2: BMCs are small computers. */
  maxConcurrency?: number;
  /** Larger bodies are refused as a protocol error. Default 16 MiB. */
  maxBodyBytes?: number;
  /**
   * A deadline for everything this client does (one poller visit, say), on top of each request's own: once it has
   * passed, a request in flight is cut and none is sent. Logout is still tried (sessions are what a BMC has least of).
   */
  deadline?: AbortSignal;
  /**
   * How long a logout's DELETE may take (default the request timeout, at least 2 s). Once `deadline` has passed it
   * gets 2 s: a visit cut short (its shard handed over, a stop) does not wait on a BMC that stopped answering, which a
   * request timeout made for slow firmware collections (minutes) would.
   */
  logoutTimeoutMs?: number;
  /**
   * Asked, synchronously, right before every request is sent, logout included: false stops the client (`DRIVER_FENCED`)
   * and a session is then left to the BMC's idle timeout. The poller's lease check: a process that lost its shard (or
   * was paused past its lease) sends nothing more, even when an answer woke it before its timers did.
   */
  guard?: () => boolean;
  /** Extra headers sent with every request (the poller names its process, so a BMC's operator can tell pollers apart). */
  headers?: Record<string, string>;
}

export interface RedfishResponse {
  status: number;
  url: string;
  /** The resource; undefined on 304 (not modified since the ETag sent). */
  body: unknown;
  /** The resource's ETag header, when the BMC sends one. */
  etag?: string;
}

/** Where a request goes: its full URL (for errors and redirects), and the origin and path undici is given. */
interface RequestTarget {
  url: string;
  origin: string;
  path: string;
}

/** A counting semaphore: at most `limit` holders at once, FIFO. */
class Gate {
  private active = 0;
  private readonly waiting: Array<() => void> = [];
  constructor(private readonly limit: number) {}
  get idle(): boolean {
    return this.active === 0 && this.waiting.length === 0;
  }
  async run<T>(task: () => Promise<T>): Promise<T> {
    if (this.active >= this.limit) await new Promise<void>((resolve) => this.waiting.push(resolve));
    this.active += 1;
    try {
      return await task();
    } finally {
      this.active -= 1;
      this.waiting.shift()?.();
    }
  }
}

export class RedfishClient {
  #origin: string;
  private readonly options: Required<Omit<RedfishClientOptions, 'username' | 'password' | 'deadline' | 'guard' | 'headers' | 'tls' | 'dispatcher'>> & Pick<RedfishClientOptions, 'username' | 'password' | 'deadline' | 'guard' | 'headers' | 'tls' | 'dispatcher'>;
  private readonly agent: Dispatcher;
  /** The connections are the client's own (closed with it), not a pool it was lent. */
  private readonly ownsAgent: boolean;
  private readonly gate: Gate;
  /** The visit's deadline over every request but logout (`deadline`). */
  readonly #budget: RequestBudget;
  /** Logout and raw POSTs: their own deadline only. */
  readonly #unbounded = new RequestBudget(undefined);
  /** The headers of every request under the current authentication (rebuilt when it changes), never mutated. */
  #headers: { token: string | undefined; basic: boolean; headers: Record<string, string> } | undefined;
  private session: { token: string; location: string } | undefined;
  /** The one re-login in flight after a session expired; requests that meet a 401 meanwhile wait for it. */
  private relogin: Promise<void> | undefined;
  private basicAuth = false;
  private lastAuthentication: 'session' | 'basic' | 'none' = 'none';
  /** Where the last session was opened (the advertised path or the standard one). */
  sessionPath: string | undefined;
  /** Sessions this client created and sessions it deleted; equal after every `logout()`. */
  sessionsOpened = 0;
  sessionsClosed = 0;

  constructor(options: RedfishClientOptions) {
    let origin: string;
    try {
      origin = new URL(options.baseUrl).origin;
    } catch {
      throw new DriverError('DRIVER_PROTOCOL', `not a URL: ${options.baseUrl}`);
    }
    if (origin === 'null') throw new DriverError('DRIVER_PROTOCOL', `not an http(s) URL: ${options.baseUrl}`);
    this.#origin = origin;
    this.options = {
      insecure: false,
      requestTimeoutMs: 10_000,
      authMode: 'auto',
      maxConcurrency: 2,
      maxBodyBytes: 16 * 1024 * 1024,
      ...options,
      logoutTimeoutMs: options.logoutTimeoutMs ?? Math.max(options.requestTimeoutMs ?? 10_000, 2_000),
    };
    const deadline = this.options.requestTimeoutMs;
    this.ownsAgent = options.dispatcher === undefined;
    this.agent = options.dispatcher ?? new Agent({
      connect: this.options.tls ? bmcConnector({ ...this.options.tls, timeoutMs: deadline }) : { rejectUnauthorized: !this.options.insecure, timeout: deadline },
      headersTimeout: deadline,
      bodyTimeout: deadline,
      connections: this.options.maxConcurrency,
    });
    this.gate = new Gate(this.options.maxConcurrency);
    this.#budget = new RequestBudget(this.options.deadline);
  }

  /**
   * Where requests go: the base URL's origin, until the service root is permanently redirected (301, 308) to another
   * origin of the same host (another port, or `https` for `http`); then that one, for every request after it, logout
   * included.
   */
  get origin(): string {
    return this.#origin;
  }

  get hasSession(): boolean {
    return this.session !== undefined;
  }

  /** How the last login authenticated (kept after logout, for reports). */
  get authenticationUsed(): 'session' | 'basic' | 'none' {
    return this.lastAuthentication;
  }

  #checkGuard(method: string, url: string): void {
    if (this.options.guard && !this.options.guard()) throw new DriverError('DRIVER_FENCED', `${method} ${url} not sent: the right to talk to this BMC has ended`, { method, url });
  }

  private headers(): Record<string, string> {
    const token = this.session?.token;
    const cached = this.#headers;
    if (cached && cached.token === token && cached.basic === this.basicAuth) return cached.headers;
    const headers: Record<string, string> = { ...this.options.headers, accept: 'application/json', 'odata-version': '4.0' };
    if (token !== undefined) headers['x-auth-token'] = token;
    else if (this.basicAuth) {
      headers.authorization = `Basic ${Buffer.from(`${this.options.username ?? ''}:${this.options.password ?? ''}`).toString('base64')}`;
    }
    this.#headers = { token, basic: this.basicAuth, headers };
    return headers;
  }

  /**
   * Where a path or same-origin URL goes. A plain absolute path (nearly every Redfish link) is joined to the origin as
   * it is, which is what the URL parser would make of it; anything else (dot segments, characters the parser would
   * encode, another origin) goes through the parser and `resolve`'s check.
   */
  #target(path: string, resolved: boolean): RequestTarget {
    if (!resolved && plainPath.test(path) && !dotSegment.test(path)) return { url: `${this.origin}${path}`, origin: this.origin, path };
    const url = resolved ? path : this.resolve(path);
    const target = new URL(url);
    return { url, origin: target.origin, path: `${target.pathname}${target.search}` };
  }

  private resolve(path: string): string {
    try {
      const url = new URL(path, this.origin);
      if (url.origin !== this.origin) throw new Error('cross-origin');
      return url.toString();
    } catch {
      throw new DriverError('DRIVER_PROTOCOL', `link leaves the BMC or is not a path: ${String(path).slice(0, 200)}`, { url: String(path).slice(0, 200) });
    }
  }

  private async send(
    method: Dispatcher.HttpMethod,
    where: string | RequestTarget,
    phase: RedfishRequestPhase,
    body?: unknown,
    extraHeaders?: Record<string, string>,
  ): Promise<BoundedAnswer & { url: string; token: string | undefined }> {
    // A `RequestTarget`: a URL `redirectTarget` already checked (same host as the BMC), sent as it is.
    const target = typeof where === 'string' ? this.#target(where, false) : where;
    const url = target.url;
    // While a session is being replaced there is no token to send: wait for the new one (the login's own POST aside).
    if (phase !== 'login' && this.relogin) await this.relogin.catch(() => undefined);
    return this.gate.run(async () => {
      const token = this.session?.token;
      try {
        if (this.#budget.exhausted) throw visitDeadlineError(method, url);
        this.#checkGuard(method, url);
        let headers = this.headers();
        if (extraHeaders !== undefined || body !== undefined) headers = { ...headers, ...extraHeaders, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) };
        const answer = await this.#budget.send(this.agent, {
          origin: target.origin,
          path: target.path,
          url,
          method,
          headers,
          ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
          deadlineMs: this.options.requestTimeoutMs,
          maxBodyBytes: this.options.maxBodyBytes,
          ...(this.options.guard ? { guard: this.options.guard } : {}),
        });
        return { status: answer.status, headers: answer.headers, text: answer.text, url, token };
      } catch (error) {
        throw toDriverError(error, { method, url });
      }
    });
  }

  /**
   * Opens a session (or settles on basic auth) unless one is already held. Idempotent. The order is fixed:
   * 1. a session at the path the service root advertises (`Links.Sessions`), when given;
   * 2. a session at the standard path, `/redfish/v1/SessionService/Sessions`;
   * 3. basic auth (in `auto` mode), when no path takes sessions (404, 405, 501).
   * A path that refuses the credential (401/403) counts as a refusal: the credential is tried again once at the
   * next path (some services advertise a path that refuses and take sessions at the standard one), never more in
   * one login, so a wrong password costs at most two attempts against a BMC that locks accounts out.
   */
  async login(advertisedPath?: string): Promise<void> {
    if (this.session || this.basicAuth || this.options.authMode === 'none') return;
    if (this.options.authMode === 'basic') {
      this.basicAuth = true;
      this.lastAuthentication = 'basic';
      return;
    }
    const paths = [...new Set([advertisedPath, standardSessionsPath].filter((path): path is string => typeof path === 'string' && path.length > 0).map((path) => path.replace(/\/+$/, '')))];
    let refused: DriverError | undefined;
    let unsupported: DriverError | undefined;
    for (const path of paths) {
      const answer = await this.send('POST', path, 'login', { UserName: this.options.username ?? '', Password: this.options.password ?? '' });
      this.#refuseRedirect(answer, 'POST');
      if (answer.status >= 200 && answer.status < 300) {
        await this.adoptSession(answer, path);
        return;
      }
      const error = normalizeRedfishError({ status: answer.status, bodyText: answer.text, method: 'POST', url: answer.url, phase: 'login' });
      if (error.code === 'DRIVER_SESSIONS_UNSUPPORTED' || error.code === 'DRIVER_NOT_FOUND') {
        unsupported = error;
        continue;
      }
      if (error.code === 'DRIVER_AUTH' && !refused) {
        refused = error;
        continue;
      }
      throw error;
    }
    if (this.options.authMode === 'auto' && unsupported) {
      // No path takes sessions. After a refusal, basic auth is the credential's one retry; its first read tells.
      this.basicAuth = true;
      this.lastAuthentication = 'basic';
      return;
    }
    throw refused ?? unsupported ?? new DriverError('DRIVER_PROTOCOL', 'no session path to log in at');
  }

  /** The session a 2xx answer to a session POST created: `X-Auth-Token`, and `Location` or the body's `@odata.id`. */
  private async adoptSession(answer: { status: number; headers: Record<string, string | string[] | undefined>; text: string; url: string }, path: string): Promise<void> {
    const token = headerValue(answer.headers['x-auth-token']);
    let location = headerValue(answer.headers.location);
    if (!location && answer.text) {
      try {
        const id = (JSON.parse(answer.text) as { '@odata.id'?: unknown })['@odata.id'];
        if (typeof id === 'string') location = id;
      } catch {
        // No body id either: the session cannot be deleted, which is reported below.
      }
    }
    if (!token || !location) {
      // A session may exist that we cannot use or cannot delete. Delete what we can, then report.
      if (location && token) await this.deleteSession({ token, location });
      throw new DriverError('DRIVER_PROTOCOL', 'session created without X-Auth-Token or Location', { status: answer.status, url: answer.url, method: 'POST' });
    }
    this.session = { token, location };
    this.sessionsOpened += 1;
    this.lastAuthentication = 'session';
    this.sessionPath = path;
  }

  private async deleteSession(session: { token: string; location: string }): Promise<void> {
    try {
      const url = this.resolve(session.location);
      await this.gate.run(async () => {
        this.#checkGuard('DELETE', url);
        const target = new URL(url);
        // Sessions are what a BMC has least of (4 to 8): a logout gets 2 s even when reads were cut short.
        const deadlineMs = this.options.deadline?.aborted ? 2_000 : this.options.logoutTimeoutMs;
        await this.#unbounded.send(this.agent, {
          origin: target.origin,
          path: `${target.pathname}${target.search}`,
          url,
          method: 'DELETE',
          headers: { ...this.options.headers, 'x-auth-token': session.token },
          deadlineMs,
          maxBodyBytes: this.options.maxBodyBytes,
        });
      });
    } catch {
      // Logout is best effort on the wire; the BMC expires the session if this DELETE is lost.
    }
  }

  /** Deletes the session if one is held. Never throws. */
  async logout(): Promise<void> {
    // A session being replaced is logged out once it exists, not left behind by a close() that came meanwhile.
    if (this.relogin) await this.relogin.catch(() => undefined);
    const session = this.session;
    this.session = undefined;
    if (!session) return;
    this.sessionsClosed += 1;
    await this.deleteSession(session);
  }

  /**
   * Replaces a session the BMC forgot, once however many requests met the 401: the first to meet it deletes the old
   * session and opens the new one (at the path that took the last, an older iDRAC's advertised path), so the client
   * never holds two; requests that meet a 401 meanwhile wait for that re-login and retry with its token. A 401 to a
   * token older than the session held is answered by retrying with the newer one: it never deletes the newer session.
   * Resolves when a session newer than `staleToken` is held (or the re-login's error is thrown); false when there is
   * nothing to renew (no session was used and none is being made).
   */
  private async renewSession(staleToken: string | undefined): Promise<boolean> {
    if (this.session && this.session.token !== staleToken) return true; // a newer session exists: use it
    if (this.relogin) {
      await this.relogin;
      return true;
    }
    if (!this.session || staleToken === undefined) return false;
    const stale = this.session;
    const where = this.sessionPath;
    const relogin = (async () => {
      this.session = undefined;
      this.sessionsClosed += 1;
      await this.deleteSession(stale);
      await this.login(where);
    })();
    this.relogin = relogin;
    try {
      await relogin;
    } finally {
      if (this.relogin === relogin) this.relogin = undefined;
    }
    return true;
  }

  /**
   * GETs a resource and parses it as JSON. A session the BMC forgot (401 NoValidSession) is replaced once for all
   * requests in flight (`renewSession`), and the read is retried once with the new token.
   */
  async get(path: string, options: { ifNoneMatch?: string } = {}): Promise<RedfishResponse> {
    const conditional = options.ifNoneMatch ? { 'if-none-match': options.ifNoneMatch } : undefined;
    let answer = await this.#getFollowingRedirects(path, conditional);
    if (answer.status === 401 && !this.basicAuth && (await this.renewSession(answer.token))) {
      answer = await this.#getFollowingRedirects(path, conditional);
    }
    const etag = headerValue(answer.headers.etag);
    // Not modified since the ETag sent: a contact that cost the BMC no body.
    if (answer.status === 304 && options.ifNoneMatch) return { status: 304, url: answer.url, body: undefined, ...(etag ? { etag } : { etag: options.ifNoneMatch }) };
    if (answer.status < 200 || answer.status >= 300) {
      // Under basic auth a 401 is the credentials themselves, never an expired session.
      const phase = this.basicAuth ? 'login' : 'read';
      throw normalizeRedfishError({ status: answer.status, bodyText: answer.text, method: 'GET', url: answer.url, phase });
    }
    try {
      return { status: answer.status, url: answer.url, body: parsedStorable(answer.text), ...(etag ? { etag } : {}) };
    } catch (error) {
      throw new DriverError('DRIVER_PROTOCOL', `GET ${answer.url} answered invalid JSON`, { status: answer.status, url: answer.url, method: 'GET', cause: String(error).slice(0, 200) });
    }
  }

  /**
   * A GET and the redirects it meets, as `redirectTarget` allows them (same host, no downgrade, bounded hops). A
   * permanent redirect of the service root to another origin of the host moves the client there (`origin`), so the
   * session it opens next and the logout go where the service now is, not through a redirect each.
   */
  async #getFollowingRedirects(path: string, headers: Record<string, string> | undefined): Promise<Awaited<ReturnType<RedfishClient['send']>>> {
    let target = this.#target(path, false);
    const visited = [target.url];
    for (;;) {
      const url = target.url;
      const answer = await this.send('GET', target, 'read', undefined, headers);
      if (!REDIRECT_STATUSES.has(answer.status)) return answer;
      const next = redirectTarget(answer, 'GET', visited, this.#origin);
      const nextOrigin = new URL(next).origin;
      // The service root moved for good: the service did. Another resource moved is only followed.
      const root = /^\/redfish(?:\/v1)?\/?$/.test(new URL(url).pathname);
      if (root && (answer.status === 301 || answer.status === 308) && nextOrigin !== this.#origin && new URL(url).origin === this.#origin) this.#origin = nextOrigin;
      visited.push(next);
      target = this.#target(next, true);
    }
  }

  /** A redirect answered to anything but a GET is not followed (its body is not re-sent): the error names where it led. */
  #refuseRedirect(answer: { status: number; headers: Record<string, string | string[] | undefined>; url: string }, method: string): void {
    if (!REDIRECT_STATUSES.has(answer.status)) return;
    const location = headerValue(answer.headers.location) ?? '(no Location)';
    throw new DriverError('DRIVER_REDIRECT_REFUSED', `${method} ${answer.url} redirects to ${location.slice(0, 300)}: only reads follow redirects, a ${method} is not sent again`, {
      status: answer.status,
      method,
      url: answer.url,
      location: location.slice(0, 300),
    });
  }

  /** POSTs an action (power control). */
  async post(path: string, body: unknown): Promise<RedfishResponse> {
    const answer = await this.send('POST', path, 'read', body);
    this.#refuseRedirect(answer, 'POST');
    if (answer.status < 200 || answer.status >= 300) {
      throw normalizeRedfishError({ status: answer.status, bodyText: answer.text, method: 'POST', url: answer.url, phase: 'read' });
    }
    let parsed: unknown = undefined;
    try {
      parsed = answer.text ? parsedStorable(answer.text) : undefined;
    } catch {
      parsed = undefined;
    }
    return { status: answer.status, url: answer.url, body: parsed };
  }

  /**
   * PATCHes a resource (a password change: `AccountService/Accounts/<id>`). A redirect is refused (the body is not sent
   * again); any non-2xx answer is a `DriverError` typed from the Redfish body, with every message in its details.
   */
  async patch(path: string, body: unknown): Promise<RedfishResponse> {
    const answer = await this.send('PATCH', path, 'read', body);
    this.#refuseRedirect(answer, 'PATCH');
    if (answer.status < 200 || answer.status >= 300) {
      // Under basic auth a 401 is the credentials themselves.
      throw normalizeRedfishError({ status: answer.status, bodyText: answer.text, method: 'PATCH', url: answer.url, phase: this.basicAuth ? 'login' : 'read' });
    }
    let parsed: unknown = undefined;
    try {
      parsed = answer.text ? parsedStorable(answer.text) : undefined;
    } catch {
      parsed = undefined;
    }
    return { status: answer.status, url: answer.url, body: parsed };
  }

  /**
   * POSTs a raw body (a multipart firmware push, or JSON with extra headers such as an intent key) and returns the
   * answer as it came, status and headers included: the caller decides what a 202 without a Location means.
   */
  async postRaw(path: string, body: string | Buffer, contentType: string, extraHeaders: Record<string, string> = {}): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; text: string; url: string }> {
    const url = this.resolve(path);
    return this.gate.run(async () => {
      this.#checkGuard('POST', url);
      try {
        const target = new URL(url);
        const answer = await this.#unbounded.send(this.agent, {
          origin: target.origin,
          path: `${target.pathname}${target.search}`,
          url,
          method: 'POST',
          headers: { ...this.headers(), 'content-type': contentType, ...extraHeaders },
          body,
          deadlineMs: this.options.requestTimeoutMs,
          maxBodyBytes: this.options.maxBodyBytes,
        });
        return { ...answer, url };
      } catch (error) {
        throw toDriverError(error, { method: 'POST', url });
      }
    });
  }

  /** Logs out and releases connections. Never throws. */
  async close(): Promise<void> {
    await this.logout();
    // Nothing in flight (every request of a visit ends before it closes): the connections go at once, with a reason
    // that costs no stack trace. With requests still running, they finish first.
    if (!this.ownsAgent) return; // a lent pool stays open for the next visit
    if (this.gate.idle) await this.agent.destroy(clientClosed()).catch(() => undefined);
    else await this.agent.close().catch(() => undefined);
  }
}

/** An absolute path the URL parser would leave as it is (no characters it encodes, no `//` authority, no `\\`). */
const plainPath = /^\/(?![/\\])[\w\-.~!$&()*+,;=:@%/?]*$/;
/** A `.` or `..` path segment, which the URL parser would remove. */
const dotSegment = /\/\.\.?(?:[/?]|$)/;

function headerValue(value: string | string[] | undefined): string | undefined {
  const single = Array.isArray(value) ? value[0] : value;
  return single && single.length > 0 ? single : undefined;
}
