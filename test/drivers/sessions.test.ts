import { afterEach, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { createServer } from 'node:net';
import {
  DriverError,
  observationContentHash,
  RedfishClient,
  RedfishDriver,
  startMockupServer,
  type MockupFault,
  type MockupServer,
} from '../../src/drivers/index.js';
import { ObservationRecorder, ResourceReader } from '../../src/drivers/redfish/resource-reader.js';
import { bmcProfileByName } from '../../src/sim/index.js';
import { fixturesRequirement } from '../support/fixtures-requirement.js';
import { profileMockup } from '../support/profile-mockup.js';
import { join } from 'node:path';

const servers: MockupServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

async function serve(folder: string, options: Partial<Parameters<typeof startMockupServer>[0]> = {}): Promise<MockupServer> {
  const server = await startMockupServer({ folder: profileMockup(folder), ...options });
  servers.push(server);
  return server;
}

describe('Redfish sessions', () => {
  it('a visit cut short does not wait on a logout the BMC never answers: 2 s, not the long request timeout', async () => {
    const server = await serve('nvidia_dpu', { fault: ({ method }) => (method === 'DELETE' ? { kind: 'hang' } : undefined) });
    const cut = new AbortController();
    // The timeout a heavy visit gives its requests (firmware collections can take minutes).
    const client = new RedfishClient({ baseUrl: server.url, username: 'root', password: 'calvin', requestTimeoutMs: 30_000, deadline: cut.signal });
    await client.login();
    expect(server.activeSessions()).toBe(1);
    cut.abort(new Error('shard handed over'));
    const started = performance.now();
    await client.close();
    const took = performance.now() - started;
    expect(took).toBeGreaterThanOrEqual(1_900); // it was tried: sessions are what a BMC has least of
    expect(took).toBeLessThan(5_000);
  }, 40_000);

  it('a leaked session is never left behind after a failed read', async () => {
    const server = await serve('nvidia_dpu', {
      fault: ({ method, path }) => (method === 'GET' && path === '/redfish/v1/Managers/Bluefield_BMC' ? { kind: 'status', status: 500 } : undefined),
    });
    const driver = new RedfishDriver({ baseUrl: server.url, username: 'root', password: 'calvin', requestTimeoutMs: 2000 });
    const failure = await driver.observe().catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(DriverError);
    expect((failure as DriverError).code).toBe('DRIVER_BMC_UNAVAILABLE');
    expect(server.stats.sessionsCreated).toBe(1);
    expect(server.activeSessions()).toBe(0);
    await driver.close();
  });

  it('after any sequence of successes and failures, every session opened has been logged out', async () => {
    let currentFault: ((request: { method: string; path: string }) => MockupFault | undefined) | undefined;
    const server = await serve('nvidia_dpu', { sessionLimit: 3, fault: (request) => currentFault?.(request) });
    const step = fc.oneof(
      fc.constant({ kind: 'ok' as const }),
      fc.record({ kind: fc.constant('fail' as const), status: fc.constantFrom(400, 404, 500, 503), target: fc.constantFrom('/redfish/v1/Systems', '/redfish/v1/Chassis/Card1', '/redfish/v1/UpdateService/FirmwareInventory') }),
      fc.record({ kind: fc.constant('hang' as const), target: fc.constantFrom('/redfish/v1/Managers', '/redfish/v1/Systems/Bluefield') }),
      fc.record({ kind: fc.constant('drop' as const), target: fc.constantFrom('/redfish/v1/Chassis', '/redfish/v1/Managers/Bluefield_BMC') }),
      fc.constant({ kind: 'expire' as const }),
      fc.constant({ kind: 'invalid-json' as const }),
    );
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 3 }), fc.boolean(), async (steps, reuseSession) => {
        const driver = new RedfishDriver({ baseUrl: server.url, username: 'root', password: 'calvin', requestTimeoutMs: 150, reuseSession });
        for (const action of steps) {
          let expired = false;
          currentFault = ({ method, path }) => {
            if (action.kind === 'fail' && method === 'GET' && path === action.target) return { kind: 'status', status: action.status };
            if (action.kind === 'hang' && method === 'GET' && path === action.target) return { kind: 'hang' };
            if (action.kind === 'drop' && method === 'GET' && path === action.target) return { kind: 'destroy' };
            if (action.kind === 'invalid-json' && method === 'GET' && path === '/redfish/v1/Systems') return { kind: 'raw', text: '{"Members": [' };
            // The BMC forgets the session once: a 401 on a read.
            if (action.kind === 'expire' && method === 'GET' && path === '/redfish/v1/Chassis' && !expired) {
              expired = true;
              return { kind: 'status', status: 401, body: { error: { '@Message.ExtendedInfo': [{ MessageId: 'Base.1.4.NoValidSession' }] } } };
            }
            return undefined;
          };
          const outcome = await driver.observe().then(
            () => 'ok',
            (error: unknown) => {
              expect(error).toBeInstanceOf(DriverError);
              return 'failed';
            },
          );
          if (action.kind === 'ok') expect(outcome).toBe('ok');
          if (!reuseSession) expect(driver.sessionCounts.held).toBe(false);
        }
        currentFault = undefined;
        await driver.close();
        const counts = driver.sessionCounts;
        expect(counts.opened).toBe(counts.closed);
        // Hung requests are abandoned by the client; give the server a moment to see the DELETEs.
        expect(server.activeSessions()).toBe(0);
      }),
      { numRuns: 8 },
    );
    expect(server.stats.sessionsCreated).toBe(server.stats.sessionsDeleted);
  });

  it('a BMC whose session table is full is DRIVER_SESSION_LIMIT with RAC0218, retryable, and nothing leaks', async () => {
    const server = await serve('dell_multi_dpu', { sessionLimit: 0 });
    const driver = new RedfishDriver({ baseUrl: server.url, username: 'root', password: 'calvin' });
    const error = (await driver.observe().catch((e: unknown) => e)) as DriverError;
    expect(error.code).toBe('DRIVER_SESSION_LIMIT');
    expect(error.retryable).toBe(true);
    expect(error.details).toMatchObject({ status: 503, vendorMessageId: 'RAC0218' });
    expect(server.stats.sessionsRefused).toBe(1);
    await driver.close();
  });

  it('a reused session serves several reads and is logged out by close()', async () => {
    const server = await serve('nvidia_gbswitch');
    const driver = new RedfishDriver({ baseUrl: server.url, username: 'root', password: 'calvin', reuseSession: true });
    await driver.observe();
    await driver.observe();
    expect(server.stats.sessionsCreated).toBe(1);
    expect(server.activeSessions()).toBe(1);
    await driver.close();
    expect(server.activeSessions()).toBe(0);
  });

  it('a BMC that refuses session creation (405) is read with basic auth', async () => {
    const server = await serve('dell', { sessions: 'refused' });
    const driver = new RedfishDriver({ baseUrl: server.url, username: 'root', password: 'calvin', maxConcurrency: 4 });
    const observations = await driver.observe();
    expect(driver.authentication).toBe('basic');
    expect(server.stats.sessionsCreated).toBe(0);
    expect(server.stats.basicAuthRequests).toBeGreaterThan(10);
    expect(observations.find((o) => o.type === 'NodeInventoryObserved')?.data).toMatchObject({ system: { serialNumber: bmcProfileByName('dell')!.systems[0]!.serialNumber } });
    await driver.close();
  });

  it('wrong credentials are DRIVER_AUTH, not retryable, and open no session', async () => {
    const server = await serve('hpe');
    const driver = new RedfishDriver({ baseUrl: server.url, username: 'root', password: 'wrong' });
    const error = (await driver.observe().catch((e: unknown) => e)) as DriverError;
    expect(error.code).toBe('DRIVER_AUTH');
    expect(error.retryable).toBe(false);
    expect(server.stats.sessionsCreated).toBe(0);
    await driver.close();
  });

  it('a closed port is DRIVER_UNREACHABLE and retryable', async () => {
    const probe = createServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', () => resolve()));
    const { port } = probe.address() as { port: number };
    await new Promise<void>((resolve) => probe.close(() => resolve()));
    const driver = new RedfishDriver({ baseUrl: `http://127.0.0.1:${port}`, username: 'root', password: 'calvin', requestTimeoutMs: 1000 });
    const error = (await driver.observe().catch((e: unknown) => e)) as DriverError;
    expect(error.code).toBe('DRIVER_UNREACHABLE');
    expect(error.retryable).toBe(true);
    await driver.close();
  });
});

describe('Redfish paging and ids', () => {
  const fixtures = fixturesRequirement();
  it.skipIf(!fixtures.runnable)(fixtures.title("follows Members@odata.nextLink through Dell's $skip pages served from Collection?$skip=N folders"), async () => {
    const server = await startMockupServer({ folder: join(fixtures.require(), 'redfish', 'dell') });
    const client = new RedfishClient({ baseUrl: server.url, username: 'root', password: 'calvin' });
    await client.login();
    const reader = new ResourceReader(async (path) => (await client.get(path)).body, 100);
    const recorder = new ObservationRecorder();
    // DellSlots: 50 members on the first page, 17 on ?$skip=50 (Members@odata.count 67); DellSensors: 50 + 27 = 77.
    expect(await reader.memberLinks('/redfish/v1/Systems/System.Embedded.1/Oem/Dell/DellSlots', recorder)).toHaveLength(67);
    expect(await reader.memberLinks('/redfish/v1/Systems/System.Embedded.1/Oem/Dell/DellSensors', recorder)).toHaveLength(77);
    expect(recorder.unreadable).toEqual([]);
    await client.close();
    expect(server.activeSessions()).toBe(0);
  });

  it('reads links that end with a slash (as HPE writes them) exactly like the slash-less ones', async () => {
    const withSlash = (value: unknown): unknown => {
      if (Array.isArray(value)) return value.map(withSlash);
      if (typeof value !== 'object' || value === null) return value;
      return Object.fromEntries(
        Object.entries(value).map(([key, item]) => [
          key,
          key === '@odata.id' && typeof item === 'string' && !/[#?]/.test(item) && !item.endsWith('/') ? `${item}/` : withSlash(item),
        ]),
      );
    };
    const plain = await serve('hpe');
    const slashed = await serve('hpe', { transform: (_path, body) => withSlash(body) });
    const read = async (server: MockupServer) => {
      const driver = new RedfishDriver({ baseUrl: server.url, username: 'root', password: 'calvin', maxConcurrency: 4 });
      const observations = await driver.observe();
      await driver.close();
      return observations.map((observation) => observationContentHash('node-1', observation));
    };
    expect(await read(slashed)).toEqual(await read(plain));
  });

  it('keeps the resource Id when it differs from the last URL segment', async () => {
    const server = await serve('nvidia_gbswitch', {
      transform: (path, body) => (path === '/redfish/v1/Systems/System_0' ? { ...(body as object), Id: 'Switch-Tray-A' } : body),
    });
    const driver = new RedfishDriver({ baseUrl: server.url, username: 'root', password: 'calvin' });
    const [inventory] = await driver.observe({ only: ['NodeInventoryObserved'] });
    expect(inventory?.type === 'NodeInventoryObserved' && inventory.data.system).toMatchObject({ id: 'Switch-Tray-A', path: '/redfish/v1/Systems/System_0' });
    await driver.close();
  });
});
