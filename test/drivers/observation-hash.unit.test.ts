import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { changedObservations, observationContentHash } from '../../src/drivers/index.js';
import type { DriverObservation } from '../../events/driver-observations.js';

const power = (state: 'On' | 'Off', latencyMs: number): DriverObservation => ({
  type: 'PowerStateObserved',
  data: { source: 'redfish', dialect: 'dell-idrac9', unrecognized: [], powerState: state, latencyMs },
});

describe('observation change detection', () => {
  it('the same content read twice with different latencies has one hash', () => {
    fc.assert(
      fc.property(fc.nat(), fc.nat(), (a, b) => {
        expect(observationContentHash('n1', power('On', a))).toBe(observationContentHash('n1', power('On', b)));
      }),
    );
  });

  it('key order does not change the hash, content does', () => {
    fc.assert(
      fc.property(fc.dictionary(fc.string(), fc.jsonValue({ maxDepth: 2 })), fc.string(), (extra, serial) => {
        const forward: DriverObservation = { type: 'NodeInventoryObserved', data: { source: 'ipmi', dialect: 'd', unrecognized: [{ path: 'p', value: extra }], system: { serialNumber: serial, model: 'm' }, systems: [], bmc: {}, bmcs: [] } };
        const reordered = { type: 'NodeInventoryObserved', data: { ...Object.fromEntries(Object.entries(forward.data).reverse()), system: { model: 'm', serialNumber: serial } } } as DriverObservation;
        expect(observationContentHash('n1', reordered)).toBe(observationContentHash('n1', forward));
        const changed = { ...forward, data: { ...forward.data, system: { serialNumber: `${serial}x`, model: 'm' } } } as DriverObservation;
        expect(observationContentHash('n1', changed)).not.toBe(observationContentHash('n1', forward));
      }),
      { numRuns: 100 },
    );
  });

  it('the hash is per node and per observation type', () => {
    expect(observationContentHash('n1', power('On', 1))).not.toBe(observationContentHash('n2', power('On', 1)));
  });

  it('the poller appends only observations whose content changed', () => {
    const first = changedObservations('n1', [power('On', 10)], new Map());
    expect(first.changed).toHaveLength(1);
    const second = changedObservations('n1', [power('On', 99)], first.hashes);
    expect(second.changed).toHaveLength(0);
    const third = changedObservations('n1', [power('Off', 12)], second.hashes);
    expect(third.changed.map((o) => o.type)).toEqual(['PowerStateObserved']);
  });
});

describe('sensor change detection', () => {
  const sensors = (celsius: number, health: 'OK' | 'Warning' = 'OK') => ({
    type: 'SensorsObserved' as const,
    data: { source: 'redfish' as const, dialect: 'generic', unrecognized: [], temperatures: [{ name: 'CPU1 Temp', reading: celsius, unit: 'Cel', health }], fans: [], powerSupplies: [], other: [] },
  });

  it('a sensor reading that moves within its band is not a change, a move across bands or a health change is', () => {
    const base = observationContentHash('n1', sensors(41));
    expect(observationContentHash('n1', sensors(42))).toBe(base);
    expect(observationContentHash('n1', sensors(55))).not.toBe(base);
    expect(observationContentHash('n1', sensors(41, 'Warning'))).not.toBe(base);
  });
});
