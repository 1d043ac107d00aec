/**
 * The Redfish service of one simulated BMC: authentication and the session limit, overload and reset, latency,
 * conditional GETs, sessions, SimpleUpdate and its task, and the shared capture for everything else.
 *
 * Guarantees: a BMC never serves more than `profile.sessionLimit` sessions at once (open Redfish sessions plus
 * in-flight basic-auth requests); the request beyond gets the vendor's own rejection; a dark BMC answers nothing.
 */
import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { SimBehaviour } from './behaviour.ts';
import { bodyTag, canonicalPath } from './capture.ts';
import type { SimClock } from './clock.ts';
import type { Random } from './random.ts';
import { idleTimeoutOf } from './stats.ts';
import { renderResource, storedPath } from './render.ts';
import { acceptUpdate, multipartPathOf, resetAction, taskBodyOf, type UpdateContext } from './firmware-updates.ts';
import { baseError, resourceMissing, sessionBody, sessionCollection } from './redfish-replies.ts';
import { redirectLocation, withPlaceholders } from './serving-quirks.ts';
import { ACCOUNTS, accountBody, accountCollection, patchAccount } from './account-service.ts';
import type { SimBmc } from './sim-bmc.ts';
import { eventServiceBody, isEventStream, isTestEventAction, openEventStream, submitTestEvent } from './events/event-service-replies.ts';
import { isSystemPath } from './events/event-faults.ts';
import type { ErrorReply, VendorProfile } from './vendor-profile.ts';

export interface ServiceContext {
  clock: SimClock;
  behaviour: SimBehaviour;
  seed: number;
  random: Random;
  /** Called when a BMC resets, so the fleet-wide counters see it. */
  onReset?: (bmc: SimBmc) => void;
  /** Firmware updates: the fleet-wide counters and in-flight set. */
  updates: UpdateContext;
  /** The second port BMCs that `redirect: other-port` send their requests to (opened only when one does). */
  alternatePort?: number;
}

const PUBLIC_PATHS = new Set(['/redfish', '/redfish/v1', '/redfish/v1/odata', '/redfish/v1/$metadata']);
const SESSIONS = '/redfish/v1/SessionService/Sessions';
const TASKS = '/redfish/v1/TaskService/Tasks';
const slowPatterns = new WeakMap<VendorProfile, Array<{ pattern: RegExp; latencyMs: number }>>();

type Auth = { kind: 'session' } | { kind: 'basic' } | { kind: 'public' } | { kind: 'rejected' };

/** Answers one request addressed to `bmc`; `target` is the path and query below the BMC's base URL. */
export async function answerBmcRequest(
  context: ServiceContext,
  bmc: SimBmc,
  request: IncomingMessage,
  response: ServerResponse,
  target: string,
): Promise<void> {
  const { clock, behaviour } = context;
  bmc.counters.requests++;
  const poller = request.headers['x-fleet-ledger-poller'];
  if (typeof poller === 'string') response.once('close', bmc.notePoller(poller, `${request.method ?? 'GET'} ${target}`));
  if (goDarkIfDark(context, bmc, request)) return;

  const moved = redirectLocation(
    bmc.profile.serving,
    { method: request.method ?? 'GET', target, host: requestHost(request), localPort: request.socket.localPort },
    bmc.linkPrefix,
    context.alternatePort,
  );
  if (moved !== undefined) {
    bmc.counters.redirects++;
    response.writeHead(301, { Location: moved, 'Content-Length': '0' }).end();
    return;
  }

  const queryAt = target.indexOf('?');
  const rawPath = queryAt >= 0 ? target.slice(0, queryAt) : target;
  const query = new URLSearchParams(queryAt >= 0 ? target.slice(queryAt + 1) : '');
  const path = canonicalPath(decodePath(rawPath));
  const method = request.method ?? 'GET';
  const idleTimeoutMs = idleTimeoutOf(bmc, behaviour);

  // Sessions are created at the standard path and at the one the service root advertises, if another (iDRAC 8).
  if (method === 'POST' && (path === SESSIONS || path === bmc.capture.sessionsPath)) {
    await login(context, bmc, request, response, idleTimeoutMs);
    return;
  }

  const auth = PUBLIC_PATHS.has(path) && (method === 'GET' || method === 'HEAD') ? ({ kind: 'public' } as Auth) : authenticate(context, bmc, request, response, idleTimeoutMs);
  if (auth.kind === 'rejected') return;
  if (auth.kind === 'basic') {
    bmc.inflightBasic++;
    bmc.notePeak(bmc.sessionsInUse(clock.now(), idleTimeoutMs));
    response.once('close', () => {
      bmc.inflightBasic--;
      bmc.noteRelief(clock.now(), idleTimeoutMs);
    });
  }

  await clock.sleep(latencyOf(context, bmc, path));
  if (goDarkIfDark(context, bmc, request)) return;

  if (method === 'DELETE' && path.startsWith(`${SESSIONS}/`)) {
    const id = path.slice(SESSIONS.length + 1);
    const found = [...(bmc.sessions?.values() ?? [])].find((session) => session.id === id);
    if (!found) return sendJson(response, 404, resourceMissing(path));
    bmc.sessions?.delete(found.token);
    bmc.noteRelief(clock.now(), idleTimeoutMs);
    response.writeHead(204).end();
    return;
  }
  // SimpleUpdate at the standard target, or where the tree says (AMI posts to `UpdateService/Actions/SimpleUpdate`).
  const simpleUpdate = path.endsWith('/UpdateService.SimpleUpdate') || path === '/redfish/v1/UpdateService/Actions/SimpleUpdate';
  if (method === 'POST' && (simpleUpdate || path === multipartPathOf(bmc, context.seed))) {
    const kind = simpleUpdate ? 'simple' : 'multipart';
    await acceptUpdate(context.updates, bmc, request, response, kind, (status, body, headers) => sendJson(response, status, body, headers), (image) => versionOfImage(image, bmc.profile));
    return;
  }
  if (method === 'POST' && (path.endsWith('/Actions/ComputerSystem.Reset') || path.endsWith('/Actions/Manager.Reset'))) {
    await readJson(request);
    resetAction(context.updates, bmc, path.endsWith('/Actions/Manager.Reset') ? 'manager' : 'system');
    response.writeHead(204).end();
    return;
  }
  if (method === 'PATCH' && path.startsWith(`${ACCOUNTS}/`)) {
    const answer = patchAccount(bmc, path.slice(ACCOUNTS.length + 1), await readJson(request), clock.now());
    return sendJson(response, answer.status, answer.body);
  }
  // An SSE stream holds its request open: on basic auth it holds a session slot for its whole life.
  if (method === 'GET' && isEventStream(bmc, path)) return openEventStream(bmc, response);
  if (method === 'POST' && isTestEventAction(bmc, path)) {
    submitTestEvent(bmc, await readJson(request));
    response.writeHead(204).end();
    return;
  }
  if (method !== 'GET' && method !== 'HEAD') {
    return sendJson(response, 405, baseError('ActionNotSupported', `The action ${method} ${path} is not supported by the resource.`, 'The action supplied cannot be resubmitted to the implementation.'));
  }

  // Sessions are this BMC's own: the sessions of the captured machine are never served.
  let body = bodyOf(context, bmc, path, query);
  if (body === undefined) return sendJson(response, 404, resourceMissing(path));
  if (query.has('$expand') && answersExpand(context, bmc)) {
    const expansion = expandMembers(context, bmc, body);
    body = expansion.body;
    // The members cost the BMC time of their own, though not a request's each (`expansionCost`).
    await clock.sleep(expansion.memberPaths.reduce((sum, member) => sum + latencyOf(context, bmc, member), 0) * EXPANSION_COST);
    if (goDarkIfDark(context, bmc, request)) return;
  }
  const etag = `W/"${bodyTag(body)}"`;
  if (matchesEtag(request.headers['if-none-match'], etag)) {
    bmc.counters.notModified++;
    bmc.counters.bodyBytesSpared += Buffer.byteLength(body);
    response.writeHead(304, { ETag: etag }).end();
    return;
  }
  bmc.counters.bodyBytes += Buffer.byteLength(body);
  response
    .writeHead(200, { 'Content-Type': 'application/json; charset=utf-8', 'OData-Version': '4.0', ETag: etag })
    .end(body);
}

/** Holds or drops the request when the BMC is dark. Returns true when it did. */
function goDarkIfDark(context: ServiceContext, bmc: SimBmc, request: IncomingMessage): boolean {
  if (!bmc.isDark(context.clock.now())) return false;
  if (context.behaviour.darkMode === 'refuse') request.socket.destroy();
  else bmc.hold(request.socket);
  return true;
}


function authenticate(context: ServiceContext, bmc: SimBmc, request: IncomingMessage, response: ServerResponse, idleTimeoutMs: number): Auth {
  const now = context.clock.now();
  const token = request.headers['x-auth-token'];
  if (typeof token === 'string' && token.length > 0) {
    bmc.openSessions(now, idleTimeoutMs);
    const session = bmc.sessions?.get(token);
    if (session) {
      session.lastUsedAt = now;
      return { kind: 'session' };
    }
    bmc.counters.authFailures++;
    sendReply(response, bmc.profile.unauthorizedReply);
    return { kind: 'rejected' };
  }
  const basic = parseBasic(request.headers.authorization);
  if (!basic || !checkCredentials(context, bmc, basic.user, basic.password)) {
    if (!basic) bmc.counters.authFailures++;
    sendReply(response, bmc.profile.unauthorizedReply, { 'WWW-Authenticate': 'Basic realm="Redfish"' });
    return { kind: 'rejected' };
  }
  if (bmc.sessionsInUse(now, idleTimeoutMs) >= bmc.profile.sessionLimit) {
    rejectOverLimit(context, bmc, request, response);
    return { kind: 'rejected' };
  }
  return { kind: 'basic' };
}

/** Checks credentials, counting bad logins and locking the account after `lockoutThreshold` in a row. */
function checkCredentials(context: ServiceContext, bmc: SimBmc, user: string, password: string): boolean {
  const now = context.clock.now();
  if (now < bmc.lockedUntil) {
    bmc.counters.authFailures++;
    bmc.counters.failedLogins++;
    return false;
  }
  if (user === bmc.username && password === bmc.password) {
    bmc.consecutiveBadLogins = 0;
    return true;
  }
  bmc.counters.authFailures++;
  bmc.counters.failedLogins++;
  bmc.consecutiveBadLogins++;
  if (bmc.consecutiveBadLogins >= context.behaviour.lockoutThreshold) {
    bmc.consecutiveBadLogins = 0;
    bmc.lockedUntil = now + context.behaviour.lockoutMs;
    bmc.counters.lockouts++;
  }
  return false;
}

/** Answers with the vendor's session-limit rejection, or resets the BMC when it has been over its limit too long. */
function rejectOverLimit(context: ServiceContext, bmc: SimBmc, request: IncomingMessage, response: ServerResponse): void {
  if (bmc.noteRejection(context.clock.now(), context.behaviour)) {
    bmc.reset(context.clock, context.behaviour.resetDarkMs);
    context.onReset?.(bmc);
    goDarkIfDark(context, bmc, request);
    return;
  }
  sendReply(response, bmc.profile.sessionLimitReply);
}

async function login(context: ServiceContext, bmc: SimBmc, request: IncomingMessage, response: ServerResponse, idleTimeoutMs: number): Promise<void> {
  const { clock } = context;
  const body = await readJson(request);
  await clock.sleep(latencyOf(context, bmc, SESSIONS));
  if (goDarkIfDark(context, bmc, request)) return;
  const user = (body as { UserName?: unknown } | undefined)?.UserName;
  const password = (body as { Password?: unknown } | undefined)?.Password;
  if (typeof user !== 'string' || typeof password !== 'string') {
    return sendJson(response, 400, baseError('PropertyMissing', 'The property UserName or Password is a required property and must be included in the request.', 'Ensure that the property is in the request body and has a valid value and resubmit the request if the operation failed.'));
  }
  if (!checkCredentials(context, bmc, user, password)) return sendReply(response, bmc.profile.unauthorizedReply);
  const now = clock.now();
  if (bmc.sessionsInUse(now, idleTimeoutMs) >= bmc.profile.sessionLimit) return rejectOverLimit(context, bmc, request, response);
  const token = randomBytes(16).toString('hex');
  const session = { id: String(bmc.nextId++), token, userName: user, createdAt: now, lastUsedAt: now };
  (bmc.sessions ??= new Map()).set(token, session);
  bmc.notePeak(bmc.sessionsInUse(now, idleTimeoutMs));
  const location = `${bmc.linkPrefix}${SESSIONS}/${session.id}`;
  sendJson(response, 201, sessionBody(bmc, session), { 'X-Auth-Token': token, Location: location });
}

export function versionOfImage(imageUri: string, profile: VendorProfile): string | undefined {
  const name = imageUri.split(/[/\\]/).pop() ?? imageUri;
  const known = [...profile.firmwareMix].sort((a, b) => b.version.length - a.version.length).find((revision) => name.includes(revision.version));
  if (known) return known.version;
  const numbers = name.match(/\d+(?:\.\d+)+/g);
  return numbers?.[numbers.length - 1];
}

function dynamicBody(context: ServiceContext, bmc: SimBmc, path: string): string | undefined {
  const now = context.clock.now();
  const events = eventServiceBody(bmc, path, context.behaviour.eventHeartbeatMs);
  if (events !== undefined) return events;
  if (path === SESSIONS) return JSON.stringify(sessionCollection(bmc));
  if (path === ACCOUNTS) return JSON.stringify(accountCollection(bmc));
  if (path.startsWith(`${ACCOUNTS}/`)) {
    const account = accountBody(bmc, now) as { Id: string };
    return path.slice(ACCOUNTS.length + 1) === account.Id ? JSON.stringify(account) : undefined;
  }
  if (path.startsWith(`${SESSIONS}/`)) {
    const id = path.slice(SESSIONS.length + 1);
    const session = [...(bmc.sessions?.values() ?? [])].find((candidate) => candidate.id === id);
    return session ? JSON.stringify(sessionBody(bmc, session)) : undefined;
  }
  if (path.startsWith(`${TASKS}/`)) {
    const task = bmc.tasks?.get(path.slice(TASKS.length + 1));
    return task ? JSON.stringify(taskBodyOf(bmc, task, now)) : undefined;
  }
  if (path === TASKS && bmc.tasks?.size) {
    const captured = bmc.capture.resources.get(TASKS);
    const collection = (captured ? JSON.parse(renderResource(captured, bmc, context.seed)) : { '@odata.id': `${bmc.linkPrefix}${TASKS}`, Name: 'Task Collection' }) as Record<string, unknown>;
    const members = [...((collection['Members'] as unknown[] | undefined) ?? []), ...[...bmc.tasks.keys()].map((id) => ({ '@odata.id': `${bmc.linkPrefix}${TASKS}/${id}` }))];
    return JSON.stringify({ ...collection, Members: members, 'Members@odata.count': members.length });
  }
  return undefined;
}

/** What a GET of `path` answers: this BMC's own state, else the tree (the captured machine's sessions never). */
function bodyOf(context: ServiceContext, bmc: SimBmc, path: string, query: URLSearchParams): string | undefined {
  const served = dynamicBody(context, bmc, path) ?? (path.startsWith(`${SESSIONS}/`) ? undefined : capturedBody(context, bmc, path, query));
  const body = served !== undefined && bmc.healthOverride !== undefined && isSystemPath(path) ? withHealth(served, bmc.healthOverride) : served;
  return body !== undefined && bmc.profile.serving?.placeholders ? withPlaceholders(body) : body;
}

/** A System's body with the health a `health` fault set. */
function withHealth(body: string, health: NonNullable<SimBmc['healthOverride']>): string {
  const system = JSON.parse(body) as { Status?: Record<string, unknown> };
  return JSON.stringify({ ...system, Status: { ...(system.Status ?? {}), Health: health, HealthRollup: health } });
}

/** The host name a request was addressed to (its `Host` header), else the address it arrived at. */
function requestHost(request: IncomingMessage): string {
  try {
    if (request.headers.host) return new URL(`http://${request.headers.host}`).hostname;
  } catch {
    // An unparsable Host header: the socket's own address below.
  }
  return request.socket.localAddress?.replace(/^::ffff:/, '') ?? '127.0.0.1';
}

function capturedBody(context: ServiceContext, bmc: SimBmc, path: string, query: URLSearchParams): string | undefined {
  const stored = storedPath(path, bmc, context.seed);
  const skip = query.get('$skip');
  const key = skip !== null && skip !== '0' ? `${stored}?$skip=${skip}` : stored;
  const template = bmc.capture.resources.get(key) ?? bmc.capture.resourcesByLowerPath.get(key.toLowerCase());
  if (!template) return undefined;
  const body = renderResource(template, bmc, context.seed);
  if (stored === '/redfish/v1/UpdateService' && bmc.activeUpdate && !bmc.activeUpdate.finished) {
    return JSON.stringify({ ...(JSON.parse(body) as Record<string, unknown>), HttpPushUriTargetsBusy: true });
  }
  const updated = bmc.inventoryVersions?.get(stored);
  if (updated === undefined) return body;
  return JSON.stringify({ ...(JSON.parse(body) as Record<string, unknown>), Version: updated });
}

/**
 * What a member given expanded costs the BMC, as a share of its own request's response time. Assumed, not measured
 * (no capture holds the timing of an expanded answer): a BMC's time per request goes mostly to what every request
 * pays (TLS, authentication, the web server), but rendering is not free either. At one half, an expanded collection
 * takes as long as its members read two at a time, as the driver reads them: expansion saves requests, sockets and
 * the poller's CPU, not the read's time.
 */
const EXPANSION_COST = 0.5;

/** Whether this BMC's service root announces `$expand` (`ProtocolFeaturesSupported.ExpandQuery.NoLinks`), per capture. */
const expandAnswered = new WeakMap<SimBmc['capture'], boolean>();

function answersExpand(context: ServiceContext, bmc: SimBmc): boolean {
  let answers = expandAnswered.get(bmc.capture);
  if (answers === undefined) {
    const root = capturedBody(context, bmc, '/redfish/v1', new URLSearchParams());
    const expand = root ? (JSON.parse(root) as { ProtocolFeaturesSupported?: { ExpandQuery?: { NoLinks?: unknown } } }).ProtocolFeaturesSupported?.ExpandQuery : undefined;
    answers = expand?.NoLinks === true;
    expandAnswered.set(bmc.capture, answers);
  }
  return answers;
}

/**
 * A collection's answer with its members expanded one level (`$expand=.`): each member the BMC has is given whole in
 * `Members`, one it lacks stays a link. Anything that is not a collection is answered as it is.
 */
function expandMembers(context: ServiceContext, bmc: SimBmc, body: string): { body: string; memberPaths: string[] } {
  const collection = JSON.parse(body) as Record<string, unknown>;
  if (!Array.isArray(collection.Members)) return { body, memberPaths: [] };
  const memberPaths: string[] = [];
  collection.Members = collection.Members.map((member: unknown) => {
    const id = (member as { '@odata.id'?: unknown } | null)?.['@odata.id'];
    if (typeof id !== 'string') return member;
    const path = canonicalPath(decodePath(bmc.linkPrefix && id.startsWith(bmc.linkPrefix) ? id.slice(bmc.linkPrefix.length) : id));
    const own = bodyOf(context, bmc, path, new URLSearchParams());
    if (own === undefined) return member;
    memberPaths.push(path);
    return JSON.parse(own) as unknown;
  });
  return { body: JSON.stringify(collection), memberPaths };
}

/** The simulated response time of one request: capture average with jitter, or the slow resource's own. */
function latencyOf(context: ServiceContext, bmc: SimBmc, path: string): number {
  const scale = context.behaviour.latencyScale * bmc.slowFactor;
  if (scale === 0) return 0;
  let patterns = slowPatterns.get(bmc.profile);
  if (!patterns) {
    patterns = bmc.profile.slowResources.map((slow) => ({ pattern: new RegExp(slow.pattern), latencyMs: slow.latencyMs }));
    slowPatterns.set(bmc.profile, patterns);
  }
  const jitter = 0.5 + context.random();
  const slow = patterns.find((candidate) => candidate.pattern.test(path));
  if (slow) return slow.latencyMs * jitter * scale;
  const { averageMs, minimumMs } = bmc.capture.latency;
  return Math.max(minimumMs, averageMs * jitter) * scale;
}

function matchesEtag(header: string | undefined, etag: string): boolean {
  if (!header) return false;
  const weak = (tag: string): string => tag.trim().replace(/^W\//, '');
  return header.split(',').some((tag) => tag.trim() === '*' || weak(tag) === weak(etag));
}

function parseBasic(header: string | undefined): { user: string; password: string } | undefined {
  if (!header?.startsWith('Basic ')) return undefined;
  const decoded = Buffer.from(header.slice(6), 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  return colon < 0 ? undefined : { user: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
}

function decodePath(path: string): string {
  try {
    return decodeURIComponent(path);
  } catch {
    return path;
  }
}

async function readJson(request: IncomingMessage): Promise<unknown> {
  let text = '';
  for await (const chunk of request) {
    text += String(chunk);
    if (text.length > 1_000_000) return undefined;
  }
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

export function sendJson(response: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  response
    .writeHead(status, { 'Content-Type': 'application/json; charset=utf-8', 'OData-Version': '4.0', ...headers })
    .end(JSON.stringify(body));
}

function sendReply(response: ServerResponse, reply: ErrorReply, headers: Record<string, string> = {}): void {
  sendJson(response, reply.status, reply.body, headers);
}
