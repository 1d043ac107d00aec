/**
 * The hash chain is computed over canonical JSON, while the row stores JSON.stringify's text. Whatever a caller
 * passes, the two must say the same thing, or a verifier reading the stored row finds a hash that does not match.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineEvent, EventCatalogue } from '../../events/index.js';
import { createHash } from 'node:crypto';
import { canonicalJson } from '../../src/ledger/index.js';
import { chainHash, chainHashBytes, unstorable, unstorableString } from '../../src/ledger/canonical-json.js';
import { canonicalEvent } from '../../src/ledger/event-row.js';
import { chainText, contentDigest, prepareAppend } from '../../src/ledger/prepare-append.js';

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

  it('for any place in a value, what cannot be stored there (NUL, an unpaired surrogate, NaN, an invalid Date) is refused naming that place', () => {
    fc.assert(
      fc.property(
        fc.array(fc.oneof(fc.string({ minLength: 1, maxLength: 6 }).filter((k) => !k.includes('.') && !/[\u0000\ud800-\udfff]/.test(k)), fc.nat({ max: 3 })), { maxLength: 5 }),
        fc.constantFrom<unknown>('bad\u0000', '\ud800', Number.NaN, new Date(Number.NaN)),
        (path, bad) => {
          let value: unknown = bad;
          for (const key of [...path].reverse()) {
            if (typeof key === 'number') {
              const items: unknown[] = Array.from({ length: key + 2 }, (_, i) => i);
              items[key] = value;
              value = items;
            } else {
              value = { '~after': 1, [key]: value, ' before': 'ok' };
            }
          }
          expect(() => canonicalJson(value, 'data')).toThrow(expect.objectContaining({ path: ['data', ...path].join('.') }));
        },
      ),
      { numRuns: 300 },
    );
    expect(() => canonicalJson({ ok: 1, ['k\u0000']: 2 }, 'data')).toThrow(expect.objectContaining({ path: 'data' }));
    expect(() => canonicalJson('\u0000')).toThrow(expect.objectContaining({ path: '(root)' }));
  });

  it('a hole in an array is null, as stored; a URL is its href; an invalid Date is refused with its path', () => {
    expect(canonicalJson({ a: [1, , 3] })).toBe('{"a":[1,null,3]}');
    expect(canonicalJson({ u: new URL('https://bmc.example/redfish/v1') })).toBe('{"u":"https://bmc.example/redfish/v1"}');
    expect(() => canonicalJson({ at: new Date(Number.NaN) })).toThrow(/invalid Date/);
  });
});

describe('the append path hashes what the reference functions define', () => {
  const catalogue = new EventCatalogue([defineEvent({ family: 'system', type: 'Anything', description: 'any value', schema: z.object({ value: z.unknown() }) })]);
  const actor = fc.oneof(
    fc.record({ kind: fc.constant('operator' as const), id: fc.string({ minLength: 1, maxLength: 20 }).filter((s) => s.trim().length > 0 && !s.includes('\u0000')) }),
    fc.record({ kind: fc.constant('system' as const), id: fc.constantFrom('poller', 'liveness') }),
  );
  const optionalId = fc.option(fc.string({ minLength: 1, maxLength: 30 }).filter((s) => !/[\u0000\ud800-\udfff]/.test(s)), { nil: undefined });

  it('for any event, the digest and the chain text written out from prepared parts equal contentDigest and canonicalEvent (same members, same order)', () => {
    fc.assert(
      fc.property(
        awkwardValue.filter((value) => { try { canonicalJson(value); return true; } catch { return false; } }),
        actor,
        fc.option(fc.date({ min: new Date('1971-01-01'), max: new Date('9999-01-01'), noInvalidDate: true }), { nil: undefined }),
        optionalId,
        optionalId,
        fc.integer({ min: 1, max: 2 ** 40 }),
        fc.integer({ min: 1, max: 2 ** 30 }),
        (value, who, observedAt, correlationId, causationId, position, streamVersion) => {
          const [event] = prepareAppend('node-n1', [{ type: 'Anything', data: { value }, actor: who, observedAt, correlationId, causationId }], catalogue, () => Date.now());
          const { canonicalData, canonicalActor, contentDigest: digest, eventId, ...content } = event!;
          expect(digest).toBe(contentDigest('node-n1', content));
          expect(canonicalData).toBe(canonicalJson(content.data));
          expect(canonicalActor).toBe(canonicalJson(content.actor));
          const recordedAt = new Date(1_796_000_000_000 + position);
          const reference = canonicalEvent({ ...content, eventId, position, stream: 'node-n1', streamVersion, recordedAt });
          const observedAtJson = content.observedAt === null ? 'null' : JSON.stringify(content.observedAt.toISOString());
          const assembled = chainText(event!, position, JSON.stringify('node-n1'), streamVersion, JSON.stringify(recordedAt.toISOString()), observedAtJson);
          expect(assembled).toBe(reference);
        },
      ),
    );
  });
});

describe('the chain hash the append path computes', () => {
  const reference = (prev: Buffer, text: string) => createHash('sha256').update(prev).update(text, 'utf8').digest();

  it('hashes the same bytes as chainHash for any text: astral and non-ASCII characters, and texts past its reused buffer', () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 32, maxLength: 32 }), fc.string({ unit: 'binary', maxLength: 300 }), fc.nat({ max: 3 }), (bytes, piece, repeat) => {
        const prev = Buffer.from(bytes);
        const text = piece.repeat(10 ** repeat);
        const hash = chainHashBytes(prev, text);
        expect(hash.equals(reference(prev, text))).toBe(true);
        expect(hash.toString('hex')).toBe(chainHash(prev.toString('hex'), text));
      }),
    );
    // Larger than the 1 MiB buffer (3 bytes counted per character), then small again: the buffer is not left short.
    const prev = createHash('sha256').update('genesis').digest();
    for (const text of ['\u20ac'.repeat(400_000), 'x'.repeat(70_000), '\u{1F600}'.repeat(200_000), '{"a":1}']) {
      expect(chainHashBytes(prev, text).equals(reference(prev, text))).toBe(true);
    }
  });
});

describe('the check for what jsonb cannot store', () => {
  it('answers as the regular expression that defines it, for any string: NUL, lone high or low surrogates, pairs, anywhere', () => {
    const piece = fc.oneof(fc.string({ unit: 'binary', maxLength: 8 }), fc.constantFrom('\u0000', '\ud800', '\udbff', '\udc00', '\udfff', '\ud83d\ude00', 'a'));
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 8 }), (pieces) => {
        const text = pieces.join('');
        expect(unstorable(text)).toBe(unstorableString.test(text));
      }),
      { numRuns: 2000 },
    );
  });
});
