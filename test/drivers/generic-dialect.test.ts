import { afterEach, describe, expect, it } from 'vitest';
import { RedfishDriver, startMockupServer, type MockupServer } from '../../src/drivers/index.js';
import type { DriverObservation, NodeInventoryObservedData } from '../../events/driver-observations.js';
import { bmcProfileByName } from '../../src/sim/index.js';
import { profileMockup } from '../support/profile-mockup.js';

const dell = bmcProfileByName('dell')!;

/** Removes every `Oem` section, at any depth, and renames the vendor: a BMC no dialect record knows. */
function unknownVendor(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(unknownVendor);
  if (typeof value !== 'object' || value === null) return value;
  const entries = Object.entries(value)
    .filter(([key]) => key !== 'Oem')
    .map(([key, item]) => {
      if (key === 'Vendor') return [key, 'Acme'];
      if (key === 'Product') return [key, 'Acme Baseboard Controller'];
      if (key === 'Manufacturer' && item === 'Dell Inc.') return [key, 'Acme Servers'];
      return [key, unknownVendor(item)];
    });
  return Object.fromEntries(entries);
}

const servers: MockupServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

async function read(transform: (path: string, body: unknown) => unknown): Promise<{ observations: DriverObservation[]; dialect: string | undefined }> {
  const server = await startMockupServer({ folder: profileMockup('dell'), transform });
  servers.push(server);
  const driver = new RedfishDriver({ baseUrl: server.url, username: 'root', password: 'calvin', maxConcurrency: 4 });
  const observations = await driver.observe();
  await driver.close();
  return { observations, dialect: driver.dialect?.id };
}

describe('a vendor without a dialect record', () => {
  it('is read through the generic standard-schema path with the standard fields filled', async () => {
    const { observations, dialect } = await read((_path, body) => unknownVendor(body));
    expect(dialect).toBe('generic');
    const inventory = observations.find((o) => o.type === 'NodeInventoryObserved')!.data as NodeInventoryObservedData;
    // The same values the Dell capture holds in its standard (non-Oem) properties.
    expect(inventory.system).toMatchObject({ manufacturer: 'Acme Servers', model: 'PowerEdge R750', serialNumber: dell.systems[0]!.serialNumber, uuid: dell.systems[0]!.uuid as string });
    expect(inventory.bmc.firmwareVersion).toBe('6.00.30.00');
    expect(inventory.biosVersion).toBe('1.8.2');
    expect(inventory.cpus?.count).toBe(2);
    expect(inventory.gpus?.count).toBe(1);
    expect(inventory.memory?.moduleCount).toBe(16);
    const firmware = observations.find((o) => o.type === 'FirmwareInventoryObserved')!;
    expect(firmware.type === 'FirmwareInventoryObserved' && firmware.data.components).toHaveLength(29);
    // Without a record, no vendor-specific slot is inferred from ids.
    expect(firmware.type === 'FirmwareInventoryObserved' && firmware.data.components.every((c) => c.slot === undefined)).toBe(true);
    for (const observation of observations) expect(observation.data.dialect).toBe('generic');
  });

  it('names each OEM namespace it does not understand once, at the first resource that has it', async () => {
    // Every marker of the Dell record removed: no Vendor, a Manager model and a System manufacturer of no known kind.
    const { observations, dialect } = await read((_path, body) => {
      const record = body as Record<string, unknown>;
      if (typeof record.Vendor === 'string') return { ...record, Vendor: 'Acme' };
      if (record.ManagerType !== undefined) return { ...record, Model: 'Acme BMC' };
      if (record.SystemType !== undefined) return { ...record, Manufacturer: 'Acme' };
      return body;
    });
    expect(dialect).toBe('generic');
    const inventory = observations.find((o) => o.type === 'NodeInventoryObserved')!;
    const paths = inventory.data.unrecognized.map((entry) => entry.path);
    expect(paths.filter((path) => path.endsWith('#Oem.Dell'))).toEqual(['/redfish/v1#Oem.Dell']);
    // The Dell record knows these namespaces, so the same capture under its own dialect has none of them.
    const known = await read((_path, body) => body);
    expect(known.observations.find((o) => o.type === 'NodeInventoryObserved')!.data.unrecognized).toEqual([]);
  });

  it('a tree without ServiceRoot.Vendor is still read with its record, from the Manager model and the System manufacturer', async () => {
    const { dialect } = await read((_path, body) => {
      const { Vendor: _vendor, ...rest } = body as Record<string, unknown>;
      return rest;
    });
    expect(dialect).toBe('dell-idrac9');
  });
});
