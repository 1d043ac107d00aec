import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  firmwareVersions,
  heterogeneityReport,
  inventoryBy,
  InventoryProjection,
  rolloutTargets,
  complianceByNode,
  complianceSummary,
  DriftProjection,
} from '../../projections/index.js';
import { backends } from '../support/backends.js';
import { at, declared, firmware, inventory, registered } from './support/fleet-events.js';
import { openHarness, project, type Harness } from './support/projection-harness.js';

for (const backend of backends()) {
  describe.skipIf(!backend.adminUrl)(`inventory and compliance on ${backend.name} PostgreSQL`, () => {
    let harness: Harness;
    beforeAll(async () => {
      harness = await openHarness(backend.adminUrl!);
      const { store } = harness;
      // Two HPE nodes (one upgraded later), one Dell, one Supermicro with GPUs.
      await store.append('node-h1', [registered('h1', 'r1'), inventory({ manufacturer: 'HPE', model: 'DL380', serial: 'H1', bmcModel: 'iLO 5', bmcFirmware: 'iLO 5 v2.72', bios: 'U46 v1.64' }, 10)]);
      await store.append('node-h1', [firmware([{ component: 'iLO 5', version: '2.72 Sep 04 2022', normalized: '2.72', rule: 'hpe-ilo-date-suffix' }], { seconds: 10 })]);
      await store.append('node-h2', [registered('h2', 'r1'), inventory({ manufacturer: 'HPE', model: 'DL380', serial: 'H2', bmcModel: 'iLO 5', bmcFirmware: 'iLO 5 v2.78', bios: 'U46 v1.64' }, 20)]);
      await store.append('node-h2', [firmware([{ component: 'iLO 5', version: '2.78 Jan 10 2023', normalized: '2.78', rule: 'hpe-ilo-date-suffix' }], { seconds: 20 })]);
      await store.append('node-e1', [
        registered('e1', 'r2'),
        inventory({ manufacturer: 'Dell Inc.', model: 'R750', serial: 'E1', bmcFirmware: '7.00.00.171', bios: '1.10.2', dialect: 'dell-idrac9' }, 5),
        firmware(
          [
            { component: 'iDRAC', version: '7.00.00.171', updateable: true },
            { component: 'BIOS', version: '1.10.2' },
            { component: 'TPM', version: '7.2.2.0', updateable: false },
          ],
          { dialect: 'dell-idrac9', seconds: 5 },
        ),
      ]);
      await store.append('node-s1', [
        registered('s1', 'r2'),
        inventory({ manufacturer: 'Supermicro', model: 'SYS-821GE-TNHR', serial: 'S1', bmcFirmware: '01.03.09', gpus: { count: 8, models: ['NVIDIA H100 80GB HBM3'] }, dialect: 'supermicro-x13' }, 30),
      ]);
      // h1 is upgraded: its iLO version changes, and with it the first-seen time of that fact.
      await store.append('node-h1', [firmware([{ component: 'iLO 5', version: '2.78 Jan 10 2023', normalized: '2.78', rule: 'hpe-ilo-date-suffix' }], { seconds: 40 })]);
      await store.append('node-h1', [declared({ nodeId: 'h1', manufacturer: 'HPE', model: 'DL380', serial: 'H1', firmwareBaseline: { 'iLO 5': '2.78', BIOS: 'U46 v1.64' } })]);
      await store.append('node-h2', [declared({ nodeId: 'h2', manufacturer: 'HPE', model: 'DL380', serial: 'H2', firmwareBaseline: { 'iLO 5': '2.80', BIOS: 'U46 v1.60' } })]);
      await store.append('node-e1', [declared({ nodeId: 'e1', manufacturer: 'Dell Inc.', model: 'R750', serial: 'E1', firmwareBaseline: { CPLD: '1.0.4' } })]);
      await project(store, [new InventoryProjection(), new DriftProjection()]);
    });
    afterAll(async () => harness?.close());

    it('counts nodes by manufacturer, GPU model and the dialect that read them', async () => {
      const { db } = harness;
      expect(await inventoryBy(db, 'manufacturer')).toEqual([
        { value: 'HPE', nodes: 2 },
        { value: 'Dell Inc.', nodes: 1 },
        { value: 'Supermicro', nodes: 1 },
      ]);
      expect((await inventoryBy(db, 'gpu_model')).find((r) => r.value !== null)).toEqual({ value: 'NVIDIA H100 80GB HBM3', nodes: 1 });
      expect((await inventoryBy(db, 'dialect')).map((r) => r.value).sort()).toEqual(['dell-idrac9', 'hpe-ilo5', 'supermicro-x13']);
      expect(await inventoryBy(db, 'rack')).toEqual([
        { value: 'r1', nodes: 2 },
        { value: 'r2', nodes: 2 },
      ]);
    });

    it('a firmware version keeps when it was first seen, and each fact when it was last observed', async () => {
      const { db } = harness;
      expect(await firmwareVersions(db, 'iLO 5')).toEqual([{ version: '2.78', nodes: 2, firstSeenAt: new Date(at(20)) }]);
      const h1 = await db.selectFrom('inventory_firmware').selectAll().where('node_id', '=', 'h1').executeTakeFirstOrThrow();
      expect(h1.first_seen_at).toEqual(new Date(at(40)));
      expect(h1.last_observed_at).toEqual(new Date(at(40)));
    });

    it('each firmware fact keeps Updateable as the BMC stated it, null where it said nothing', async () => {
      const rows = await harness.db.selectFrom('inventory_firmware').select(['component', 'updateable']).where('node_id', '=', 'e1').orderBy('component').execute();
      expect(rows).toEqual([
        { component: 'BIOS', updateable: null },
        { component: 'TPM', updateable: false },
        { component: 'iDRAC', updateable: true },
      ]);
    });

    it('the heterogeneity report lists every (vendor, model, component, version), the oldest first', async () => {
      const report = await heterogeneityReport(harness.db);
      expect(report[0]).toMatchObject({ manufacturer: 'Dell Inc.', model: 'R750', firstSeenAt: new Date(at(5)) });
      const ilo = report.filter((r) => r.component === 'iLO 5');
      expect(ilo).toEqual([{ manufacturer: 'HPE', model: 'DL380', component: 'iLO 5', version: '2.78', nodes: 2, firstSeenAt: new Date(at(20)) }]);
      const firsts = report.map((r) => r.firstSeenAt.getTime());
      expect(firsts).toEqual([...firsts].sort((a, b) => a - b));
    });

    it('compliance counts nodes at, above and below their baseline, and unknown', async () => {
      const { db } = harness;
      const byNode = await complianceByNode(db);
      expect(byNode.map((n) => [n.nodeId, n.component, n.status]).sort()).toEqual([
        ['e1', 'CPLD', 'unknown'],
        ['h1', 'BIOS', 'at-baseline'],
        ['h1', 'iLO 5', 'at-baseline'],
        ['h2', 'BIOS', 'above'],
        ['h2', 'iLO 5', 'below'],
      ]);
      expect(await complianceSummary(db)).toContainEqual({ component: 'iLO 5', atBaseline: 1, above: 0, below: 1, unknown: 0 });
    });

    it('a rollout lists the nodes it would have to touch', async () => {
      const targets = await rolloutTargets(harness.db, 'iLO 5', '2.80', { manufacturer: 'HPE' });
      expect(targets).toEqual([
        { nodeId: 'h1', current: '2.78 Jan 10 2023', status: 'below' },
        { nodeId: 'h2', current: '2.78 Jan 10 2023', status: 'below' },
      ]);
      expect((await rolloutTargets(harness.db, 'iDRAC', '7.00.00.171')).map((t) => [t.nodeId, t.status])).toEqual([
        ['h1', 'unknown'],
        ['h2', 'unknown'],
        ['s1', 'unknown'],
      ]);
    });
  });
}
