/**
 * Vendor placeholders are absent, never values: `N/A`, `Not Available`, `NA`, `-`, `--`, `-*`, blank and all-space
 * strings, serials of zeros, `To Be Filled By O.E.M.`, `Default string`. One rule (`presentText`) decides it for every
 * string a driver reads into inventory: Redfish properties, IPMI FRU fields, nvidia-smi reports. Trees and reports
 * here are of our own making, in the shapes BMCs and tools print.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isPlaceholder, parseFru, parseNvidiaSmiXml, presentText } from '../../src/drivers/index.js';
import { baseTree, collection, inventoryOf, readTree } from './support/synthetic-tree.js';

const placeholders = ['N/A', 'n/a', 'Not Available', 'NA', '-', '--', '-*', '', ' ', '      ', 'To Be Filled By O.E.M.', 'To be filled by O.E.M.', 'Default string', 'Not Specified', 'Unknown', '[N/A]'];
const zeroSerials = ['0', '0000000', '00000000000000', '0000-0000', 'FFFFFFFF', 'XXXXXXXX'];

describe('vendor placeholders', () => {
  it('every placeholder spelling, in any case and padding, is absent', () => {
    fc.assert(
      fc.property(fc.constantFrom(...placeholders), fc.boolean(), fc.nat(3), fc.nat(3), (word, upper, before, after) => {
        const shown = `${' '.repeat(before)}${upper ? word.toUpperCase() : word}${' '.repeat(after)}`;
        expect(presentText(shown)).toBeUndefined();
        expect(presentText(shown, 'identity')).toBeUndefined();
      }),
    );
  });

  it('a serial of zeros (or of F or X, a blank EEPROM) is absent where it identifies a unit, and kept elsewhere', () => {
    for (const serial of zeroSerials) expect(isPlaceholder(serial, 'identity'), serial).toBe(true);
    // A version or a reading of 0 is a value.
    expect(presentText('0')).toBe('0');
    expect(presentText('0000')).toBe('0000');
  });

  it('a real serial, model or vendor is kept as written (trimmed)', () => {
    fc.assert(
      fc.property(fc.stringMatching(/^[A-Z]{2}[0-9A-Z]{3,10}[1-9]$/), fc.nat(2), (serial, pad) => {
        expect(presentText(`${' '.repeat(pad)}${serial}${' '.repeat(pad)}`, 'identity')).toBe(serial);
      }),
    );
    for (const value of ['PowerEdge R750', 'NVIDIA H100 80GB HBM3', 'Dell Inc.', 'N5110_LD', 'A42 v2.60', 'NA-7000']) expect(presentText(value)).toBe(value);
  });

  it('a Redfish tree with placeholders for identity reads them as absent: system, chassis, BMC and GPU', async () => {
    const tree = baseTree();
    Object.assign(tree['/redfish/v1/Systems/1']!, {
      SerialNumber: 'To Be Filled By O.E.M.',
      SKU: 'Default string',
      Model: '   ',
      BiosVersion: 'N/A',
      Processors: { '@odata.id': '/redfish/v1/Systems/1/Processors' },
    });
    Object.assign(tree['/redfish/v1/Chassis/1']!, { Model: 'Not Available', SerialNumber: '0000000', SKU: '-*' });
    Object.assign(tree['/redfish/v1/Managers/1']!, { Model: '--', FirmwareVersion: 'NA', Manufacturer: '-' });
    tree['/redfish/v1/Systems/1/Processors'] = collection('/redfish/v1/Systems/1/Processors', ['/redfish/v1/Systems/1/Processors/GPU0']);
    tree['/redfish/v1/Systems/1/Processors/GPU0'] = {
      '@odata.id': '/redfish/v1/Systems/1/Processors/GPU0',
      Id: 'GPU0',
      ProcessorType: 'GPU',
      Model: 'NVIDIA H100 80GB HBM3',
      SerialNumber: '00000000000000',
      FirmwareVersion: ' ',
      Status: { State: 'Enabled', Health: 'OK' },
    };
    const inventory = inventoryOf(await readTree(tree));
    expect(inventory.system).toEqual({ id: '1', path: '/redfish/v1/Systems/1', manufacturer: 'Example Servers' });
    expect(inventory.biosVersion).toBeUndefined();
    expect(inventory.bmc).toEqual({ id: '1', path: '/redfish/v1/Managers/1' });
    expect(inventory.gpus?.devices).toEqual([{ id: 'GPU0', model: 'NVIDIA H100 80GB HBM3' }]);
  });

  it('an IPMI FRU whose product area was never programmed gives the board area instead', () => {
    const fru = [
      'FRU Device Description : Builtin FRU Device (ID 0)',
      ' Board Mfg             : Example Boards',
      ' Board Product         : EXB-2',
      ' Board Serial          : EXB2230F0042',
      ' Board Part Number     : 0000000',
      ' Product Manufacturer  : To Be Filled By O.E.M.',
      ' Product Name          : Default string',
      ' Product Serial        : 000000000000',
      ' Product Part Number   : N/A',
      '',
    ].join('\n');
    expect(parseFru(fru)).toEqual({ manufacturer: 'Example Boards', model: 'EXB-2', serialNumber: 'EXB2230F0042' });
  });

  it('an nvidia-smi report with a serial of zeros or N/A names no serial', () => {
    const xml = (serial: string) =>
      `<?xml version="1.0" ?><nvidia_smi_log><driver_version>570.124.06</driver_version><attached_gpus>1</attached_gpus><gpu id="00000000:01:00.0"><product_name>NVIDIA L4</product_name><serial>${serial}</serial><uuid>GPU-1b2c</uuid></gpu></nvidia_smi_log>`;
    for (const serial of ['0000000000000', 'N/A', '   ']) expect(parseNvidiaSmiXml(xml(serial)).gpus[0]?.serial, serial).toBeUndefined();
    expect(parseNvidiaSmiXml(xml('1654523003308')).gpus[0]?.serial).toBe('1654523003308');
  });
});
