import { describe, expect, it } from 'vitest';
import {
  dialectFirmwareComparator,
  evolveDrift,
  initialDrift,
  type DriftFact,
  type NodeDrift,
} from '../../projections/index.js';
import { declared, firmware, inventory, T0 } from './support/fleet-events.js';

const hpeNode = { nodeId: 'n1', site: 'dc1', rack: 'r1', manufacturer: 'HPE', model: 'ProLiant DL380 Gen10 Plus', serial: 'CZ1', firmwareBaseline: {} as Record<string, string> };

function given(facts: DriftFact[]): NodeDrift {
  return facts.reduce((state, fact) => evolveDrift(state, fact, dialectFirmwareComparator), initialDrift('n1'));
}

const observedHpe = (at: number, bmcFirmware = 'iLO 5 v2.72'): DriftFact => ({
  kind: 'inventory',
  at,
  data: inventory({ manufacturer: 'HPE', model: 'ProLiant DL380 Gen10 Plus', serial: 'CZ1', bmcModel: 'iLO 5', bmcFirmware }).data as never,
});

describe('drift evolve', () => {
  it('iLO "2.72 Sep 04 2022" equals "iLO 5 v2.72" and the drift names the rule', () => {
    const state = given([{ kind: 'declared', at: T0, importId: 'i', declaration: { ...hpeNode, firmwareBaseline: { BMC: '2.72 Sep 04 2022' } } }, observedHpe(T0 + 1000)]);
    expect(state.fields['firmware:BMC']).toMatchObject({ kind: 'match', declared: '2.72 Sep 04 2022', observed: 'iLO 5 v2.72', rule: 'hpe-ilo-date-suffix + hpe-ilo-product-prefix' });
  });

  it('a different iLO version is a mismatch since it was first observed', () => {
    const declaredFact: DriftFact = { kind: 'declared', at: T0, importId: 'i', declaration: { ...hpeNode, firmwareBaseline: { BMC: '2.72 Sep 04 2022' } } };
    const state = given([declaredFact, observedHpe(T0 + 1000, 'iLO 5 v2.78'), observedHpe(T0 + 5000, 'iLO 5 v2.78')]);
    expect(state.fields['firmware:BMC']).toMatchObject({ kind: 'mismatch', observed: 'iLO 5 v2.78', since: T0 + 1000 });
  });

  it('a declared node never seen is missing; a node seen but never declared is unexpected', () => {
    expect(given([{ kind: 'declared', at: T0, importId: 'i', declaration: hpeNode }]).fields.node).toMatchObject({ kind: 'missing' });
    expect(given([observedHpe(T0)]).fields.node).toMatchObject({ kind: 'unexpected', observed: 'HPE ProLiant DL380 Gen10 Plus' });
  });

  it('undeclared GPUs are unexpected, declared ones that are not there are missing', () => {
    const gpus: DriftFact = { kind: 'inventory', at: T0 + 1, data: inventory({ manufacturer: 'HPE', model: 'ProLiant DL380 Gen10 Plus', serial: 'CZ1', gpus: { count: 2, models: ['NVIDIA L40S'] } }).data as never };
    expect(given([{ kind: 'declared', at: T0, importId: 'i', declaration: hpeNode }, gpus]).fields.gpuCount).toMatchObject({ kind: 'unexpected', observed: '2' });
    const noGpus = given([{ kind: 'declared', at: T0, importId: 'i', declaration: { ...hpeNode, gpuCount: 8 } }, observedHpe(T0 + 1)]);
    expect(noGpus.fields.gpuCount).toMatchObject({ kind: 'missing', declared: '8' });
  });

  it('a manufacturer spelled differently in case matches and says so', () => {
    const state = given([{ kind: 'declared', at: T0, importId: 'i', declaration: { ...hpeNode, manufacturer: 'hpe' } }, observedHpe(T0 + 1)]);
    expect(state.fields.manufacturer).toMatchObject({ kind: 'match', rule: 'case-insensitive' });
  });
});
