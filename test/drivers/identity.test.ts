/**
 * What a node is, read right from trees that say it oddly: a UUID that is not one, a GPU whose Processor has no
 * model, a System the BMC lists but will not give, console limits that are not the Redfish session limit,
 * placeholder versions. Written from the Redfish schema over the Dell profile's tree (each case is a transform of
 * one resource), since no capture here holds them all.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { DriverError, RedfishDriver, startMockupServer, type MockupServer } from '../../src/drivers/index.js';
import { normalizeFirmwareVersion } from '../../src/firmware/index.js';
import { profileMockup } from '../support/profile-mockup.js';
import type { NodeInventoryObservedData } from '../../events/driver-observations.js';

const systemPath = '/redfish/v1/Systems/System.Embedded.1';
const managerPath = '/redfish/v1/Managers/iDRAC.Embedded.1';
const gpuPath = `${systemPath}/Processors/Video.Slot.2-1`;

let server: MockupServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function inventoryOf(options: Parameters<typeof startMockupServer>[0] extends infer O ? Omit<O & object, 'folder'> : never): Promise<NodeInventoryObservedData> {
  server = await startMockupServer({ folder: profileMockup('dell'), ...options });
  const driver = new RedfishDriver({ baseUrl: server.url, username: 'root', password: 'calvin' });
  try {
    const observation = (await driver.observe()).find((o) => o.type === 'NodeInventoryObserved')!;
    return observation.data as NodeInventoryObservedData;
  } finally {
    await driver.close();
  }
}

const edit = (path: string, change: (body: Record<string, unknown>) => Record<string, unknown>) => (at: string, body: unknown) => (at === path ? change(body as Record<string, unknown>) : body);

describe('node identity from odd trees', () => {
  it('an all-zero (or all-F) UUID is not identity: left out and kept as unrecognized', async () => {
    const inventory = await inventoryOf({
      transform: (path, body) => edit(systemPath, (b) => ({ ...b, UUID: '00000000-0000-0000-0000-000000000000' }))(path, edit(managerPath, (b) => ({ ...b, UUID: 'FFFFFFFF-FFFF-FFFF-FFFF-FFFFFFFFFFFF' }))(path, body)),
    });
    expect(inventory.system?.uuid).toBeUndefined();
    expect(inventory.bmc?.uuid).toBeUndefined();
    expect(inventory.unrecognized).toContainEqual({ path: `${systemPath}#UUID`, value: '00000000-0000-0000-0000-000000000000' });
    expect(inventory.unrecognized).toContainEqual({ path: `${managerPath}#UUID`, value: 'FFFFFFFF-FFFF-FFFF-FFFF-FFFFFFFFFFFF' });
  });

  it('a GPU whose Processor names no model gets the model of the PCIe device it links to', async () => {
    const inventory = await inventoryOf({
      transform: (path, body) => {
        if (path === gpuPath) {
          const { Model: _model, ...rest } = body as Record<string, unknown>;
          return { ...rest, Links: { PCIeDevice: { '@odata.id': '/redfish/v1/Chassis/System.Embedded.1/PCIeDevices/23-0' } } };
        }
        if (path === '/redfish/v1/Chassis/System.Embedded.1/PCIeDevices/23-0') return { ...(body as object), Model: 'GH100 [H100 PCIe]' };
        return body;
      },
    });
    expect(inventory.gpus?.devices.find((gpu) => gpu.id === 'Video.Slot.2-1')?.model).toBe('GH100 [H100 PCIe]');
    expect(inventory.gpus?.models).toEqual(['GH100 [H100 PCIe]']);
  });

  it('a System the service lists but will not give fails the read with its code: no empty identity is recorded', async () => {
    const readWith = async (fault: 'status' | 'raw') => {
      server = await startMockupServer({
        folder: profileMockup('dell'),
        fault: ({ method, path }) => (method === 'GET' && path === systemPath ? (fault === 'status' ? { kind: 'status', status: 503 } : { kind: 'raw', text: '{"Id": "System.Embedded.1", "Model": ' }) : undefined),
      });
      const driver = new RedfishDriver({ baseUrl: server.url, username: 'root', password: 'calvin' });
      const error = await driver.observe().then(
        () => undefined,
        (failure: unknown) => failure,
      );
      await driver.close();
      await server.close();
      server = undefined;
      return error;
    };
    // A busy BMC fails the whole read already (5xx is never local to one resource)...
    expect(await readWith('status')).toMatchObject({ code: 'DRIVER_BMC_UNAVAILABLE', retryable: true });
    // ...and a System answered with a broken body, which alone would only be noted as unreadable, now does too.
    const broken = await readWith('raw');
    expect(broken).toBeInstanceOf(DriverError);
    expect(broken).toMatchObject({ code: 'DRIVER_PROTOCOL', message: expect.stringMatching(/System.Embedded.1 could not be read \(DRIVER_PROTOCOL\); no identity is recorded/) });
  });

  it("the session-limit hint is the command shell's, not a console's (a serial console takes one user by nature)", async () => {
    const consoles = (services: Record<string, number>) => ({
      transform: edit(managerPath, (b) => {
        const { CommandShell: _shell, GraphicalConsole: _kvm, SerialConsole: _serial, ...rest } = b;
        return { ...rest, ...Object.fromEntries(Object.entries(services).map(([service, limit]) => [service, { ServiceEnabled: true, MaxConcurrentSessions: limit }])) };
      }),
    });
    expect((await inventoryOf(consoles({ CommandShell: 5, GraphicalConsole: 6, SerialConsole: 1 }))).sessionLimitHint).toBe(5);
    await server?.close();
    expect((await inventoryOf(consoles({ GraphicalConsole: 2, SerialConsole: 1 }))).sessionLimitHint).toBe(2);
    await server?.close();
    expect((await inventoryOf(consoles({ SerialConsole: 1 }))).sessionLimitHint).toBeUndefined();
  });

  it('placeholder versions (`-*`, `--`, `.`) are not versions: normalized as not present, like "N/A"', () => {
    for (const raw of ['-*', '--', '.', '*', ' - ']) expect(normalizeFirmwareVersion('generic', 'BIOS', raw), raw).toEqual({ normalized: '', rule: 'not-present' });
    expect(normalizeFirmwareVersion('generic', 'BIOS', '2.1.-3').rule).not.toBe('not-present');
  });
});
