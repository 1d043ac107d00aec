import { afterEach, describe, expect, it } from 'vitest';
import { RedfishDriver, startMockupServer, type MockupServer } from '../../src/drivers/index.js';
import { profileMockup } from '../support/profile-mockup.js';

const servers: MockupServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

describe('Redfish power control', () => {
  it("posts the reset type to the system's own #ComputerSystem.Reset target and logs out", async () => {
    const server = await startMockupServer({ folder: profileMockup('dell') });
    servers.push(server);
    const driver = new RedfishDriver({ baseUrl: server.url, username: 'root', password: 'calvin' });
    expect(driver.capabilities.powerControl).toBe(true);
    await driver.setPower('GracefulRestart');
    await driver.close();
    // The target as the Dell capture states it in Systems/System.Embedded.1 Actions.
    expect(server.stats.actions).toEqual([{ path: '/redfish/v1/Systems/System.Embedded.1/Actions/ComputerSystem.Reset', body: { ResetType: 'GracefulRestart' } }]);
    expect(server.activeSessions()).toBe(0);
  });

  it('a system without the reset action is DRIVER_UNSUPPORTED', async () => {
    const server = await startMockupServer({
      folder: profileMockup('hpe'),
      transform: (path, body) => (path === '/redfish/v1/Systems/1' ? { ...(body as object), Actions: {} } : body),
    });
    servers.push(server);
    const driver = new RedfishDriver({ baseUrl: server.url, username: 'root', password: 'calvin' });
    await expect(driver.setPower('On')).rejects.toMatchObject({ code: 'DRIVER_UNSUPPORTED', retryable: false });
    await driver.close();
    expect(server.stats.actions).toEqual([]);
    expect(server.activeSessions()).toBe(0);
  });
});
