/**
 * A tree is read with its vendor's record from every clue it shows, strongest first: the records' full rules (root
 * `Vendor`, Manager model and firmware), then weighed clues when those cannot hold, as in a partial tree whose Manager
 * is unreadable: the root's `Product` and `Oem` namespace, the ids' shapes (FQDDs, `HGX_Baseboard_0`, `Self`), the
 * Redfish version, the maker's name. A root `Vendor` naming someone else overrides the other clues. Trees and
 * fingerprints here are of our own making.
 */
import { describe, expect, it } from 'vitest';
import { detectDialect } from '../../src/drivers/index.js';
import { collection, readTree, type SyntheticTree } from './support/synthetic-tree.js';

/** A Dell-shaped tree whose Manager answers 404: only the root and the System are readable. */
function partialDellTree(root: Record<string, unknown>): SyntheticTree {
  return {
    '/redfish/v1': {
      '@odata.id': '/redfish/v1',
      Id: 'RootService',
      RedfishVersion: '1.11.0',
      Systems: { '@odata.id': '/redfish/v1/Systems' },
      Managers: { '@odata.id': '/redfish/v1/Managers' },
      ...root,
    },
    '/redfish/v1/Systems': collection('/redfish/v1/Systems', ['/redfish/v1/Systems/System.Embedded.1']),
    '/redfish/v1/Systems/System.Embedded.1': { '@odata.id': '/redfish/v1/Systems/System.Embedded.1', Id: 'System.Embedded.1', Model: 'PowerEdge R760', PowerState: 'On' },
    '/redfish/v1/Managers': collection('/redfish/v1/Managers', ['/redfish/v1/Managers/iDRAC.Embedded.1']),
  };
}

describe('dialect detection from every clue', () => {
  it("a partial tree whose root shows Product and Oem.Dell and whose ids are FQDDs is read as Dell's, without its Manager", async () => {
    const reading = await readTree(partialDellTree({ Product: 'Integrated Dell Remote Access Controller', Oem: { Dell: { '@odata.type': '#DellServiceRoot.v1_0_0.DellServiceRoot' } } }));
    expect(reading.dialect.id).toBe('dell-idrac9');
    // The Dell record knows Oem.Dell: nothing is reported as not understood.
    expect(reading.observations.find((o) => o.type === 'NodeInventoryObserved')!.data.unrecognized).toEqual([]);
  });

  it('FQDD ids and a Dell maker alone are enough; on Redfish 1.0 they are an iDRAC 8', async () => {
    const tree = partialDellTree({});
    Object.assign(tree['/redfish/v1/Systems/System.Embedded.1']!, { Manufacturer: 'Dell Inc.' });
    expect((await readTree(tree)).dialect.id).toBe('dell-idrac9');
    Object.assign(tree['/redfish/v1']!, { RedfishVersion: '1.0.2' });
    expect((await readTree(tree)).dialect.id).toBe('dell-idrac8');
  });

  it("a root Vendor naming another maker overrides the shapes of ids (a reseller's tree stays generic)", () => {
    expect(detectDialect({ vendor: 'Acme', rootOemKeys: [], memberIds: ['System.Embedded.1', 'iDRAC.Embedded.1'] }).id).toBe('generic');
    expect(detectDialect({ rootOemKeys: [], memberIds: ['System.Embedded.1', 'iDRAC.Embedded.1'] }).id).toBe('dell-idrac9');
  });

  it('the clues of other vendors point to their records', () => {
    expect(detectDialect({ vendor: 'NVIDIA', rootOemKeys: [], memberIds: ['HGX_Baseboard_0', 'System_0'] }).id).toBe('nvidia-openbmc-gb200');
    expect(detectDialect({ vendor: 'NVIDIA', rootOemKeys: [], memberIds: ['MGX_NVSwitch_0', 'System_0'] }).id).toBe('nvidia-openbmc-nvswitch');
    expect(detectDialect({ rootOemKeys: ['Hpe'] }).id).toBe('hpe-ilo5');
    expect(detectDialect({ rootOemKeys: ['Hp'] }).id).toBe('hpe-ilo4');
    expect(detectDialect({ product: 'AMI Redfish Server', rootOemKeys: [], memberIds: ['Self'] }).id).toBe('ami-megarac');
    expect(detectDialect({ rootOemKeys: [], memberIds: ['Bluefield', 'Bluefield_BMC'] }).id).toBe('nvidia-bluefield-bmc');
  });

  it('a tree that shows nothing of a vendor is generic', () => {
    expect(detectDialect({ vendor: 'Acme', product: 'Acme BMC', rootOemKeys: ['Acme'], memberIds: ['1'], systemManufacturer: 'Acme' }).id).toBe('generic');
    expect(detectDialect({ rootOemKeys: [] }).id).toBe('generic');
  });
});
