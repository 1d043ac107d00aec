import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  alarmById,
  alarmsOfNode,
  AlarmsProjection,
  childAlarms,
  nodesFedBy,
  openAlarms,
  TopologyProjection,
} from '../../projections/index.js';
import { backends } from '../support/backends.js';
import {
  acknowledged,
  declared,
  gpuTelemetry,
  inventory,
  polls,
  registered,
  topology,
  xid,
  type Outcome,
} from './support/fleet-events.js';
import { openHarness, project, type Harness } from './support/projection-harness.js';

/** Rack r<k> holds nodes <prefix>-r<k>-n1..n4. */
const nodesOf = (prefix: string, rack: string): string[] => [1, 2, 3, 4].map((n) => `${prefix}-${rack}-n${n}`);

/** Polls every node once a minute from `fromMinute` for `minutes`, failing those `failing(node, minute)` says. */
function minutes(nodes: string[], fromMinute: number, count: number, failing: (node: string, minute: number) => boolean): ReturnType<typeof polls>[] {
  return Array.from({ length: count }, (_, k) => {
    const minute = fromMinute + k;
    return polls(minute * 60, nodes.map((node) => [node, (failing(node, minute) ? 'timeout' : 'success') as Outcome] as const));
  });
}

for (const backend of backends()) {
  describe.skipIf(!backend.adminUrl)(`alarms on ${backend.name} PostgreSQL`, () => {
    let harness: Harness;
    beforeAll(async () => {
      harness = await openHarness(backend.adminUrl!);
    });
    afterAll(async () => harness?.close());

    async function fleet(prefix: string, racks: Array<{ rack: string; pdu: string; tor: string; cdu?: string }>): Promise<string[]> {
      const nodes: string[] = [];
      for (const { rack, pdu, tor, cdu } of racks) {
        await harness.store.append(`rack-${prefix}-${rack}`, [topology(`${prefix}-${rack}`, [`${prefix}-${pdu}`], [`${prefix}-${tor}`], cdu ? `${prefix}-${cdu}` : undefined)]);
        for (const node of nodesOf(prefix, rack)) {
          await harness.store.append(`node-${node}`, [registered(node, `${prefix}-${rack}`)]);
          nodes.push(node);
        }
      }
      return nodes;
    }

    it('a PDU failure raises one root-cause alarm with all its nodes', async () => {
      const nodes = await fleet('pf', [
        { rack: 'r1', pdu: 'P1', tor: 'T1', cdu: 'C1' },
        { rack: 'r2', pdu: 'P1', tor: 'T2', cdu: 'C1' },
        { rack: 'r3', pdu: 'P2', tor: 'T3', cdu: 'C1' },
      ]);
      const fedByP1 = nodes.filter((n) => !n.includes('-r3-'));
      await harness.store.append('polls-dc1', minutes(nodes, 1, 14, (node, minute) => minute >= 3 && fedByP1.includes(node)));
      await project(harness.store, [new AlarmsProjection(), new TopologyProjection()]);
      expect(await nodesFedBy(harness.db, 'pdu', 'pf-P1')).toEqual([...fedByP1].sort());

      const roots = (await openAlarms(harness.db, { kind: 'root-cause' })).filter((a) => a.component?.startsWith('pdu:pf-') || a.component?.startsWith('tor:pf-') || a.component?.startsWith('cdu:pf-'));
      expect(roots.map((a) => a.component)).toEqual(['pdu:pf-P1']);
      const root = roots[0]!;
      expect(root.summary).toBe('PDU pf-P1: 8 of 8 nodes it feeds went dark within 120 s');
      expect((root.evidence as { nodes: Array<{ nodeId: string }> }).nodes.map((n) => n.nodeId).sort()).toEqual([...fedByP1].sort());
      const children = await childAlarms(harness.db, root.alarmId);
      expect(children.map((a) => [a.nodeId, a.kind, a.status])).toEqual(fedByP1.map((n) => [n, 'node-dark', 'open']));
      // The storm is one line: no per-node dark alarm is top-level.
      expect((await openAlarms(harness.db, { kind: 'node-dark' })).filter((a) => a.nodeId?.startsWith('pf-'))).toEqual([]);
    });

    it('a saga step held by name is an alarm on its node until an operator acts on the step', async () => {
      const [node] = await fleet('sh', [{ rack: 'r1', pdu: 'P1', tor: 'T1' }]);
      const stream = `fwstep-fw-1-${node}`;
      const saga = { kind: 'saga' as const, id: 'rollout:fw-1' };
      await harness.store.append(stream, [{ type: 'StepHeld', data: { nodeId: node, hold: 'deadline-exceeded', reason: 'in submitted past the step deadline of 7200000 ms' }, actor: saga }]);
      await project(harness.store, [new AlarmsProjection(), new TopologyProjection()]);
      const [held] = (await alarmsOfNode(harness.db, node!)).filter((alarm) => alarm.kind === 'saga-hold');
      expect(held).toMatchObject({ status: 'open', component: stream, nodeId: node });
      expect(held!.summary).toContain('deadline-exceeded');
      await harness.store.append(stream, [{ type: 'StepOperatorAction', data: { verb: 'release', reason: 'node checked by hand: idle' }, actor: { kind: 'operator', id: 'alice' } }]);
      await project(harness.store, [new AlarmsProjection(), new TopologyProjection()]);
      expect((await alarmsOfNode(harness.db, node!)).filter((alarm) => alarm.kind === 'saga-hold').map((alarm) => alarm.status)).toEqual(['closed']);
    });

    it('the ledger finding its log tampered with is a critical alarm', async () => {
      const data = { code: 'AUDIT_LEAF_MISMATCH', summary: 'position 120 no longer matches the leaf the tree recorded for it', detectedAt: '2026-12-07T15:00:00.000Z' };
      await harness.store.append('ledger-integrity', [{ type: 'LedgerIntegrityAlarmRaised', data, actor: { kind: 'system', id: 'ledger-integrity' } }]);
      await project(harness.store, [new AlarmsProjection(), new TopologyProjection()]);
      const [alarm] = await openAlarms(harness.db, { kind: 'ledger-integrity' });
      expect(alarm).toMatchObject({ status: 'open', severity: 'critical', component: 'ledger', nodeId: null });
      expect(alarm!.summary).toContain('AUDIT_LEAF_MISMATCH');
    });

    it("a site's replication backlog is a site alarm, closed by the heartbeat that shows it drained", async () => {
      const slot = (retainedBytes: number) => ({ slot: 'fleet_c1_bk1', walStatus: 'extended', retainedBytes, safeWalBytes: 2 ** 30 - retainedBytes, limitBytes: 2 ** 30, active: false });
      const actor = { kind: 'system', id: 'site-heartbeat' } as const;
      await harness.store.append('site-bk1', [
        { type: 'SiteHeartbeat', data: { site: 'bk1', intervalS: 5, slots: [slot(2 ** 28)] }, actor },
        { type: 'SiteReplicationBacklogWarned', data: { site: 'bk1', slot: slot(2 ** 29 + 1), threshold: 0.5, summary: 'replication slot fleet_c1_bk1 holds 50% of its bound' }, actor },
        { type: 'SiteHeartbeat', data: { site: 'bk1', intervalS: 5, slots: [slot(2 ** 29 + 2)] }, actor },
      ]);
      await project(harness.store, [new AlarmsProjection(), new TopologyProjection()]);
      const [open] = (await openAlarms(harness.db, { kind: 'replication-backlog' })).filter((alarm) => alarm.component === 'fleet_c1_bk1');
      expect(open).toMatchObject({ status: 'open', severity: 'warning', nodeId: null });
      // Drained (the centre is back), in a later batch: closed, and further heartbeats change nothing.
      await harness.store.append('site-bk1', [
        { type: 'SiteHeartbeat', data: { site: 'bk1', intervalS: 5, slots: [slot(2 ** 20)] }, actor },
        { type: 'SiteHeartbeat', data: { site: 'bk1', intervalS: 5, slots: [slot(2 ** 20)] }, actor },
      ]);
      await project(harness.store, [new AlarmsProjection(), new TopologyProjection()]);
      expect((await openAlarms(harness.db, { kind: 'replication-backlog' })).filter((alarm) => alarm.component === 'fleet_c1_bk1')).toEqual([]);
      expect(await alarmById(harness.db, 'replication-backlog:bk1:fleet_c1_bk1')).toMatchObject({ status: 'closed' });
    });

    it('independent failures raise no root-cause alarm', async () => {
      const nodes = await fleet('if', [
        { rack: 'r1', pdu: 'P1', tor: 'T1' },
        { rack: 'r2', pdu: 'P2', tor: 'T2' },
        { rack: 'r3', pdu: 'P3', tor: 'T3' },
      ]);
      const failing = ['if-r1-n1', 'if-r2-n2', 'if-r3-n3'];
      await harness.store.append('polls-dc1', minutes(nodes, 1, 14, (node, minute) => minute >= 3 && failing.includes(node)));
      await project(harness.store, [new AlarmsProjection()]);
      const mine = (await openAlarms(harness.db, { includeFolded: true })).filter((a) => a.nodeId?.startsWith('if-') || a.component?.includes('if-'));
      expect(mine.map((a) => [a.kind, a.nodeId, a.parentId])).toEqual(failing.map((n) => ['node-dark', n, null]));
    });

    it('the root cause closes when its nodes are back', async () => {
      const nodes = await fleet('rc', [
        { rack: 'r1', pdu: 'P1', tor: 'T1' },
        { rack: 'r2', pdu: 'P1', tor: 'T2' },
      ]);
      await harness.store.append('polls-dc1', minutes(nodes, 1, 16, (_node, minute) => minute >= 3 && minute <= 13));
      await project(harness.store, [new AlarmsProjection()]);
      const all = (await harness.db.selectFrom('alarms').selectAll().where('component', '=', 'pdu:rc-P1').execute()) as Array<{ status: string; closed_at: Date | null }>;
      expect(all.map((a) => a.status)).toEqual(['closed']);
      expect((await alarmsOfNode(harness.db, 'rc-r1-n1')).map((a) => a.status)).toEqual(['closed']);
    });

    it('an acknowledgement records who took the alarm on, and when', async () => {
      const [node] = await fleet('ack', [{ rack: 'r1', pdu: 'P1', tor: 'T1' }]);
      await harness.store.append('polls-dc1', minutes([node!], 1, 12, (_n, minute) => minute >= 2));
      await project(harness.store, [new AlarmsProjection()]);
      const [dark] = await alarmsOfNode(harness.db, node!);
      await harness.store.append('operator-bob', [acknowledged(dark!.alarmId, 'bob@example.org', 'on it')]);
      await project(harness.store, [new AlarmsProjection()]);
      expect(await alarmById(harness.db, dark!.alarmId)).toMatchObject({ status: 'open', acknowledgedBy: 'bob@example.org', acknowledgedAt: expect.any(Date) });
    });

    it('a critical XID and uncorrected ECC errors raise GPU alarms; a clean reading closes the ECC one', async () => {
      await harness.store.append('node-gpu1', [registered('gpu1', 'g1'), xid(79, 'critical', 10), xid(43, 'info', 11), xid(79, 'critical', 12), gpuTelemetry(3, 13)]);
      await project(harness.store, [new AlarmsProjection()]);
      const open = await alarmsOfNode(harness.db, 'gpu1');
      expect(open.map((a) => [a.kind, a.severity, a.status]).sort()).toEqual([
        ['gpu-ecc', 'critical', 'open'],
        ['gpu-xid', 'critical', 'open'],
      ]);
      expect(open.find((a) => a.kind === 'gpu-xid')!.evidence).toMatchObject({ xid: 79, occurrences: 2 });
      await harness.store.append('node-gpu1', [gpuTelemetry(0, 20)]);
      await project(harness.store, [new AlarmsProjection()]);
      expect((await alarmsOfNode(harness.db, 'gpu1')).find((a) => a.kind === 'gpu-ecc')!.status).toBe('closed');
    });

    it('a node that differs from its declaration has a drift alarm until it matches again', async () => {
      await harness.store.append('node-dr1', [declared({ nodeId: 'dr1', serial: 'S1', firmwareBaseline: { BMC: 'iLO 5 v2.78' } })]);
      await harness.store.append('node-dr1', [inventory({ manufacturer: 'HPE', model: 'ProLiant DL380 Gen10 Plus', serial: 'S1', bmcModel: 'iLO 5', bmcFirmware: 'iLO 5 v2.72' }, 10)]);
      await project(harness.store, [new AlarmsProjection()]);
      const [drift] = await alarmsOfNode(harness.db, 'dr1');
      expect(drift).toMatchObject({ kind: 'drift', status: 'open', summary: 'dr1 differs from its declaration: firmware:BMC (mismatch)' });
      await harness.store.append('node-dr1', [inventory({ manufacturer: 'HPE', model: 'ProLiant DL380 Gen10 Plus', serial: 'S1', bmcModel: 'iLO 5', bmcFirmware: '2.78 Feb 01 2024' }, 20)]);
      await project(harness.store, [new AlarmsProjection()]);
      expect((await alarmById(harness.db, drift!.alarmId))!.status).toBe('closed');
    });
  });
}
