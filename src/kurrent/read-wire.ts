/**
 * A read answer carrying one event (`ReadResp { event: ReadEvent { event: RecordedEvent, commit_position } }`),
 * encoded straight to protobuf's wire format. Reads of `$all` and of streams send one such message per event; built
 * through google-protobuf's message objects, each cost more than the page of the log it came from (objects, a map, a
 * writer, then the copy into a Buffer). The bytes are the ones the generated `serializeBinary` writes for the same
 * message (field numbers from the client's `streams.proto`, zero values left out as proto3 does):
 * `test/kurrent/read-wire.unit.test.ts` holds both encodings to decoding alike.
 *
 *   ReadResp        1 event: ReadEvent
 *   ReadEvent       1 event: RecordedEvent, 3 commit_position (uint64)
 *   RecordedEvent   1 id: UUID, 2 stream_identifier: { 3 stream_name (bytes) }, 3 stream_revision, 4 prepare_position,
 *                   5 commit_position (uint64), 6 metadata (map<string, string>: entries { 1 key, 2 value }),
 *                   7 custom_metadata (bytes), 8 data (bytes)
 *   UUID            1 structured: { 1 most_significant_bits, 2 least_significant_bits (int64) }, 2 string
 */
import type { RecordFields } from './event-mapping.js';

/** A read answer already encoded: the Read call's serializer sends its bytes as they are. */
export class EncodedReadResp {
  constructor(readonly bytes: Buffer) {}
}

const lengthDelimited = 2;
const varintType = 0;

function tag(field: number, wireType: number): number {
  return (field << 3) | wireType;
}

/** A growable byte writer for the few shapes this message needs. */
class WireWriter {
  #buffer: Buffer;
  #length = 0;

  constructor(capacity: number) {
    this.#buffer = Buffer.allocUnsafe(capacity);
  }

  #reserve(bytes: number): void {
    if (this.#length + bytes <= this.#buffer.length) return;
    const grown = Buffer.allocUnsafe(Math.max(this.#buffer.length * 2, this.#length + bytes));
    this.#buffer.copy(grown, 0, 0, this.#length);
    this.#buffer = grown;
  }

  /** An unsigned integer below 2^53 as a varint. */
  varint(value: number): void {
    this.#reserve(10);
    let rest = value;
    while (rest >= 0x80) {
      this.#buffer[this.#length++] = (rest % 0x80) | 0x80;
      rest = Math.floor(rest / 0x80);
    }
    this.#buffer[this.#length++] = rest;
  }

  /** A signed 64-bit integer as a varint (two's complement: ten bytes when negative). */
  int64(value: bigint): void {
    this.#reserve(10);
    let rest = BigInt.asUintN(64, value);
    while (rest >= 0x80n) {
      this.#buffer[this.#length++] = Number(rest & 0x7fn) | 0x80;
      rest >>= 7n;
    }
    this.#buffer[this.#length++] = Number(rest);
  }

  bytes(field: number, value: Buffer): void {
    this.varint(tag(field, lengthDelimited));
    this.varint(value.length);
    this.#reserve(value.length);
    value.copy(this.#buffer, this.#length);
    this.#length += value.length;
  }

  string(field: number, value: string): void {
    const length = Buffer.byteLength(value, 'utf8');
    this.varint(tag(field, lengthDelimited));
    this.varint(length);
    this.#reserve(length);
    this.#buffer.write(value, this.#length, 'utf8');
    this.#length += length;
  }

  /** A uint64 field, left out when zero (proto3). */
  uint64(field: number, value: number): void {
    if (value === 0) return;
    this.varint(tag(field, varintType));
    this.varint(value);
  }

  int64Field(field: number, value: bigint): void {
    if (value === 0n) return;
    this.varint(tag(field, varintType));
    this.int64(value);
  }

  /** A nested message, written by `write` into a writer of its own. */
  message(field: number, write: (inner: WireWriter) => void, capacity = 64): void {
    const inner = new WireWriter(capacity);
    write(inner);
    this.bytes(field, inner.result());
  }

  result(): Buffer {
    return this.#buffer.subarray(0, this.#length);
  }
}

function writeUuid(writer: WireWriter, id: string, structured: boolean): void {
  if (!structured) {
    writer.string(2, id);
    return;
  }
  const digits = id.replace(/-/g, '');
  writer.message(1, (bits) => {
    bits.int64Field(1, BigInt.asIntN(64, BigInt(`0x${digits.slice(0, 16)}`)));
    bits.int64Field(2, BigInt.asIntN(64, BigInt(`0x${digits.slice(16)}`)));
  });
}

function writeRecord(writer: WireWriter, fields: RecordFields, structuredIds: boolean): void {
  writer.message(1, (uuid) => writeUuid(uuid, fields.id, structuredIds));
  writer.message(2, (identifier) => {
    if (fields.streamName.length > 0) identifier.bytes(3, fields.streamName);
  });
  writer.uint64(3, fields.revision);
  writer.uint64(4, fields.position);
  writer.uint64(5, fields.position);
  for (const [key, value] of fields.metadata) {
    writer.message(6, (entry) => {
      entry.string(1, key);
      entry.string(2, value);
    });
  }
  if (fields.customMetadata.length > 0) writer.bytes(7, fields.customMetadata);
  if (fields.data.length > 0) writer.bytes(8, fields.data);
}

/** The read answer for one event, as `readEventMessage` builds it, encoded. */
export function encodedReadEvent(fields: RecordFields, structuredIds: boolean): EncodedReadResp {
  const size = 160 + fields.streamName.length + fields.customMetadata.length + fields.data.length;
  const record = new WireWriter(size);
  writeRecord(record, fields, structuredIds);
  const read = new WireWriter(size + 16);
  read.bytes(1, record.result());
  // The position oneof's commit_position is written whatever its value, as a set oneof member is.
  read.varint(tag(3, varintType));
  read.varint(fields.position);
  const answer = new WireWriter(size + 24);
  answer.bytes(1, read.result());
  return new EncodedReadResp(answer.result());
}
