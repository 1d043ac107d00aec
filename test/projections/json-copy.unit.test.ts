/**
 * A rebuild holds JSON columns as copies (`jsonCopy`) instead of text: every copy must be what the text would have
 * given back, `JSON.parse(JSON.stringify(value))`, for any value a projection may write, and share nothing with it.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { jsonCopy } from '../../projections/support/table.js';

const throughText = (value: unknown): unknown => JSON.parse(JSON.stringify(value) ?? 'null');

/**
 * Values as projections write them, with what JSON drops or changes mixed in. (No `constructor` key: two objects that
 * each hold one are unequal to `toStrictEqual` whatever they hold, since it compares constructors.)
 */
const odd = fc.oneof(
  fc.constant(undefined),
  fc.constant(Number.NaN),
  fc.constant(Number.POSITIVE_INFINITY),
  fc.constant(-0),
  fc.date({ noInvalidDate: true }),
  fc.constant({ toJSON: () => 'custom' }),
  fc.constant(() => 1),
);
const { value } = fc.letrec((tie) => ({
  value: fc.oneof({ depthSize: 'small' }, fc.jsonValue({ maxDepth: 2 }), odd, fc.array(tie('value'), { maxLength: 4 }), fc.dictionary(fc.oneof(fc.string(), fc.constantFrom('__proto__', 'toString', 'hasOwnProperty')), tie('value'), { maxKeys: 4 })),
}));

describe('jsonCopy', () => {
  it('gives what printing and parsing the JSON gives, for any value', () => {
    fc.assert(
      fc.property(value, (input) => {
        expect(jsonCopy(input)).toStrictEqual(throughText(input));
      }),
      { numRuns: 2_000 },
    );
  });

  it('keeps a __proto__ key as an own member, as JSON.parse does, without changing the copy’s prototype', () => {
    const input = JSON.parse('{"__proto__":{"polluted":true},"a":1}') as Record<string, unknown>;
    const copy = jsonCopy(input) as Record<string, unknown>;
    expect(Object.getPrototypeOf(copy)).toBe(Object.prototype);
    expect(Object.keys(copy)).toEqual(['__proto__', 'a']);
    expect((copy as { polluted?: boolean }).polluted).toBeUndefined();
  });

  it('shares nothing with its source: a change to either leaves the other as it was', () => {
    const input = { a: [1, { b: 2 }], c: { d: 'e' } };
    const copy = jsonCopy(input) as typeof input;
    (copy.a[1] as { b: number }).b = 3;
    copy.c.d = 'changed';
    expect(input).toEqual({ a: [1, { b: 2 }], c: { d: 'e' } });
  });
});
