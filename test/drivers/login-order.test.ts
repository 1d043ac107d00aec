/**
 * Login falls back in a fixed order (a session at the path the service root advertises, a session at the
 * standard path, basic auth) and never tries a refused credential more than twice in one login: BMCs lock
 * accounts out after a few failures, and a poller that retried every path would do it for them.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { RedfishClient, RedfishDriver, startMockupServer, type MockupServer, type MockupServerOptions } from '../../src/drivers/index.js';
import { profileMockup } from '../support/profile-mockup.js';

const standard = '/redfish/v1/SessionService/Sessions';
const servers: MockupServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

/** The Dell profile's tree with its root advertising `advertised` as `Links.Sessions`; every session POST counted. */
async function bmc(advertised: string, options: Partial<MockupServerOptions> = {}): Promise<{ server: MockupServer; posts: string[] }> {
  const posts: string[] = [];
  const server = await startMockupServer({
    folder: profileMockup('dell'),
    ...options,
    transform: (path, body) => (path === '/redfish/v1' ? { ...(body as object), Links: { Sessions: { '@odata.id': advertised } } } : body),
    fault: (request) => {
      if (request.method === 'POST' && /Sessions$/.test(request.path)) posts.push(request.path);
      return options.fault?.(request);
    },
  });
  servers.push(server);
  return { server, posts };
}

async function read(server: MockupServer, password = 'calvin'): Promise<{ driver: RedfishDriver; error?: unknown }> {
  const driver = new RedfishDriver({ baseUrl: server.url, username: 'root', password });
  try {
    await driver.observe();
    return { driver };
  } catch (error) {
    return { driver, error };
  } finally {
    await driver.close();
  }
}

describe('login order', () => {
  it('1. a session at the path the root advertises (an older iDRAC: /redfish/v1/Sessions)', async () => {
    const { server, posts } = await bmc('/redfish/v1/Sessions');
    const { driver, error } = await read(server);
    expect(error).toBeUndefined();
    expect(driver.sessionPath).toBe('/redfish/v1/Sessions');
    expect(posts).toEqual(['/redfish/v1/Sessions']);
    expect(server.activeSessions()).toBe(0);
  });

  it('2. the standard path when the advertised one does not take sessions (404)', async () => {
    const { server, posts } = await bmc('/redfish/v1/Sessions', { fault: ({ method, path }) => (method === 'POST' && path === '/redfish/v1/Sessions' ? { kind: 'status', status: 404 } : undefined) });
    const { driver, error } = await read(server);
    expect(error).toBeUndefined();
    expect(driver.sessionPath).toBe(standard);
    expect(posts).toEqual(['/redfish/v1/Sessions', standard]);
  });

  it('3. basic auth when no path takes sessions (a tree served without a session collection answers 404)', async () => {
    const { server, posts } = await bmc('/redfish/v1/Sessions', { sessions: 'absent' });
    const { driver, error } = await read(server);
    expect(error).toBeUndefined();
    expect(driver.authentication).toBe('basic');
    expect(driver.sessionPath).toBeUndefined();
    expect(posts).toEqual(['/redfish/v1/Sessions', standard]);
    expect(server.stats.basicAuthRequests).toBeGreaterThan(0);
    expect(server.stats.sessionsCreated).toBe(0);
  });

  it('a session that expires is opened again at the path that took it, not at the standard path', async () => {
    let expired = false;
    const { server, posts } = await bmc('/redfish/v1/Sessions', {
      fault: ({ method, path }) => {
        // The standard path refuses this account; the second read of Systems finds the session gone (NoValidSession).
        if (method === 'POST' && path === standard) return { kind: 'status', status: 401 };
        if (method === 'GET' && path === '/redfish/v1/Systems' && posts.length === 1 && !expired) {
          expired = true;
          return { kind: 'status', status: 401, body: { error: { '@Message.ExtendedInfo': [{ MessageId: 'Base.1.4.NoValidSession' }] } } };
        }
        return undefined;
      },
    });
    const client = new RedfishClient({ baseUrl: server.url, username: 'root', password: 'calvin' });
    try {
      await client.login('/redfish/v1/Sessions');
      const answer = await client.get('/redfish/v1/Systems');
      expect(answer.status).toBe(200);
      expect(expired).toBe(true);
      expect(posts).toEqual(['/redfish/v1/Sessions', '/redfish/v1/Sessions']);
      expect(client.sessionPath).toBe('/redfish/v1/Sessions');
    } finally {
      await client.logout();
      await client.close();
    }
    expect(server.activeSessions()).toBe(0);
  });

  it('a session answered as DMTF\'s mockup server answers it (204, no body, Location and X-Auth-Token) is used and closed', async () => {
    const { server } = await bmc(standard, { sessionAnswer: 'dmtf' });
    const { driver, error } = await read(server);
    expect(error).toBeUndefined();
    expect(driver.authentication).toBe('session');
    expect(server.stats.sessionsCreated).toBe(1);
    expect(server.stats.sessionsDeleted).toBe(1);
  });

  it('a refused credential is tried at most twice in one login (advertised path, then standard), never then over basic auth', async () => {
    const { server, posts } = await bmc('/redfish/v1/Sessions');
    const { error } = await read(server, 'wrong');
    expect(error).toMatchObject({ code: 'DRIVER_AUTH', retryable: false });
    expect(posts).toEqual(['/redfish/v1/Sessions', standard]);
    expect(server.stats.basicAuthRequests).toBe(0);
  });

  it('where the root advertises the standard path, a refused credential is tried once', async () => {
    const { server, posts } = await bmc(standard);
    const { error } = await read(server, 'wrong');
    expect(error).toMatchObject({ code: 'DRIVER_AUTH' });
    expect(posts).toEqual([standard]);
  });
});
