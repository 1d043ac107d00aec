import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { driftFindings, DriftProjection, nodeComparison } from '../../projections/index.js';
import { backends } from '../support/backends.js';
import { declared, firmware, inventory } from './support/fleet-events.js';
import { openHarness, project, type Harness } from './support/projection-harness.js';

for (const backend of backends()) {
  describe.skipIf(!backend.adminUrl)(`drift read model on ${backend.name} PostgreSQL`, () => {
    let harness: Harness;
    beforeAll(async () => {
      harness = await openHarness(backend.adminUrl!);
    });
    afterAll(async () => harness?.close());

    it('declared against observed per field, with since-when and the rule, through the runner', async () => {
      const { store, db } = harness;
      await store.append('node-d1', [declared({ nodeId: 'd1', serial: 'CZ1', firmwareBaseline: { 'iLO 5': 'iLO 5 v2.72', BIOS: 'U46 v1.64' } })]);
      await store.append('node-d2', [declared({ nodeId: 'd2', serial: 'CZ2' })]);
      await store.append('node-d1', [
        inventory({ manufacturer: 'HPE', model: 'ProLiant DL380 Gen10 Plus', serial: 'CZ1', bmcModel: 'iLO 5', bmcFirmware: 'iLO 5 v2.72', bios: 'U46 v1.60' }, 10),
        firmware([{ component: 'iLO 5', version: '2.72 Sep 04 2022' }], { seconds: 11 }),
      ]);
      await store.append('node-d9', [inventory({ manufacturer: 'Dell Inc.', model: 'PowerEdge R750', serial: 'X9' }, 12)]);
      await project(store, [new DriftProjection()]);

      const d1 = await nodeComparison(db, 'd1');
      expect(d1.find((f) => f.field === 'firmware:iLO 5')).toMatchObject({ kind: 'match', declared: 'iLO 5 v2.72', observed: '2.72 Sep 04 2022', rule: 'hpe-ilo-product-prefix + hpe-ilo-date-suffix' });
      expect(d1.find((f) => f.field === 'firmware:BIOS')).toMatchObject({ kind: 'mismatch', declared: 'U46 v1.64', observed: 'U46 v1.60' });
      const findings = await driftFindings(db);
      expect(findings.map((f) => [f.nodeId, f.field, f.kind]).sort()).toEqual([
        ['d1', 'firmware:BIOS', 'mismatch'],
        ['d2', 'node', 'missing'],
        ['d9', 'node', 'unexpected'],
      ]);
      expect((await driftFindings(db, { kind: 'missing' })).map((f) => f.nodeId)).toEqual(['d2']);
    });
  });
}
