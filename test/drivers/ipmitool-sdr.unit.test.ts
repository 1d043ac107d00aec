/**
 * `ipmitool sdr` lines as the parser reads them, from the format alone (no capture): a reading too long for a double
 * is no reading (never Infinity, which JSON cannot carry), and a well-formed one keeps its value and unit.
 */
import { describe, expect, it } from 'vitest';
import { parseSdr } from '../../src/drivers/index.js';

describe('ipmitool sdr readings', () => {
  it('a reading of more digits than a double holds is no reading, not Infinity', () => {
    const { sensors } = parseSdr(`Intrusion        | ${'9'.repeat(400)} degrees C | ok\nInlet Temp       | 23 degrees C      | ok\n`);
    expect(sensors.map((s) => [s.name, s.reading])).toEqual([
      ['Intrusion', null],
      ['Inlet Temp', 23],
    ]);
    expect(JSON.parse(JSON.stringify(sensors))).toEqual(sensors);
  });
});
