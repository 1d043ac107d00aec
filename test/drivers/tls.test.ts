import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemTools } from '../support/system-tool.js';
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { DriverError, RedfishDriver, startMockupServer, type MockupServer } from '../../src/drivers/index.js';
import { bmcProfileByName } from '../../src/sim/index.js';
import { profileMockup } from '../support/profile-mockup.js';

const openssl = systemTools(['openssl'], 'apt-get install openssl');

describe.skipIf(!openssl.runnable)(openssl.title('HTTPS to a BMC with a self-signed certificate'), () => {
  let dir: string;
  let server: MockupServer;

  beforeAll(async () => {
    openssl.require();
    dir = await mkdtemp(join(tmpdir(), 'fleet-tls-'));
    // A throwaway self-signed certificate, like the one every BMC ships with.
    await promisify(execFile)('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', join(dir, 'key.pem'), '-out', join(dir, 'cert.pem'), '-days', '1', '-subj', '/CN=idrac-test']);
    server = await startMockupServer({
      folder: profileMockup('nvidia_gbswitch'),
      tls: { key: await readFile(join(dir, 'key.pem'), 'utf8'), cert: await readFile(join(dir, 'cert.pem'), 'utf8') },
    });
  });
  afterAll(async () => {
    await server?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('is refused with DRIVER_TLS unless the driver is configured insecure', async () => {
    const driver = new RedfishDriver({ baseUrl: server.url, username: 'root', password: 'calvin', requestTimeoutMs: 2000 });
    const error = (await driver.observe().catch((e: unknown) => e)) as DriverError;
    await driver.close();
    expect(error).toBeInstanceOf(DriverError);
    expect(error.code).toBe('DRIVER_TLS');
    expect(error.retryable).toBe(false);
    expect(server.stats.sessionsCreated).toBe(0);
  });

  it('is read when insecure is set, and the session is still logged out', async () => {
    const driver = new RedfishDriver({ baseUrl: server.url, username: 'root', password: 'calvin', insecure: true, requestTimeoutMs: 2000 });
    const observations = await driver.observe();
    await driver.close();
    expect(observations.find((o) => o.type === 'NodeInventoryObserved')?.data).toMatchObject({ system: { serialNumber: bmcProfileByName('nvidia_gbswitch')!.systems[0]!.serialNumber } });
    expect(server.activeSessions()).toBe(0);
  });
});
