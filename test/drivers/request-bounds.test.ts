/**
 * What `RedfishClient` guarantees of every request, held against a BMC that misbehaves on purpose (a small HTTP
 * server): each request has a deadline that covers waiting for a connection, headers and body alike; the visit's
 * deadline cuts every request in flight; an answer larger than the bound is refused before it is kept whole; and a
 * link is sent where the URL parser would send it.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Pool } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { DriverError, RedfishClient } from '../../src/drivers/index.js';

interface Bmc {
  baseUrl: string;
  server: Server;
  /** Request paths as they reached the BMC. */
  paths: string[];
  /** Requests whose connection was closed before the answer was finished. */
  cut: number;
}

const bmcs: Bmc[] = [];
const drips: NodeJS.Timeout[] = [];

async function startBmc(answer: (request: IncomingMessage, response: ServerResponse, bmc: Bmc) => void): Promise<Bmc> {
  const bmc = { paths: [], cut: 0 } as unknown as Bmc;
  bmc.server = createServer((request, response) => {
    bmc.paths.push(request.url ?? '');
    response.on('close', () => {
      if (!response.writableFinished) bmc.cut += 1;
    });
    answer(request, response, bmc);
  });
  await new Promise<void>((resolve) => bmc.server.listen(0, '127.0.0.1', resolve));
  bmc.baseUrl = `http://127.0.0.1:${(bmc.server.address() as AddressInfo).port}`;
  bmcs.push(bmc);
  return bmc;
}

/** Sends `chunk` every `everyMs` until the connection closes. */
function drip(response: ServerResponse, chunk: string, everyMs: number): void {
  const timer = setInterval(() => response.write(chunk), everyMs);
  drips.push(timer);
  response.on('close', () => clearInterval(timer));
}

async function failure(promise: Promise<unknown>): Promise<DriverError> {
  const error = await promise.then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  expect(error).toBeInstanceOf(DriverError);
  return error as DriverError;
}

/** Resolves once `condition` holds (polled; no fixed wait). */
async function until(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((resolve) => setTimeout(resolve, 10));
}

afterEach(async () => {
  for (const timer of drips.splice(0)) clearInterval(timer);
  await Promise.all(bmcs.splice(0).map((bmc) => new Promise<void>((resolve) => bmc.server.close(() => resolve()).closeAllConnections())));
});

describe('every request a Redfish client sends is bounded', () => {
  it('an answer announced larger than the bound is refused at its headers, and its connection dropped', async () => {
    // The body never comes: only the header check can refuse it before the request's deadline.
    const bmc = await startBmc((_request, response) => {
      response.writeHead(200, { 'content-type': 'application/json', 'content-length': String(10 * 1024 * 1024) });
      response.write('{');
    });
    const client = new RedfishClient({ baseUrl: bmc.baseUrl, authMode: 'none', maxBodyBytes: 64 * 1024, requestTimeoutMs: 20_000 });
    const started = performance.now();
    const error = await failure(client.get('/redfish/v1'));
    expect(error.code).toBe('DRIVER_PROTOCOL');
    expect(error.message).toContain('larger than 65536 bytes');
    expect(performance.now() - started).toBeLessThan(5_000);
    await until(() => bmc.cut === 1);
    await client.close();
  });

  it('an answer that grows past the bound without announcing its length is refused as it grows', async () => {
    const bmc = await startBmc((_request, response) => {
      response.writeHead(200, { 'content-type': 'application/json' }); // chunked: no length announced
      drip(response, 'x'.repeat(16 * 1024), 5);
    });
    const client = new RedfishClient({ baseUrl: bmc.baseUrl, authMode: 'none', maxBodyBytes: 64 * 1024, requestTimeoutMs: 20_000 });
    const error = await failure(client.get('/redfish/v1'));
    expect(error.code).toBe('DRIVER_PROTOCOL');
    expect(error.message).toContain('larger than 65536 bytes');
    await until(() => bmc.cut === 1);
    await client.close();
  });

  it("a request's deadline holds while its body drips in, and the request is cut at it", async () => {
    const bmc = await startBmc((_request, response) => {
      response.writeHead(200, { 'content-type': 'application/json' });
      drip(response, ' ', 20); // always a little more: a timeout between chunks would never fire
    });
    const client = new RedfishClient({ baseUrl: bmc.baseUrl, authMode: 'none', requestTimeoutMs: 300 });
    const started = performance.now();
    const error = await failure(client.get('/redfish/v1/Systems'));
    const elapsed = performance.now() - started;
    expect(error.code).toBe('DRIVER_TIMEOUT');
    expect(error.message).toContain('passed its 300 ms deadline');
    expect(elapsed).toBeGreaterThanOrEqual(290);
    expect(elapsed).toBeLessThan(3_000);
    await until(() => bmc.cut === 1);
    await client.close();
  });

  it("a request still waiting for a connection is refused at its own deadline, not when the connection frees", async () => {
    // One connection, held for 10 s by another client's request the BMC never answers: the second waits in the queue.
    const bmc = await startBmc(() => undefined);
    const pool = new Pool(bmc.baseUrl, { connections: 1, headersTimeout: 0, bodyTimeout: 0 });
    const holder = new RedfishClient({ baseUrl: bmc.baseUrl, authMode: 'none', requestTimeoutMs: 10_000, dispatcher: pool });
    const waiter = new RedfishClient({ baseUrl: bmc.baseUrl, authMode: 'none', requestTimeoutMs: 300, dispatcher: pool });
    const held = failure(holder.get('/redfish/v1/a'));
    await until(() => bmc.paths.length === 1);
    const started = performance.now();
    const error = await failure(waiter.get('/redfish/v1/b'));
    expect(error.code).toBe('DRIVER_TIMEOUT');
    expect(error.message).toContain('/redfish/v1/b passed its 300 ms deadline');
    expect(performance.now() - started).toBeLessThan(5_000);
    expect(bmc.paths).toEqual(['/redfish/v1/a']);
    await pool.destroy();
    await held;
  });

  it("a request that waited for a connection is not written once its lease has ended meanwhile: the guard is judged again at the write", async () => {
    // One connection, held by another request the BMC answers after 400 ms; the second request's right to talk to the
    // BMC (a poll lease) ends while it waits in the queue, as when a process is stopped and resumed past its lease.
    const bmc = await startBmc((request, response) => {
      if (request.url === '/redfish/v1/a') setTimeout(() => response.end('{}'), 400);
      else response.end('{}');
    });
    const pool = new Pool(bmc.baseUrl, { connections: 1, pipelining: 1 });
    let leaseHeld = true;
    const holder = new RedfishClient({ baseUrl: bmc.baseUrl, authMode: 'none', requestTimeoutMs: 5_000, dispatcher: pool });
    const waiter = new RedfishClient({ baseUrl: bmc.baseUrl, authMode: 'none', requestTimeoutMs: 5_000, dispatcher: pool, guard: () => leaseHeld });
    const held = holder.get('/redfish/v1/a');
    await until(() => bmc.paths.length === 1);
    const waiting = failure(waiter.get('/redfish/v1/b'));
    leaseHeld = false;
    const error = await waiting;
    expect(error.code).toBe('DRIVER_FENCED');
    await held;
    expect(bmc.paths).toEqual(['/redfish/v1/a']);
    await pool.destroy();
  });

  it("the visit's deadline cuts every request in flight, and nothing is sent after it", async () => {
    const bmc = await startBmc(() => undefined); // never answers
    const visit = new AbortController();
    const client = new RedfishClient({ baseUrl: bmc.baseUrl, authMode: 'none', requestTimeoutMs: 60_000, deadline: visit.signal });
    const reads = [failure(client.get('/redfish/v1/a')), failure(client.get('/redfish/v1/b'))];
    await until(() => bmc.paths.length === 2);
    visit.abort();
    for (const error of await Promise.all(reads)) {
      expect(error.code).toBe('DRIVER_TIMEOUT');
      expect(error.message).toContain('the visit passed its total deadline');
    }
    const late = await failure(client.get('/redfish/v1/c'));
    expect(late.message).toContain('/redfish/v1/c not completed: the visit passed its total deadline');
    await until(() => bmc.cut === 2);
    expect(bmc.paths).toEqual(['/redfish/v1/a', '/redfish/v1/b']);
    await client.close();
  });

  it('a link is sent where the URL parser sends it: dot segments resolved, spaces encoded, other hosts refused', async () => {
    const bmc = await startBmc((_request, response) => {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end('{}');
    });
    const client = new RedfishClient({ baseUrl: bmc.baseUrl, authMode: 'none' });
    await client.get('/redfish/v1/Systems/../Chassis');
    await client.get('/redfish/v1/Chassis/1/./Power');
    await client.get('/redfish/v1/Chassis/A B');
    await client.get('/redfish/v1/Chassis?$expand=.($levels=1)');
    expect((await failure(client.get('//elsewhere.example/redfish/v1'))).code).toBe('DRIVER_PROTOCOL');
    expect(bmc.paths).toEqual(['/redfish/v1/Chassis', '/redfish/v1/Chassis/1/Power', '/redfish/v1/Chassis/A%20B', '/redfish/v1/Chassis?$expand=.($levels=1)']);
    await client.close();
  });
});
