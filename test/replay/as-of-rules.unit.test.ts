import { describe, expect, it } from 'vitest';
import { asOfErrorCatalogue, isAsOfError, parsePoint } from '../../replay/as-of/index.js';

describe('an asOf as a caller writes it', () => {
  it('a whole number of 1 or more is a position; an RFC 3339 instant with seconds and a zone is an instant', () => {
    expect(parsePoint('1')).toEqual({ position: 1 });
    expect(parsePoint('2000100')).toEqual({ position: 2_000_100 });
    expect(parsePoint('2026-12-01T03:00:00Z')).toEqual({ instant: new Date('2026-12-01T03:00:00Z') });
    expect(parsePoint('2026-12-01T04:00:00.250+01:00')).toEqual({ instant: new Date('2026-12-01T03:00:00.250Z') });
  });

  it('anything else is ASOF_INVALID_POINT naming the value', () => {
    for (const value of ['', '0', '-3', '01', '1.5', '1e6', 'yesterday', '2026-12-01', '2026-12-01T03:00Z', '2026-12-01T03:00:00', '2026-02-30T00:00:00Z', '2026-12-01T24:00:00Z', '99999999999999999']) {
      try {
        parsePoint(value);
        throw new Error(`'${value}' was accepted`);
      } catch (error) {
        expect(isAsOfError(error) && error.code === 'ASOF_INVALID_POINT' && error.details.value === value).toBe(true);
      }
    }
  });

  it('every error code states whether asking again can succeed', () => {
    for (const [code, entry] of Object.entries(asOfErrorCatalogue)) {
      expect(typeof entry.retryable, code).toBe('boolean');
      expect(entry.meaning.length, code).toBeGreaterThan(10);
    }
  });
});
