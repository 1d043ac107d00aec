/**
 * A GPU whose Processor names no `Model` takes it from the PCIe device it sits on, reached by the Processor's
 * `Links.PCIeDevice` (one link, or a list), or only through its functions (`Links.PCIeFunctions[]`, each
 * PCIeFunction linking its `PCIeDevice`). Trees here are of our own making, in the shapes BMCs serve.
 */
import { describe, expect, it } from 'vitest';
import { baseTree, collection, inventoryOf, readTree, type SyntheticTree } from './support/synthetic-tree.js';

const device = '/redfish/v1/Chassis/1/PCIeDevices/GPU0';
const pcieFunction = `${device}/PCIeFunctions/0`;

/** A tree whose one GPU Processor has no Model and links to its PCIe device as `links` says. */
function gpuTree(links: Record<string, unknown>): SyntheticTree {
  const tree = baseTree();
  Object.assign(tree['/redfish/v1/Systems/1']!, { Processors: { '@odata.id': '/redfish/v1/Systems/1/Processors' } });
  tree['/redfish/v1/Systems/1/Processors'] = collection('/redfish/v1/Systems/1/Processors', ['/redfish/v1/Systems/1/Processors/GPU0']);
  tree['/redfish/v1/Systems/1/Processors/GPU0'] = {
    '@odata.id': '/redfish/v1/Systems/1/Processors/GPU0',
    Id: 'GPU0',
    ProcessorType: 'GPU',
    SerialNumber: '1650923019824',
    Status: { State: 'Enabled', Health: 'OK' },
    Links: links,
  };
  tree[device] = { '@odata.id': device, Id: 'GPU0', Name: 'GPU0', Manufacturer: 'NVIDIA', Model: 'NVIDIA H100 80GB HBM3', PCIeFunctions: { '@odata.id': `${device}/PCIeFunctions` } };
  tree[pcieFunction] = { '@odata.id': pcieFunction, Id: '0', FunctionType: 'Physical', DeviceClass: 'DisplayController', VendorId: '0x10de', DeviceId: '0x2330', Links: { PCIeDevice: { '@odata.id': device } } };
  return tree;
}

describe('a GPU Processor without a Model', () => {
  it('takes the model of the PCIe device its Links.PCIeDevice names', async () => {
    const inventory = inventoryOf(await readTree(gpuTree({ PCIeDevice: { '@odata.id': device } })));
    expect(inventory.gpus?.devices).toEqual([{ id: 'GPU0', model: 'NVIDIA H100 80GB HBM3', serialNumber: '1650923019824' }]);
    expect(inventory.gpus?.models).toEqual(['NVIDIA H100 80GB HBM3']);
  });

  it('takes the model of the PCIe device when Links.PCIeDevice is written as a list', async () => {
    const inventory = inventoryOf(await readTree(gpuTree({ PCIeDevice: [{ '@odata.id': device }] })));
    expect(inventory.gpus?.models).toEqual(['NVIDIA H100 80GB HBM3']);
  });

  it('takes the model through its PCIe functions when it links only those', async () => {
    const reading = await readTree(gpuTree({ PCIeFunctions: [{ '@odata.id': pcieFunction }] }));
    expect(inventoryOf(reading).gpus?.models).toEqual(['NVIDIA H100 80GB HBM3']);
    // The function, then its device: two reads, once each.
    expect(reading.fetched.filter((path) => path === pcieFunction || path === device)).toEqual([pcieFunction, device]);
  });

  it('has no model, and the read goes on, when the links lead nowhere', async () => {
    const tree = gpuTree({ PCIeFunctions: [{ '@odata.id': `${device}/PCIeFunctions/9` }] });
    const inventory = inventoryOf(await readTree(tree));
    expect(inventory.gpus?.devices).toEqual([{ id: 'GPU0', serialNumber: '1650923019824' }]);
    expect(inventory.unreadable).toEqual([{ path: `${device}/PCIeFunctions/9`, code: 'DRIVER_NOT_FOUND' }]);
  });
});
