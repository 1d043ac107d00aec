import { describe, expect, it } from 'vitest';
import { burnInAlarmProblems, type OpenAlarm } from '../../sagas/index.js';

const baseline = [{ component: 'BMC', version: '9.90.2' }];
const drift = (fields: NonNullable<NonNullable<OpenAlarm['evidence']>['fields']>): OpenAlarm => ({ kind: 'drift', summary: 'bmc-00042 differs from its declaration', evidence: { fields } });

describe('burn-in after a firmware baseline', () => {
  it('the drift the baseline itself made (the EBOM still declares the old version, the node runs the one asked for) does not fail the burn-in', () => {
    expect(burnInAlarmProblems([drift([{ field: 'firmware:BMC', kind: 'mismatch', declared: '7.10.30.00', observed: '9.90.2' }])], baseline)).toEqual([]);
  });

  it('any other drift, or a baseline component at another version, or any other alarm, still does', () => {
    expect(burnInAlarmProblems([drift([{ field: 'firmware:BMC', kind: 'mismatch', declared: '7.10.30.00', observed: '9.90.1' }])], baseline)).toHaveLength(1);
    expect(burnInAlarmProblems([drift([{ field: 'firmware:BMC', kind: 'mismatch', declared: '7.10.30.00', observed: '9.90.2' }, { field: 'gpuCount', kind: 'mismatch', declared: '8', observed: '7' }])], baseline)).toHaveLength(1);
    expect(burnInAlarmProblems([drift([{ field: 'firmware:BIOS', kind: 'mismatch', declared: '1.0', observed: '9.90.2' }])], baseline)).toHaveLength(1);
    expect(burnInAlarmProblems([{ kind: 'sel-critical', summary: 'PSU failure' }], baseline)).toEqual(['alarm sel-critical: PSU failure']);
  });
});
