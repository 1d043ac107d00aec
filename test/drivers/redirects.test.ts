/**
 * Redfish reads follow redirects on the BMC's own host and nowhere else: a 301 that adds a slash, a 301 to another
 * port of the controller (Lenovo IMM2 moves its service so), each followed; a redirect to another host, a loop, too
 * many hops, or a redirected POST refused as `DRIVER_REDIRECT_REFUSED` naming the `Location`, and nothing sent to a
 * host the BMC is not. Served over real HTTP: our own Dell profile's tree behind front servers written here.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { DriverError, RedfishDriver, startMockupServer, type MockupServer } from '../../src/drivers/index.js';
import type { NodeInventoryObservedData } from '../../events/driver-observations.js';
import { profileMockup } from '../support/profile-mockup.js';

interface Front {
  url: string;
  port: number;
  /** Every request it received: method, path, and whether it carried a credential. */
  requests: Array<{ method: string; url: string; credential: boolean }>;
  close(): Promise<void>;
}

const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  await Promise.all(closers.splice(0).map((close) => close()));
});

/** A server on 127.0.0.1 that answers with `redirect` where it gives a Location, else passes the request to `backend`. */
async function front(redirect: (request: IncomingMessage) => { status: number; location: string } | undefined, backend?: string): Promise<Front> {
  const requests: Front['requests'] = [];
  const server: Server = createServer((request: IncomingMessage, response: ServerResponse) => {
    requests.push({ method: request.method ?? 'GET', url: request.url ?? '/', credential: request.headers['x-auth-token'] !== undefined || request.headers.authorization !== undefined });
    const moved = redirect(request);
    if (moved || !backend) {
      response.writeHead(moved?.status ?? 404, moved ? { Location: moved.location, 'Content-Length': '0' } : { 'Content-Length': '0' }).end();
      return;
    }
    void pass(request, response, backend);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  const close = () => new Promise<void>((resolve) => server.close(() => resolve()));
  closers.push(close);
  server.on('connection', (socket) => closers.push(async () => void socket.destroy()));
  return { url: `http://127.0.0.1:${port}`, port, requests, close };
}

async function pass(request: IncomingMessage, response: ServerResponse, backend: string): Promise<void> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  const headers = Object.fromEntries(Object.entries(request.headers).filter(([name, value]) => typeof value === 'string' && !['host', 'connection', 'content-length'].includes(name))) as Record<string, string>;
  const answer = await fetch(`${backend}${request.url ?? '/'}`, { method: request.method, headers, redirect: 'manual', ...(chunks.length > 0 ? { body: Buffer.concat(chunks) } : {}) });
  const body = Buffer.from(await answer.arrayBuffer());
  const passed: Record<string, string> = { 'content-length': String(body.length) };
  for (const name of ['content-type', 'location', 'x-auth-token', 'etag']) {
    const value = answer.headers.get(name);
    if (value) passed[name] = value;
  }
  response.writeHead(answer.status, passed).end(body);
}

async function backend(): Promise<MockupServer> {
  const server = await startMockupServer({ folder: profileMockup('dell') });
  closers.push(() => server.close());
  return server;
}

async function observe(baseUrl: string): Promise<NodeInventoryObservedData> {
  const driver = new RedfishDriver({ baseUrl, username: 'root', password: 'calvin', maxConcurrency: 4, requestTimeoutMs: 5_000 });
  try {
    for (const observation of await driver.observe({ only: ['NodeInventoryObserved'] })) if (observation.type === 'NodeInventoryObserved') return observation.data;
    throw new Error('no inventory observed');
  } finally {
    await driver.close();
  }
}

async function refusal(baseUrl: string): Promise<DriverError> {
  const error = await observe(baseUrl).then(
    () => undefined,
    (failure: unknown) => failure,
  );
  expect(error).toBeInstanceOf(DriverError);
  return error as DriverError;
}

const identity = (inventory: NodeInventoryObservedData) => ({ system: inventory.system, bmc: inventory.bmc, cpus: inventory.cpus, gpus: inventory.gpus?.count, memory: inventory.memory });

describe('HTTP redirects of a Redfish service', () => {
  it('a same-host 301 that adds a slash to every path is followed, and the BMC reads as it does without it', async () => {
    const bmc = await backend();
    const slashing = await front((request) => {
      const [path = '/', query] = (request.url ?? '/').split('?');
      return request.method === 'GET' && !path.endsWith('/') ? { status: 301, location: `${path}/${query === undefined ? '' : `?${query}`}` } : undefined;
    }, bmc.url);
    const [read, plain] = [await observe(slashing.url), await observe(bmc.url)];
    expect(identity(read)).toEqual(identity(plain));
    expect(read.unreadable ?? []).toEqual([]);
    expect(slashing.requests.filter((request) => request.method === 'GET' && !request.url.split('?')[0]!.endsWith('/')).length).toBeGreaterThan(10);
    expect(bmc.stats.sessionsCreated).toBe(bmc.stats.sessionsDeleted);
  });

  it('a 301 to another port of the same host is followed, and the service is used there from then on: session, reads and logout', async () => {
    const bmc = await backend();
    const moved = await front((request) => ({ status: 301, location: `${bmc.url}${request.url ?? '/'}` }));
    const read = await observe(moved.url);
    expect(identity(read)).toEqual(identity(await observe(bmc.url)));
    // One request met the old port (the service root, without credentials); everything after went to the new one.
    expect(moved.requests).toEqual([{ method: 'GET', url: '/redfish/v1', credential: false }]);
    expect(bmc.stats.sessionsCreated).toBe(2);
    expect(bmc.activeSessions()).toBe(0);
  });

  it('a redirect to another host is refused, naming its Location, and nothing reaches that host', async () => {
    const elsewhere = await front(() => undefined);
    const leaving = await front((request) => ({ status: 302, location: `http://localhost:${elsewhere.port}${request.url ?? '/'}` }));
    const error = await refusal(leaving.url);
    expect(error.code).toBe('DRIVER_REDIRECT_REFUSED');
    expect(error.retryable).toBe(false);
    expect(error.message).toContain(`http://localhost:${elsewhere.port}/redfish/v1`);
    expect(error.details.location).toBe(`http://localhost:${elsewhere.port}/redfish/v1`);
    expect(elsewhere.requests).toEqual([]);
  });

  it('one resource redirected to another host is left unread (named), the rest of the read goes on, and no credential leaves', async () => {
    const bmc = await backend();
    const elsewhere = await front(() => undefined);
    const processors = '/redfish/v1/Systems/System.Embedded.1/Processors';
    const leaking = await front((request) => (request.url === processors ? { status: 307, location: `http://localhost:${elsewhere.port}${processors}` } : undefined), bmc.url);
    const read = await observe(leaking.url);
    expect(read.unreadable).toContainEqual({ path: processors, code: 'DRIVER_REDIRECT_REFUSED' });
    expect(read.system.model).toBe('PowerEdge R750');
    expect(elsewhere.requests).toEqual([]);
  });

  it('a redirect loop and a chain longer than five hops are refused, each naming where it led', async () => {
    const looping = await front((request) => ({ status: 301, location: request.url === '/redfish/v1' ? '/redfish/v1/' : '/redfish/v1' }));
    const loop = await refusal(looping.url);
    expect(loop.code).toBe('DRIVER_REDIRECT_REFUSED');
    expect(loop.message).toMatch(/loops/);
    expect(loop.details.location).toBe('/redfish/v1');

    const chaining = await front((request) => ({ status: 301, location: `/hop${Number(/\d+/.exec(request.url ?? '')?.[0] ?? 0) + 1}` }));
    const chain = await refusal(chaining.url);
    expect(chain.code).toBe('DRIVER_REDIRECT_REFUSED');
    expect(chain.message).toMatch(/more than 5 redirects/);
    expect(chaining.requests).toHaveLength(6);
  });

  it('a redirected session POST is not sent again: the error names the Location', async () => {
    const bmc = await backend();
    const posting = await front((request) => (request.method === 'POST' ? { status: 307, location: `${bmc.url}${request.url ?? '/'}` } : undefined), bmc.url);
    const error = await refusal(posting.url);
    expect(error.code).toBe('DRIVER_REDIRECT_REFUSED');
    expect(error.message).toContain(`${bmc.url}/redfish/v1/SessionService/Sessions`);
    expect(bmc.stats.sessionsCreated).toBe(0);
  });
});
