/**
 * The hash chain is computed over canonical JSON, while the row stores JSON.stringify's text. Whatever a caller
 * passes, the two must say the same thing, or a verifier reading the stored row finds a hash that does not match.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { canonicalJson } from '../../src/ledger/index.js';

/** A JSON value, with some of its arrays made sparse and some of its members wrapped in an object with toJSON. */
const awkwardValue = fc.letrec<{ value: unknown }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small' },
    fc.oneof(fc.string(), fc.integer(), fc.double({ noNaN: true, noDefaultInfinity: true }), fc.boolean(), fc.constant(null)),
    fc.array(tie('value'), { maxLength: 5 }),
    fc.tuple(fc.array(tie('value'), { minLength: 1, maxLength: 5 }), fc.nat()).map(([items, hole]) => {
      const sparse = [...items];
      delete sparse[hole % sparse.length];
      return sparse;
    }),
    fc.dictionary(fc.string({ maxLength: 6 }), tie('value'), { maxKeys: 4 }),
    tie('value').map((inner) => ({ toJSON: () => inner, hidden: 'not what is stored' })),
  ),
})).value;

describe('canonical JSON hashes what is stored', () => {
  it('for any value (sparse arrays, objects with toJSON), the canonical text equals that of its stored JSON.stringify form', () => {
    fc.assert(
      fc.property(awkwardValue, (value) => {
        const canonical = canonicalJson(value);
        expect(() => JSON.parse(canonical)).not.toThrow();
        expect(canonical).toBe(canonicalJson(JSON.parse(JSON.stringify(value))));
      }),
      { numRuns: 500 },
    );
  });

  it('a hole in an array is null, as stored; a URL is its href; an invalid Date is refused with its path', () => {
    expect(canonicalJson({ a: [1, , 3] })).toBe('{"a":[1,null,3]}');
    expect(canonicalJson({ u: new URL('https://bmc.example/redfish/v1') })).toBe('{"u":"https://bmc.example/redfish/v1"}');
    expect(() => canonicalJson({ at: new Date(Number.NaN) })).toThrow(/invalid Date/);
  });
});
