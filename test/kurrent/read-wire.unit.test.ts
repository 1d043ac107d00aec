/**
 * The Read call's answers for events are encoded by hand (`src/kurrent/read-wire.ts`), not through google-protobuf's
 * message objects: the client must decode them exactly as it decodes what the generated code writes.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { readEventMessageOf, type RecordFields } from '../../src/kurrent/event-mapping.js';
import { streams } from '../../src/kurrent/protocol.js';
import { encodedReadEvent } from '../../src/kurrent/read-wire.js';

const bytes = (max: number) => fc.uint8Array({ maxLength: max }).map((array) => Buffer.from(array));

const fields: fc.Arbitrary<RecordFields> = fc.record({
  id: fc.uuid(),
  streamName: fc.oneof(bytes(40), fc.string({ unit: 'grapheme', maxLength: 30 }).map((text) => Buffer.from(text, 'utf8'))),
  revision: fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 2 ** 31 }), fc.maxSafeNat()),
  position: fc.oneof(fc.integer({ min: 1, max: 200 }), fc.integer({ min: 1, max: 2 ** 35 }), fc.maxSafeNat().filter((n) => n > 0)),
  metadata: fc.array(fc.tuple(fc.constantFrom('created', 'type', 'content-type'), fc.string({ unit: 'grapheme', maxLength: 40 })), { maxLength: 3 }).map((entries) => [...new Map(entries)]),
  customMetadata: bytes(300),
  data: fc.oneof(bytes(300), bytes(70_000)),
});

/** What a client reads from the bytes: the decoded message, as plain data. */
const decoded = (encoded: Uint8Array) => streams.ReadResp.deserializeBinary(encoded).toObject();

describe('the Read call encodes its event answers by hand', () => {
  it('decodes to what google-protobuf encodes, for any event fields, with string and structured ids', () => {
    fc.assert(
      fc.property(fields, fc.boolean(), (record, structured) => {
        const ours = encodedReadEvent(record, structured).bytes;
        const theirs = readEventMessageOf(record, structured).serializeBinary();
        expect(decoded(ours)).toEqual(decoded(theirs));
      }),
      { numRuns: 400 },
    );
  });

  it('is byte for byte what google-protobuf writes when the metadata is in its order', () => {
    const record: RecordFields = {
      id: '0192f3a4-5b6c-7d8e-9f00-112233445566',
      streamName: Buffer.from('node-dc1-r01-n01'),
      revision: 41,
      position: 5_000_000_123,
      metadata: [['content-type', 'application/json'], ['created', '17966888911260000'], ['type', 'NodeCordoned']],
      customMetadata: Buffer.from('{"actor":{"kind":"operator","id":"ops"}}'),
      data: Buffer.from('{"nodeId":"dc1-r01-n01","reason":"fan"}'),
    };
    for (const structured of [false, true]) expect(Buffer.from(encodedReadEvent(record, structured).bytes).equals(Buffer.from(readEventMessageOf(record, structured).serializeBinary()))).toBe(true);
  });
});
