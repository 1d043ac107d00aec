/**
 * A session that expires while several reads are in flight is replaced once: the reads that meet the 401 wait for the
 * one re-login and retry with its token; a 401 to the old token, arriving after the new session exists, never deletes
 * the new session. The BMC here is a small HTTP server that keeps a session table and answers reads with a delay of
 * the test's choosing, so the 401s arrive before, during and after the re-login.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { RedfishClient } from '../../src/drivers/index.js';

interface Bmc {
  baseUrl: string;
  /** Tokens the BMC holds now. */
  live: Set<string>;
  created: string[];
  /** DELETEs of sessions, in order, with whether the session was live when deleted. */
  deleted: Array<{ token: string; wasLive: boolean }>;
  /** Reads answered, by the token they carried and the status given. */
  reads: Array<{ path: string; token: string | undefined; status: number }>;
  server: Server;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** `/redfish/v1/slow/<ms>` answers after that many ms; a session POST takes `loginMs`. */
async function startBmc(loginMs: number): Promise<Bmc> {
  const bmc = { live: new Set<string>(), created: [], deleted: [], reads: [] } as unknown as Bmc;
  bmc.server = createServer((request, response) => {
    void (async () => {
      const path = request.url ?? '/';
      const token = typeof request.headers['x-auth-token'] === 'string' ? request.headers['x-auth-token'] : undefined;
      for await (const _ of request); // drain the body
      if (request.method === 'POST' && path === '/redfish/v1/SessionService/Sessions') {
        await sleep(loginMs);
        const next = `token-${bmc.created.length + 1}`;
        bmc.created.push(next);
        bmc.live.add(next);
        response.writeHead(201, { 'x-auth-token': next, location: `/redfish/v1/SessionService/Sessions/${next}`, 'content-type': 'application/json' });
        response.end(JSON.stringify({ '@odata.id': `/redfish/v1/SessionService/Sessions/${next}` }));
        return;
      }
      if (request.method === 'DELETE' && path.startsWith('/redfish/v1/SessionService/Sessions/')) {
        const victim = path.split('/').pop()!;
        bmc.deleted.push({ token: victim, wasLive: bmc.live.has(victim) });
        bmc.live.delete(victim);
        response.writeHead(204);
        response.end();
        return;
      }
      const delay = Number(/\/slow\/(\d+)/.exec(path)?.[1] ?? 0);
      // The session is checked when the answer is due, as a BMC whose session timed out meanwhile would.
      await sleep(delay);
      const status = token && bmc.live.has(token) ? 200 : 401;
      bmc.reads.push({ path, token, status });
      if (status === 401) {
        response.writeHead(401, { 'content-type': 'application/json' });
        response.end(JSON.stringify({ error: { code: 'Base.1.4.NoValidSession', message: 'no valid session', '@Message.ExtendedInfo': [{ MessageId: 'Base.1.4.NoValidSession' }] } }));
        return;
      }
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ '@odata.id': path, Id: path.split('/').pop() }));
    })();
  });
  await new Promise<void>((resolve) => bmc.server.listen(0, '127.0.0.1', () => resolve()));
  bmc.baseUrl = `http://127.0.0.1:${(bmc.server.address() as AddressInfo).port}`;
  return bmc;
}

describe('re-login after a session expired, with reads in flight', () => {
  let bmc: Bmc | undefined;
  const clients: RedfishClient[] = [];
  const clientOf = (baseUrl: string, maxConcurrency: number): RedfishClient => {
    const client = new RedfishClient({ baseUrl, username: 'u', password: 'p', maxConcurrency, authMode: 'session' });
    clients.push(client);
    return client;
  };
  afterEach(async () => {
    for (const client of clients.splice(0)) await client.close();
    bmc?.server.closeAllConnections();
    await new Promise<void>((resolve) => bmc?.server.close(() => resolve()) ?? resolve());
    bmc = undefined;
  });

  it('reads that meet the 401 together share one re-login and all succeed with its token', async () => {
    bmc = await startBmc(80);
    const client = clientOf(bmc.baseUrl, 4);
    await client.login();
    expect(await client.get('/redfish/v1/slow/0')).toMatchObject({ status: 200 });
    bmc.live.clear(); // the BMC forgets the session
    const answers = await Promise.all([5, 10, 15, 20].map((ms) => client.get(`/redfish/v1/slow/${ms}`)));
    expect(answers.map((answer) => answer.status)).toEqual([200, 200, 200, 200]);
    expect(bmc.created).toEqual(['token-1', 'token-2']);
    expect(bmc.reads.filter((read) => read.status === 200 && read.path !== '/redfish/v1/slow/0').map((read) => read.token)).toEqual(['token-2', 'token-2', 'token-2', 'token-2']);
    expect(bmc.reads.filter((read) => read.token === undefined)).toEqual([]);
    await client.close();
    expect(client.sessionsOpened).toBe(client.sessionsClosed);
    expect(bmc.live.size).toBe(0);
  });

  it('an old token\'s 401 that arrives after the new session exists never deletes the new session', async () => {
    bmc = await startBmc(20);
    const client = clientOf(bmc.baseUrl, 2);
    await client.login();
    bmc.live.clear();
    // The quick read meets the 401 and logs in again (20 ms); the slow one, sent with the old token too, meets its
    // 401 only after the new session exists (200 ms), while a third read is using the new session.
    const slow = client.get('/redfish/v1/slow/200');
    expect((await client.get('/redfish/v1/slow/5')).status).toBe(200);
    const during = client.get('/redfish/v1/slow/300');
    expect((await slow).status).toBe(200);
    expect((await during).status).toBe(200);
    // Only the forgotten session was ever deleted; the new one is live until close().
    expect(bmc.created).toEqual(['token-1', 'token-2']);
    expect(bmc.deleted).toEqual([{ token: 'token-1', wasLive: false }]);
    expect(bmc.live).toEqual(new Set(['token-2']));
    await client.close();
    expect(bmc.deleted).toEqual([
      { token: 'token-1', wasLive: false },
      { token: 'token-2', wasLive: true },
    ]);
    expect(client.sessionsOpened).toBe(client.sessionsClosed);
  });

  it('a read sent while the session is being replaced waits for the new token instead of going out with none', async () => {
    bmc = await startBmc(100);
    const client = clientOf(bmc.baseUrl, 2);
    await client.login();
    bmc.live.clear();
    const first = client.get('/redfish/v1/slow/0');
    await sleep(40); // the 401 is in, the re-login (100 ms) under way
    const second = await client.get('/redfish/v1/slow/0');
    expect(second.status).toBe(200);
    expect((await first).status).toBe(200);
    expect(bmc.reads.filter((read) => read.token === undefined)).toEqual([]);
    expect(bmc.created).toEqual(['token-1', 'token-2']);
    await client.close();
  });
});
