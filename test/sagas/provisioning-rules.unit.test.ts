import { describe, expect, it } from 'vitest';
import { bomDifferences, decideProvision, evolveProvision, initialProvision, type SagaEvent } from '../../sagas/index.js';

const actor = { kind: 'saga' as const, id: 'test' };
const ev = (type: string, data: unknown, recordedAt = 0): SagaEvent => ({ type, data, actor, recordedAt });
const spec = { nodeId: 'n1', site: 's', rack: 'r', declared: { model: 'R750', gpuCount: 4 }, baseline: [{ component: 'BMC', version: '7.10', imageUri: 'http://i/7.10.bin', method: 'SimpleUpdate', applyTime: 'Immediate' }], burnInMs: 1_000, burnInIntervalMs: 100 };
const fold = (events: SagaEvent[]) => events.reduce(evolveProvision, initialProvision('n1'));
const throughValidation = [ev('ProvisioningStarted', spec), ev('BmcAccessVerified', { nodeId: 'n1' })];

describe('the provisioning decider', () => {
  it('quarantines a node whose BMC cannot be reached three times', () => {
    const failed = fold([ev('ProvisioningStarted', spec), ...[1, 2, 3].map((i) => ev('BmcAccessFailed', { nodeId: 'n1', code: 'DRIVER_AUTH', message: 'x' }, i))]);
    expect(decideProvision(failed, 10).action).toMatchObject({ kind: 'quarantine', stage: 'registering' });
  });

  it('names every field that differs from the declared bill of materials', () => {
    expect(bomDifferences({ model: 'R750', gpuCount: 4, memoryGiB: 512 }, { model: 'PowerEdge R750', gpuCount: 2, memoryGiB: 510 })).toEqual([{ field: 'gpuCount', declared: '4', observed: '2' }]);
    const state = fold([...throughValidation, ev('InventoryCollected', { nodeId: 'n1', observed: { model: 'R650', gpuCount: 4 }, firmware: {} })]);
    expect(decideProvision(state, 1).action).toMatchObject({ kind: 'mismatch', differences: [{ field: 'model', declared: 'R750', observed: 'R650' }] });
  });

  it('settles a baseline component already at its version without an update, and updates one that is not', () => {
    const at = fold([...throughValidation, ev('InventoryCollected', { nodeId: 'n1', observed: { model: 'R750', gpuCount: 4 }, firmware: { BMC: 'iDRAC 7.10' } }), ev('BomValidated', { nodeId: 'n1' })]);
    expect(decideProvision(at, 1).action).toMatchObject({ kind: 'settle-component', component: 'BMC' });
    const behind = fold([...throughValidation, ev('InventoryCollected', { nodeId: 'n1', observed: { model: 'R750', gpuCount: 4 }, firmware: { BMC: '6.00' } }), ev('BomValidated', { nodeId: 'n1' })]);
    expect(decideProvision(behind, 1).action).toMatchObject({ kind: 'update-component', component: 'BMC', pass: 1 });
  });

  it('quarantines at baselining when a component does not end updated, and at burn-in on a problem reading', () => {
    const base = [...throughValidation, ev('InventoryCollected', { nodeId: 'n1', observed: { model: 'R750', gpuCount: 4 }, firmware: {} }), ev('BomValidated', { nodeId: 'n1' })];
    expect(decideProvision(fold([...base, ev('BaselineComponentSettled', { nodeId: 'n1', component: 'BMC', outcome: 'failed' })]), 1).action).toMatchObject({ kind: 'quarantine', stage: 'baselining' });
    const burning = [...base, ev('BaselineComponentSettled', { nodeId: 'n1', component: 'BMC', outcome: 'updated' }), ev('BurnInStarted', { nodeId: 'n1', until: 1_000 }, 0)];
    expect(decideProvision(fold(burning), 50).action.kind).toBe('observe-burn-in');
    expect(decideProvision(fold([...burning, ev('BurnInObserved', { nodeId: 'n1', reachable: true, problems: ['/redfish/v1/Chassis/1 Health Critical'] }, 100)]), 150).action).toMatchObject({ kind: 'quarantine', stage: 'burn-in' });
    expect(decideProvision(fold([...burning, ev('BurnInObserved', { nodeId: 'n1', reachable: true, problems: [] }, 100)]), 1_000).action.kind).toBe('ready');
  });

  it('a quarantined node waits for an operator, and a release re-enters at the named stage only', () => {
    const quarantined = fold([...throughValidation, ev('ProvisioningQuarantined', { nodeId: 'n1', stage: 'validating', reason: 'x', keepsSlot: false })]);
    expect(decideProvision(quarantined, 1).action.kind).toBe('held');
    const released = evolveProvision(quarantined, ev('QuarantineReleased', { nodeId: 'n1', resumeAt: 'inventorying', reason: 'chassis swapped' }));
    expect(released.stage).toBe('inventorying');
    expect(decideProvision(released, 1).action.kind).toBe('collect-inventory');
  });
});
