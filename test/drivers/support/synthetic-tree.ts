/**
 * Small Redfish trees of our own making, for driver specifications that need one shape and nothing else: a service
 * root, one System, one Manager and one Chassis, each a plain object a test edits or extends, read through an
 * in-memory `fetch` (a missing path is the 404 a BMC answers).
 */
import { DriverError, readRedfishNode, type NodeReading, type ReadNodeOptions } from '../../../src/drivers/index.js';
import type { NodeInventoryObservedData, SensorsObservedData } from '../../../events/driver-observations.js';

export type SyntheticTree = Record<string, Record<string, unknown>>;

const link = (path: string): { '@odata.id': string } => ({ '@odata.id': path });

/** A collection resource listing `members`. */
export function collection(path: string, members: string[]): Record<string, unknown> {
  return { '@odata.id': path, Name: 'Collection', Members: members.map(link), 'Members@odata.count': members.length };
}

/** A minimal standard tree: `/redfish/v1`, `Systems/1`, `Managers/1`, `Chassis/1`, with their collections. */
export function baseTree(): SyntheticTree {
  return {
    '/redfish/v1': {
      '@odata.id': '/redfish/v1',
      '@odata.type': '#ServiceRoot.v1_11_0.ServiceRoot',
      Id: 'RootService',
      RedfishVersion: '1.11.0',
      Systems: link('/redfish/v1/Systems'),
      Managers: link('/redfish/v1/Managers'),
      Chassis: link('/redfish/v1/Chassis'),
    },
    '/redfish/v1/Systems': collection('/redfish/v1/Systems', ['/redfish/v1/Systems/1']),
    '/redfish/v1/Systems/1': {
      '@odata.id': '/redfish/v1/Systems/1',
      '@odata.type': '#ComputerSystem.v1_16_0.ComputerSystem',
      Id: '1',
      Manufacturer: 'Example Servers',
      Model: 'EX-100',
      SerialNumber: 'EXS2041A0017',
      PowerState: 'On',
      Status: { State: 'Enabled', Health: 'OK' },
      Links: { Chassis: [link('/redfish/v1/Chassis/1')], ManagedBy: [link('/redfish/v1/Managers/1')] },
    },
    '/redfish/v1/Managers': collection('/redfish/v1/Managers', ['/redfish/v1/Managers/1']),
    '/redfish/v1/Managers/1': {
      '@odata.id': '/redfish/v1/Managers/1',
      '@odata.type': '#Manager.v1_10_0.Manager',
      Id: '1',
      ManagerType: 'BMC',
      Model: 'EX-BMC',
      FirmwareVersion: '1.2.3',
      Status: { State: 'Enabled', Health: 'OK' },
    },
    '/redfish/v1/Chassis': collection('/redfish/v1/Chassis', ['/redfish/v1/Chassis/1']),
    '/redfish/v1/Chassis/1': {
      '@odata.id': '/redfish/v1/Chassis/1',
      '@odata.type': '#Chassis.v1_14_0.Chassis',
      Id: '1',
      ChassisType: 'RackMount',
      Manufacturer: 'Example Servers',
      Status: { State: 'Enabled', Health: 'OK' },
    },
  };
}

/** Reads `tree` as a BMC would serve it; `fetched` lists every path asked for, in order. */
export async function readTree(tree: SyntheticTree, options: ReadNodeOptions = {}): Promise<NodeReading & { fetched: string[] }> {
  const fetched: string[] = [];
  const reading = await readRedfishNode(async (path) => {
    fetched.push(path);
    const resource = tree[path.replace(/\/+$/, '')];
    if (!resource) throw new DriverError('DRIVER_NOT_FOUND', `GET ${path} answered 404`, { status: 404, url: path });
    return structuredClone(resource);
  }, { readSel: false, ...options });
  return { ...reading, fetched };
}

/** The inventory observation of a reading. */
export function inventoryOf(reading: NodeReading): NodeInventoryObservedData {
  for (const candidate of reading.observations) if (candidate.type === 'NodeInventoryObserved') return candidate.data;
  throw new Error('no NodeInventoryObserved in the reading');
}

/** The sensors observation of a reading. */
export function sensorsOf(reading: NodeReading): SensorsObservedData {
  for (const candidate of reading.observations) if (candidate.type === 'SensorsObserved') return candidate.data;
  throw new Error('no SensorsObserved in the reading');
}
