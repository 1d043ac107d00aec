import { describe, expect, it } from 'vitest';
import { compareVersionOrder } from '../../projections/index.js';
import { firmware } from './support/fleet-events.js';

describe('firmware version order', () => {
  it('numeric runs compare as numbers, so 2.10 is above 2.9', () => {
    expect(compareVersionOrder('2.10', '2.9')).toBe(1);
    expect(compareVersionOrder('7.00.00.171', '7.10.30.00')).toBe(-1);
    expect(compareVersionOrder('1.4a', '1.4')).toBe(1);
    expect(compareVersionOrder('U46 1.64', 'U46 1.64')).toBe(0);
  });
});
