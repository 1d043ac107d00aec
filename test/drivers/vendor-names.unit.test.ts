/**
 * Vendor names reach the inventory canonical: a URL (`https://www.mellanox.com`, as a BlueField-3 BMC writes its
 * System Manufacturer) names its vendor, spellings that differ in case, punctuation or legal suffix are one vendor,
 * and a vendor nobody listed keeps its own name. Trees here are of our own making.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { canonicalVendor } from '../../src/drivers/index.js';
import { baseTree, inventoryOf, readTree } from './support/synthetic-tree.js';

describe('vendor names', () => {
  it('a URL or a bare domain names its vendor, never itself', () => {
    expect(canonicalVendor('https://www.mellanox.com')).toBe('NVIDIA');
    expect(canonicalVendor('http://www.nvidia.com/')).toBe('NVIDIA');
    expect(canonicalVendor('https://www.dell.com/en-us')).toBe('Dell Inc.');
    expect(canonicalVendor('www.supermicro.com')).toBe('Supermicro');
    expect(canonicalVendor('https://www.lenovo.com.cn')).toBe('Lenovo');
    // An unknown domain gives its registered name, not a URL.
    expect(canonicalVendor('https://acme-servers.example/')).toBe('acme-servers');
    expect(canonicalVendor('http://www.example.co.uk')).toBe('example');
  });

  it('case, punctuation and legal suffixes do not make another vendor', () => {
    const spellings: Record<string, string[]> = {
      'Dell Inc.': ['Dell Inc.', 'DELL', 'dell', 'Dell, Inc', 'Dell EMC'],
      HPE: ['HPE', 'Hewlett Packard Enterprise', 'Hewlett-Packard Enterprise', 'hpe'],
      Supermicro: ['Supermicro', 'SUPERMICRO', 'Super Micro Computer, Inc.', 'Super Micro Computer Inc'],
      NVIDIA: ['NVIDIA', 'Nvidia', 'NVIDIA Corporation', 'Mellanox Technologies', 'MLNX'],
      'Intel Corporation': ['Intel', 'Intel(R) Corporation', 'Intel Corp.'],
      AMD: ['Advanced Micro Devices, Inc.', 'AMD'],
      GIGABYTE: ['GIGABYTE', 'Gigabyte Technology Co., Ltd.', 'Giga Computing'],
    };
    for (const [canonical, names] of Object.entries(spellings)) for (const name of names) expect(canonicalVendor(name), name).toBe(canonical);
  });

  it('any spelling of a known vendor, with any case and legal suffix, gives one name', () => {
    fc.assert(
      fc.property(
        fc.constantFrom('Dell', 'Supermicro', 'Lenovo', 'Quanta', 'Inspur', 'Wiwynn', 'Fujitsu'),
        fc.constantFrom('', ' Inc.', ', Inc', ' Corporation', ' Co., Ltd.', ' LLC', ' GmbH', ' Technologies', ' Computer Inc.'),
        fc.constantFrom('asis', 'upper', 'lower'),
        (name, suffix, casing) => {
          const written = `${name}${suffix}`;
          const shown = casing === 'upper' ? written.toUpperCase() : casing === 'lower' ? written.toLowerCase() : written;
          expect(canonicalVendor(shown)).toBe(canonicalVendor(name));
        },
      ),
    );
  });

  it("a vendor nobody listed keeps its name; a placeholder is no vendor", () => {
    expect(canonicalVendor('  Example   Servers Ltd. ')).toBe('Example Servers Ltd.');
    expect(canonicalVendor('To Be Filled By O.E.M.')).toBeUndefined();
    expect(canonicalVendor('N/A')).toBeUndefined();
  });

  it('a System and a Manager whose Manufacturer is a URL reach the inventory with the vendor it names', async () => {
    const tree = baseTree();
    Object.assign(tree['/redfish/v1/Systems/1']!, { Manufacturer: 'https://www.mellanox.com' });
    Object.assign(tree['/redfish/v1/Managers/1']!, { Manufacturer: 'https://www.mellanox.com/' });
    const inventory = inventoryOf(await readTree(tree));
    expect(inventory.system.manufacturer).toBe('NVIDIA');
    expect(inventory.systems[0]?.manufacturer).toBe('NVIDIA');
    expect(inventory.bmc.manufacturer).toBe('NVIDIA');
  });
});
