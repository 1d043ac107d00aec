import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { uuidPattern, uuidV7 } from '../../events/index.js';

describe('event ids (UUID version 7)', () => {
  it('for any clock and random bytes, the id is the 48-bit milliseconds then the random bytes, with the version 7 and variant bits set', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 2 ** 48 - 1 }), fc.uint8Array({ minLength: 16, maxLength: 16 }), (ms, random) => {
        const id = uuidV7(ms, (bytes) => {
          bytes.set(random);
          return bytes;
        });
        expect(id).toMatch(uuidPattern);
        const hex = id.replaceAll('-', '');
        expect(parseInt(hex.slice(0, 12), 16)).toBe(ms);
        expect(hex[12]).toBe('7');
        expect(['8', '9', 'a', 'b']).toContain(hex[16]);
        const expected = Buffer.from(random);
        expected[6] = (expected[6]! & 0x0f) | 0x70;
        expected[8] = (expected[8]! & 0x3f) | 0x80;
        expect(hex.slice(12)).toBe(expected.subarray(6).toString('hex'));
      }),
      { numRuns: 300 },
    );
  });

  it('ids made later sort after ids made earlier (their text order is their time order)', () => {
    const zeros = (bytes: Uint8Array) => bytes;
    expect(uuidV7(1_700_000_000_001, zeros) > uuidV7(1_700_000_000_000, (b) => b.fill(0xff))).toBe(true);
  });
});
