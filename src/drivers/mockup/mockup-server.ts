/**
 * Serves a DMTF Mockup-Creator folder (`redfish/v1/.../index.json`) over loopback HTTP with Redfish sessions, so
 * drivers are tested against real HTTP rather than files. Used by the driver tests and by `inspect --mockup`.
 *
 * What it does like a BMC:
 * - `POST SessionService/Sessions` (or the root's advertised `Links.Sessions`) creates a session (201,
 *   `X-Auth-Token`, `Location`; or 204 without a body, as DMTF's Redfish-Mockup-Server answers), `DELETE` ends it;
 *   a full session table answers 503 with the body a real iDRAC sends (RAC0218);
 * - every resource except the service root needs a session token or basic auth;
 * - paged collections stored as `Collection?$skip=N/` folders are served for their `nextLink` URLs;
 * - a collection whose own file the capture lacks (partial captures keep only single resources) is served as the
 *   list of the members the folder holds, so the resources that were captured can be reached by their links;
 * - `/x` and `/x/` are the same resource (HPE's links end with a slash).
 * It counts sessions opened and closed, so tests can assert nothing leaked, and it can be given faults
 * (status, body, delay, dropped connection) and in-memory edits of resources.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createTlsServer } from 'node:https';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';

/** What a fault hook may do to one request instead of (or before) answering it normally. */
export type MockupFault =
  | { kind: 'status'; status: number; body?: unknown; headers?: Record<string, string> }
  | { kind: 'raw'; status?: number; text: string }
  | { kind: 'delay'; ms: number }
  | { kind: 'hang' }
  | { kind: 'destroy' };

export interface MockupServerOptions {
  /** The Mockup-Creator folder (the one that contains `redfish/`). */
  folder: string;
  username?: string;
  password?: string;
  /**
   * `enabled` (default): sessions are created at the standard path and at the path the service root advertises in
   * `Links.Sessions` (older iDRACs advertise `/redfish/v1/Sessions`); `refused` answers 405, like some iDRAC 8
   * firmware; `absent` answers 404 to every session POST, like DMTF's Redfish-Mockup-Server serving a tree that has
   * no session collection (the client must fall back to basic auth).
   */
  sessions?: 'enabled' | 'refused' | 'absent';
  /**
   * `dmtf` answers a session POST the way DMTF's Redfish-Mockup-Server does: 204 with no body, the session only in
   * the `Location` and `X-Auth-Token` headers. Default `bmc` (201 with the session resource).
   */
  sessionAnswer?: 'bmc' | 'dmtf';
  /** Concurrent sessions before 503 RAC0218. Default 8. */
  sessionLimit?: number;
  /** Rewrites a resource before it is served (in memory; the folder is never written). */
  transform?: (path: string, body: unknown) => unknown;
  /** Consulted on every request; `undefined` means answer normally. */
  fault?: (request: { method: string; path: string }) => MockupFault | undefined;
  /** Accept anything as credentials (for `inspect --mockup`). */
  acceptAnyCredentials?: boolean;
  /** Serve HTTPS with this key and certificate (PEM), like a BMC with its self-signed certificate. */
  tls?: { key: string; cert: string };
}

export interface MockupStats {
  /** Actions POSTed (`#ComputerSystem.Reset` and others), in order, with their bodies. */
  actions: Array<{ path: string; body: unknown }>;
  sessionsCreated: number;
  sessionsDeleted: number;
  sessionsRefused: number;
  requests: number;
  basicAuthRequests: number;
}

export interface MockupServer {
  readonly url: string;
  readonly stats: MockupStats;
  /** Sessions currently open. */
  activeSessions(): number;
  close(): Promise<void>;
}

const RAC0218_BODY = {
  error: {
    '@Message.ExtendedInfo': [
      {
        Message: 'The maximum number of user sessions is reached.',
        MessageArgs: [],
        'MessageArgs@odata.count': 0,
        MessageId: 'IDRAC.2.4.RAC0218',
        RelatedProperties: [],
        'RelatedProperties@odata.count': 0,
        Resolution: 'Close one or more sessions before opening another session.',
        Severity: 'Informational',
      },
    ],
    code: 'Base.1.7.GeneralError',
    message: 'A general error has occurred. See ExtendedInfo for more information',
  },
};

const NO_VALID_SESSION_BODY = { error: { '@Message.ExtendedInfo': [{ MessageId: 'Base.1.4.NoValidSession' }], code: 'Base.1.4.GeneralError', message: 'See @Message.ExtendedInfo for more information.' } };

const SESSIONS_PATH = '/redfish/v1/SessionService/Sessions';

/** The Redfish collections a partial capture may lack the file of (a resource folder is never listed as one). */
const collectionNames = /^(Systems|Managers|Chassis|Processors|Memory|PCIeDevices|PCIeFunctions|EthernetInterfaces|FirmwareInventory|SoftwareInventory|Storage|Drives|Volumes|NetworkAdapters|NetworkDeviceFunctions|Ports|PowerSupplies|Fans|Sensors|Batteries|LogServices|Entries)$/;

/** `/redfish/v1/Systems/1/` -> `/redfish/v1/Systems/1`; keeps a decoded query (`?$skip=50`). */
function requestKey(rawUrl: string): { path: string; key: string } {
  const url = new URL(rawUrl, 'http://mockup');
  const path = decodeURIComponent(url.pathname).replace(/\/+$/, '') || '/';
  const query = decodeURIComponent(url.search);
  return { path, key: `${path}${query}` };
}

function send(response: ServerResponse, status: number, body?: unknown, headers: Record<string, string> = {}): void {
  const text = body === undefined ? '' : JSON.stringify(body);
  response.writeHead(status, { 'content-type': 'application/json', 'odata-version': '4.0', ...headers });
  response.end(text);
}

async function readBody(request: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

export async function startMockupServer(options: MockupServerOptions): Promise<MockupServer> {
  const sessions = new Map<string, { id: string; user: string }>();
  const stats: MockupStats = { actions: [], sessionsCreated: 0, sessionsDeleted: 0, sessionsRefused: 0, requests: 0, basicAuthRequests: 0 };
  const cache = new Map<string, unknown>();
  const limit = options.sessionLimit ?? 8;
  const username = options.username ?? 'root';
  const password = options.password ?? 'calvin';
  const hanging = new Set<ServerResponse>();

  const credentialsOk = (user: unknown, pass: unknown): boolean =>
    options.acceptAnyCredentials === true || (user === username && pass === password);

  async function resource(key: string): Promise<unknown> {
    if (cache.has(key)) return cache.get(key);
    let body: unknown;
    try {
      body = JSON.parse(await readFile(join(options.folder, ...key.split('/').filter(Boolean), 'index.json'), 'utf8'));
    } catch {
      body = undefined;
    }
    cache.set(key, body);
    return body;
  }

  /** The paths that take a session POST: the standard one and the one the service root advertises. */
  let sessionPathSet: Set<string> | undefined;
  async function sessionPaths(): Promise<Set<string>> {
    if (sessionPathSet) return sessionPathSet;
    const stored = await resource('/redfish/v1');
    // The root as it is served (a transform may advertise another path).
    const root = (options.transform && stored !== undefined ? options.transform('/redfish/v1', structuredClone(stored)) : stored) as { Links?: { Sessions?: { '@odata.id'?: unknown } } } | undefined;
    const advertised = root?.Links?.Sessions?.['@odata.id'];
    sessionPathSet = new Set([SESSIONS_PATH, ...(typeof advertised === 'string' ? [advertised.replace(/\/+$/, '')] : [])]);
    return sessionPathSet;
  }

  /** A collection the capture has no file for, listed from the member folders it does have (partial captures). */
  async function impliedCollection(key: string): Promise<unknown> {
    if (key.includes('?') || !key.startsWith('/redfish/v1/') || !collectionNames.test(key.split('/').pop() ?? '')) return undefined;
    let entries: string[];
    try {
      entries = await readdir(join(options.folder, ...key.split('/').filter(Boolean)));
    } catch {
      return undefined;
    }
    const members: Array<{ '@odata.id': string }> = [];
    for (const entry of entries.sort()) {
      if (entry.includes('?') || (await resource(`${key}/${entry}`)) === undefined) continue;
      members.push({ '@odata.id': `${key}/${entry}` });
    }
    if (members.length === 0) return undefined;
    return { '@odata.id': key, Name: `${key.split('/').pop()} Collection (implied by the capture's folders)`, Members: members, 'Members@odata.count': members.length };
  }

  function authorized(request: IncomingMessage): boolean {
    const token = request.headers['x-auth-token'];
    if (typeof token === 'string' && sessions.has(token)) return true;
    const authorization = request.headers.authorization;
    if (typeof authorization === 'string' && authorization.startsWith('Basic ')) {
      const [user, ...rest] = Buffer.from(authorization.slice(6), 'base64').toString('utf8').split(':');
      if (credentialsOk(user, rest.join(':'))) {
        stats.basicAuthRequests += 1;
        return true;
      }
    }
    return false;
  }

  async function handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    stats.requests += 1;
    const method = request.method ?? 'GET';
    const { path, key } = requestKey(request.url ?? '/');
    const fault = options.fault?.({ method, path: key });
    if (fault) {
      if (fault.kind === 'delay') await new Promise((resolve) => setTimeout(resolve, fault.ms));
      else if (fault.kind === 'hang') {
        hanging.add(response);
        return;
      } else if (fault.kind === 'destroy') {
        request.socket.destroy();
        return;
      } else if (fault.kind === 'raw') {
        response.writeHead(fault.status ?? 200, { 'content-type': 'application/json' });
        response.end(fault.text);
        return;
      } else {
        send(response, fault.status, fault.body, fault.headers);
        return;
      }
    }

    if (method === 'POST' && (await sessionPaths()).has(path)) {
      const text = await readBody(request);
      if (options.sessions === 'refused') {
        send(response, 405);
        return;
      }
      if (options.sessions === 'absent') {
        send(response, 404, { error: { code: 'Base.1.8.ResourceMissingAtURI', message: `The resource at the URI ${path} was not found.` } });
        return;
      }
      let credentials: { UserName?: unknown; Password?: unknown } = {};
      try {
        credentials = JSON.parse(text) as typeof credentials;
      } catch {
        send(response, 400, { error: { code: 'Base.1.8.MalformedJSON', message: 'The request body submitted was malformed JSON.' } });
        return;
      }
      if (!credentialsOk(credentials.UserName, credentials.Password)) {
        send(response, 401, NO_VALID_SESSION_BODY);
        return;
      }
      if (sessions.size >= limit) {
        stats.sessionsRefused += 1;
        send(response, 503, RAC0218_BODY);
        return;
      }
      const token = randomUUID();
      const id = String(stats.sessionsCreated + 1);
      sessions.set(token, { id, user: String(credentials.UserName) });
      stats.sessionsCreated += 1;
      const location = `${path}/${id}`;
      if (options.sessionAnswer === 'dmtf') {
        response.writeHead(204, { 'x-auth-token': token, location });
        response.end();
      } else send(response, 201, { '@odata.id': location, Id: id, UserName: credentials.UserName }, { 'x-auth-token': token, location });
      return;
    }

    const isRoot = path === '/redfish/v1' || path === '/redfish';
    if (!isRoot && !authorized(request)) {
      send(response, 401, NO_VALID_SESSION_BODY);
      return;
    }

    const sessionCollection = [...(await sessionPaths())].find((collection) => path.startsWith(`${collection}/`));
    if (method === 'DELETE' && sessionCollection) {
      const id = path.slice(sessionCollection.length + 1);
      const entry = [...sessions.entries()].find(([, session]) => session.id === id);
      if (!entry) {
        send(response, 404);
        return;
      }
      sessions.delete(entry[0]);
      stats.sessionsDeleted += 1;
      send(response, 204);
      return;
    }

    if (method === 'POST' && /\/Actions\//.test(path)) {
      const text = await readBody(request);
      let body: unknown = text;
      try {
        body = JSON.parse(text);
      } catch {
        // Kept as text: the test decides whether that is acceptable.
      }
      stats.actions.push({ path, body });
      send(response, 204);
      return;
    }

    if (method !== 'GET') {
      send(response, 405);
      return;
    }

    if (path === SESSIONS_PATH) {
      const members = [...sessions.values()].map((session) => ({ '@odata.id': `${SESSIONS_PATH}/${session.id}` }));
      send(response, 200, { '@odata.id': SESSIONS_PATH, Name: 'Session Collection', Members: members, 'Members@odata.count': members.length });
      return;
    }

    const found = (await resource(key)) ?? (await impliedCollection(key));
    if (found === undefined) {
      send(response, 404, { error: { code: 'Base.1.8.ResourceMissingAtURI', message: `The resource at the URI ${key} was not found.` } });
      return;
    }
    const body = options.transform ? options.transform(key, structuredClone(found)) : found;
    send(response, 200, body);
  }

  const listener = (request: IncomingMessage, response: ServerResponse): void => {
    handle(request, response).catch(() => {
      if (!response.headersSent) send(response, 500, { error: { code: 'Base.1.8.InternalError', message: 'mockup failure' } });
      else response.destroy();
    });
  };
  const server: Server = options.tls ? createTlsServer({ key: options.tls.key, cert: options.tls.cert }, listener) : createServer(listener);
  server.keepAliveTimeout = 1000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `${options.tls ? 'https' : 'http'}://127.0.0.1:${port}`,
    stats,
    activeSessions: () => sessions.size,
    close: async () => {
      for (const response of hanging) response.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
