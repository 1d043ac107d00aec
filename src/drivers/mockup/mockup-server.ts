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
import type { AddressInfo } from 'node:net';
import { requestKey, readBody, send } from './mockup-http.js';
import { MockupSessions, NO_VALID_SESSION_BODY } from './mockup-sessions.js';
import { MockupTree, SESSIONS_PATH } from './mockup-tree.js';

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

/** What one request is answered from: the options, the capture, the session table, the counts, and hung responses. */
interface MockupState {
  options: MockupServerOptions;
  tree: MockupTree;
  sessions: MockupSessions;
  stats: MockupStats;
  hanging: Set<ServerResponse>;
}

export async function startMockupServer(options: MockupServerOptions): Promise<MockupServer> {
  const stats: MockupStats = { actions: [], sessionsCreated: 0, sessionsDeleted: 0, sessionsRefused: 0, requests: 0, basicAuthRequests: 0 };
  const state: MockupState = { options, tree: new MockupTree(options.folder, options.transform), sessions: new MockupSessions(options, stats), stats, hanging: new Set() };
  const listener = (request: IncomingMessage, response: ServerResponse): void => {
    handle(state, request, response).catch(() => {
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
    activeSessions: () => state.sessions.size,
    close: async () => {
      for (const response of state.hanging) response.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** Answers one request: a fault if one is set for it, then sessions, authorization, actions, and the capture's resources. */
async function handle(state: MockupState, request: IncomingMessage, response: ServerResponse): Promise<void> {
  const { options, tree, sessions, stats } = state;
  stats.requests += 1;
  const method = request.method ?? 'GET';
  const { path, key } = requestKey(request.url ?? '/');
  const fault = options.fault?.({ method, path: key });
  if (fault && (await answerFault(state, fault, request, response))) return;

  if (method === 'POST' && (await tree.sessionPaths()).has(path)) {
    await sessions.create(request, response, path);
    return;
  }

  const isRoot = path === '/redfish/v1' || path === '/redfish';
  if (!isRoot && !sessions.authorized(request)) {
    send(response, 401, NO_VALID_SESSION_BODY);
    return;
  }

  const sessionCollection = [...(await tree.sessionPaths())].find((collection) => path.startsWith(`${collection}/`));
  if (method === 'DELETE' && sessionCollection) {
    sessions.remove(response, path.slice(sessionCollection.length + 1));
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
    sessions.list(response);
    return;
  }

  const found = (await tree.resource(key)) ?? (await tree.impliedCollection(key));
  if (found === undefined) {
    send(response, 404, { error: { code: 'Base.1.8.ResourceMissingAtURI', message: `The resource at the URI ${key} was not found.` } });
    return;
  }
  const body = options.transform ? options.transform(key, structuredClone(found)) : found;
  send(response, 200, body);
}

/** Applies a fault; true when it answered (or dropped) the request, false when the request goes on (after a delay). */
async function answerFault(state: MockupState, fault: MockupFault, request: IncomingMessage, response: ServerResponse): Promise<boolean> {
  if (fault.kind === 'delay') {
    await new Promise((resolve) => setTimeout(resolve, fault.ms));
    return false;
  }
  if (fault.kind === 'hang') state.hanging.add(response);
  else if (fault.kind === 'destroy') request.socket.destroy();
  else if (fault.kind === 'raw') {
    response.writeHead(fault.status ?? 200, { 'content-type': 'application/json' });
    response.end(fault.text);
  } else send(response, fault.status, fault.body, fault.headers);
  return true;
}
