/**
 * The check of a JSON body's bytes: it refuses exactly what a parser would rewrite (bytes that are not UTF-8,
 * integers beyond 2^53 − 1), names where, and lets everything else through as the same text.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { checkStrictJson, firstInvalidUtf8 } from '../../src/api/strict-json.js';

const bytes = (...parts: Array<string | number[]>): Uint8Array => Buffer.concat(parts.map((part) => (typeof part === 'string' ? Buffer.from(part) : Buffer.from(part))));

describe('strict JSON bytes', () => {
  it('any JSON value with safe numbers and well-formed text passes unchanged', () => {
    const safe = fc.jsonValue().filter((value) => !JSON.stringify(value).match(/\d[eE]|\d{16}/) || noUnsafeNumber(value));
    fc.assert(
      fc.property(safe, (value) => {
        const text = JSON.stringify(value);
        expect(checkStrictJson(Buffer.from(text))).toEqual({ ok: true, text });
      }),
      { numRuns: 300 },
    );
  });

  it('the UTF-8 check agrees with a fatal TextDecoder on every byte string', () => {
    const decoder = new TextDecoder('utf-8', { fatal: true });
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 12 }), (sample) => {
        let valid = true;
        try {
          decoder.decode(sample);
        } catch {
          valid = false;
        }
        expect(firstInvalidUtf8(sample, 0, sample.length) < 0).toBe(valid);
      }),
      { numRuns: 3000 },
    );
  });

  it('bytes that are not UTF-8 are named by the path of the string holding them, or the member name, or the offset', () => {
    expect(checkStrictJson(bytes('{"a":[1,{"b":"x', [0xff], '"}]}'))).toEqual({ ok: false, problem: { kind: 'invalid-utf8', field: 'body.a.1.b', offset: 15 } });
    expect(checkStrictJson(bytes('{"a":{"k', [0xc3], '":1}}'))).toEqual({ ok: false, problem: { kind: 'invalid-utf8', field: 'body.a', offset: 8 } });
    expect(checkStrictJson(bytes('[1,', [0xfe], ']'))).toEqual({ ok: false, problem: { kind: 'invalid-utf8', field: 'body', offset: 3 } });
    expect(checkStrictJson(bytes('{"a\\"b":"', [0x80], '"}'), 'events[0].data')).toEqual({ ok: false, problem: { kind: 'invalid-utf8', field: 'events[0].data.a"b', offset: 9 } });
  });

  it('an integer literal beyond 2^53 − 1 is refused naming its field; 2^53 − 1 and fractions pass', () => {
    expect(checkStrictJson(bytes('{"n":[0,9007199254740992]}'))).toMatchObject({ ok: false, problem: { kind: 'unsafe-integer', field: 'body.n.1', literal: '9007199254740992' } });
    expect(checkStrictJson(bytes('{"n":-1E300}'))).toMatchObject({ ok: false, problem: { kind: 'unsafe-integer', field: 'body.n' } });
    expect(checkStrictJson(bytes('{"n":9007199254740991,"m":-9007199254740991,"f":1.5e-7,"g":0.1234567890123456789,"s":"12345678901234567890"}'))).toMatchObject({ ok: true });
  });
});

function noUnsafeNumber(value: unknown): boolean {
  if (typeof value === 'number') return !Number.isInteger(value) || Number.isSafeInteger(value);
  if (Array.isArray(value)) return value.every(noUnsafeNumber);
  if (value && typeof value === 'object') return Object.values(value).every(noUnsafeNumber);
  return true;
}
