import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { streamNameSchema } from '../../events/index.js';
import { bytesOf, storedBytes } from '../../src/kurrent/event-mapping.js';
import { kurrentStreamName, ledgerStreamName, metastreamOf } from '../../src/kurrent/stream-names.js';

const name = (text: string) => Buffer.from(text, 'utf8');

describe('KurrentDB stream names in the ledger', () => {
  it('keeps the names the ledger can take, and maps the others to kdb: with @XX for every other byte', () => {
    expect(ledgerStreamName(name('orders-17'))).toBe('orders-17');
    expect(ledgerStreamName(name('pipeline test'))).toBe('kdb:pipeline@20test');
    expect(ledgerStreamName(name('$$orders'))).toBe('kdb:@24@24orders');
    expect(ledgerStreamName(name('a@b'))).toBe('a@b');
    // A name that looks escaped is escaped itself, so two names never share a stored one.
    expect(ledgerStreamName(name('kdb:x'))).toBe('kdb:kdb:x');
    expect(ledgerStreamName(name('_leading'))).toBe('kdb:_leading');
    // Fleet streams keep their names, whatever they hold (the ledger refuses one it cannot take).
    expect(ledgerStreamName(name('node-a b'))).toBe('node-a b');
  });

  it('refuses an empty name and one too long once stored', () => {
    expect(() => ledgerStreamName(Buffer.alloc(0))).toThrow(/empty/);
    expect(() => ledgerStreamName(name(' '.repeat(70)))).toThrow(/too long/);
  });

  it('gives every application stream name back byte for byte, to a stored name the ledger takes, one per name', () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 1, maxLength: 60 }), fc.uint8Array({ minLength: 1, maxLength: 60 }), (a, b) => {
        const text = Buffer.from(a).toString('utf8');
        fc.pre(!/^(node|rack|alarm|polls|rollout|fwstep|capacity|provision|saga|lease|ebom|projection|witness)-/.test(text));
        const stored = ledgerStreamName(a);
        expect(streamNameSchema.safeParse(stored).success).toBe(true);
        expect(kurrentStreamName(stored).equals(Buffer.from(a))).toBe(true);
        if (!Buffer.from(a).equals(Buffer.from(b)) && !/^(node|rack|alarm|polls|rollout|fwstep|capacity|provision|saga|lease|ebom|projection|witness)-/.test(Buffer.from(b).toString('utf8'))) {
          expect(ledgerStreamName(b)).not.toBe(stored);
        }
      }),
    );
  });

  it('knows a metastream by its $$', () => {
    expect(metastreamOf(name('$$orders'))?.toString()).toBe('orders');
    expect(metastreamOf(name('$orders'))).toBeNull();
    expect(metastreamOf(name('$$'))).toBeNull();
  });
});

describe('bytes as the log keeps them', () => {
  it('keeps UTF-8 without NUL as text, anything else as base64, and gives the same bytes back', () => {
    expect(storedBytes(name('{ "a": 1 }'))).toEqual({ text: '{ "a": 1 }' });
    expect(storedBytes(Buffer.from([0x61, 0x00]))).toEqual({ base64: 'YQA=' });
    expect(storedBytes(Buffer.from([0xff]))).toEqual({ base64: '/w==' });
    fc.assert(fc.property(fc.uint8Array({ maxLength: 200 }), (bytes) => bytesOf(storedBytes(bytes)).equals(Buffer.from(bytes))));
  });
});
