/**
 * The firmware inventory a rollout needs: every member of `UpdateService/FirmwareInventory` (or, on BMCs that list
 * their firmware there instead, `SoftwareInventory`) with its version and its `Updateable` flag exactly as the BMC
 * states it (absent when the BMC does not say). Checked member by member against the real captures' files.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readRedfishNode } from '../../src/drivers/index.js';
import { readMockupTree } from '../../src/sim/index.js';
import type { FirmwareInventoryObservedData } from '../../events/driver-observations.js';
import { treeFetch } from '../sim/support/tree-fetch.js';
import { fixturePath, fixtures } from './support/fixtures.js';

const captures = [
  'redfish/dell',
  'redfish/dell_multi_dpu',
  'redfish/hpe',
  'redfish/supermicro',
  'redfish/nvidia_gb200',
  'redfish/nvidia_gh200',
  'redfish/nvidia_gbswitch',
  'redfish/nvidia_dpu',
  'redfish-more/gigabyte_ami',
  'redfish-more/intel_s2600bpb',
  'redfish-more/hpe_cray_ex4252',
];

type Json = Record<string, unknown>;

/** What the capture's own files say: per inventory member, its version and `Updateable` (undefined when absent). */
function inventoryInFiles(dir: string): Map<string, { version: unknown; updateable: unknown }> {
  const read = (path: string): Json => JSON.parse(readFileSync(join(dir, ...path.split('/').filter(Boolean), 'index.json'), 'utf8')) as Json;
  const service = read('/redfish/v1/UpdateService');
  const link = ((service.FirmwareInventory ?? service.SoftwareInventory) as Json)['@odata.id'] as string;
  const out = new Map<string, { version: unknown; updateable: unknown }>();
  for (const member of (read(link).Members as Json[]).map((m) => m['@odata.id'] as string)) {
    const body = read(member);
    out.set((body.Id as string | undefined) ?? member.replace(/\/$/, '').split('/').pop()!, { version: body.Version, updateable: body.Updateable });
  }
  return out;
}

describe.skipIf(!fixtures.runnable)(fixtures.title('firmware inventory with Updateable, on real captures'), () => {
  it.each(captures)('%s: every inventory member, its version and its Updateable flag as the BMC states them', async (name) => {
    const dir = fixturePath(...name.split('/'));
    const reading = await readRedfishNode(treeFetch(readMockupTree(dir)), { readSel: false });
    const firmware = reading.observations.find((o) => o.type === 'FirmwareInventoryObserved')!.data as FirmwareInventoryObservedData;
    const expected = inventoryInFiles(dir);
    // Members with a version (a few GB200/BlueField entries have none and are recorded as not understood).
    const withVersion = [...expected].filter(([, entry]) => typeof entry.version === 'string');
    expect(firmware.components.map((c) => c.id).sort()).toEqual(withVersion.map(([id]) => id).sort());
    for (const component of firmware.components) {
      expect(component.updateable, `${name} ${component.id}`).toBe(expected.get(component.id)?.updateable);
      expect(component.version).toBe(expected.get(component.id)?.version);
    }
  });

  it('an Intel S2600 lists its firmware under SoftwareInventory, and it is read there', async () => {
    const reading = await readRedfishNode(treeFetch(readMockupTree(fixturePath('redfish-more', 'intel_s2600bpb'))), { readSel: false });
    const firmware = reading.observations.find((o) => o.type === 'FirmwareInventoryObserved')!.data as FirmwareInventoryObservedData;
    expect(firmware.components.map((c) => [c.id, c.version])).toEqual([
      ['BMC', '1.93.870cf4f0'],
      ['BIOS', 'SE5C620.86B.02.01.0008.C0001.031920191559'],
      ['ME', '04.01.04.251'],
      ['SDR', '1.39 (585433 bytes)'],
      ['HSBP1', '01.21'],
    ]);
  });

  it('the HPE Cray EX says which components may be updated and which may not', async () => {
    const reading = await readRedfishNode(treeFetch(readMockupTree(fixturePath('redfish-more', 'hpe_cray_ex4252'))), { readSel: false });
    const firmware = reading.observations.find((o) => o.type === 'FirmwareInventoryObserved')!.data as FirmwareInventoryObservedData;
    const updateable = (id: string) => firmware.components.find((c) => c.id === id)?.updateable;
    expect(updateable('Node0.BIOS')).toBe(true);
    expect(updateable('Bootloader')).toBe(false);
  });
});
