/**
 * The targets file an operator writes for `start --no-sim --targets`: each target's scheme names its protocol, so a
 * PDU listed as `snmp://` is registered as an SNMP endpoint (and polled), not taken for a Redfish BMC or refused.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { EventStore } from '../../src/ledger/index.js';
import { loadTargetFile, registerTargets } from '../../src/demo/target-file.js';

const dirs: string[] = [];
function targetFile(yaml: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'fl-targets-'));
  dirs.push(dir);
  const path = join(dir, 'targets.yaml');
  writeFileSync(path, yaml);
  return path;
}
afterEach(() => dirs.splice(0).forEach((dir) => rmSync(dir, { recursive: true, force: true })));

describe('the targets file', () => {
  it('registers each target with the protocol its scheme names: https Redfish, ipmi:// IPMI, snmp:// SNMP', async () => {
    const file = loadTargetFile(
      targetFile(
        [
          'targets:',
          '  - { nodeId: n1, site: dc1, rack: r1, bmc: "https://10.20.0.1", credentialRef: bmc }',
          '  - { nodeId: n2, site: dc1, rack: r1, bmc: "ipmi://10.20.0.2:623", credentialRef: bmc }',
          '  - { nodeId: pdu-r1-a, site: dc1, rack: r1, bmc: "snmp://10.20.9.1:161", credentialRef: pdu-community }',
          '',
        ].join('\n'),
      ),
    );
    const appended: Array<{ stream: string; data: { bmc: { protocol: string; address: string } } }> = [];
    const store = {
      readStream: async () => [],
      append: async (stream: string, events: Array<{ data: { bmc: { protocol: string; address: string } } }>) => {
        for (const event of events) appended.push({ stream, data: event.data });
      },
    } as unknown as EventStore;
    expect(await registerTargets(store, file, 'ops')).toBe(3);
    expect(appended.map(({ stream, data }) => [stream, data.bmc.protocol, data.bmc.address])).toEqual([
      ['node-n1', 'redfish', 'https://10.20.0.1'],
      ['node-n2', 'ipmi', 'ipmi://10.20.0.2:623'],
      ['node-pdu-r1-a', 'snmp', 'snmp://10.20.9.1:161'],
    ]);
  });

  it('refuses a scheme it cannot poll, naming the target', () => {
    const path = targetFile('targets:\n  - { nodeId: n1, site: dc1, rack: r1, bmc: "ftp://10.20.0.1", credentialRef: bmc }\n');
    expect(() => loadTargetFile(path)).toThrow(/targets\.0\.bmc: must be an https:\/\/, http:\/\/, ipmi:\/\/ or snmp:\/\/ address/);
  });
});
