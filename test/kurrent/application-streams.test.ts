/**
 * Application streams through the KurrentDB face: a KurrentDB client's own streams beside the fleet's. Any event type
 * the catalogue does not define, JSON or binary, any metadata, kept byte for byte as `ApplicationEvent`s (in the hash
 * chain and the Merkle tree like every event), stream names the ledger cannot take mapped and given back as sent;
 * stream metadata, soft deletes and tombstones; deadlines; and the one policy still deciding who does what.
 */
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  AccessDeniedError,
  BACKWARDS,
  DeadlineExceededError,
  END,
  StreamDeletedError,
  StreamNotFoundError,
  WrongExpectedVersionError,
  binaryEvent,
  jsonEvent,
  type EventStoreDBClient,
  type ResolvedEvent,
} from '@eventstore/db-client';
import { inclusionProof, MerkleFollower } from '../../replay/audit/index.js';
import { verifyInclusion } from '../../replay/merkle/rfc9162.js';
import { buildApi, type ZodApp } from '../../src/api/index.js';
import { bearer, tokenTable } from '../api/support/api-harness.js';
import { openKurrentHarness, openssl, principals, registration, tokens, type KurrentHarness } from './support/kurrent-harness.js';

async function collect(stream: AsyncIterable<ResolvedEvent>): Promise<ResolvedEvent[]> {
  const events: ResolvedEvent[] = [];
  for await (const resolved of stream) events.push(resolved);
  return events;
}

describe.skipIf(!openssl.runnable)(openssl.title('application streams through the KurrentDB face'), () => {
  let h: KurrentHarness;
  let admin: EventStoreDBClient;

  beforeAll(async () => {
    h = await openKurrentHarness();
    admin = h.client('admin');
  });
  afterAll(async () => h?.close());

  it('keeps any type, JSON or binary, and any metadata byte for byte, under the name the client gave', async () => {
    const stream = 'orders (eu) #17';
    // JSON as the client wrote it: spacing, key order and an integer past 2^53 survive (the ledger never parses it).
    const json = Buffer.from('{ "z": 1,  "a": 12345678901234567890123 }', 'utf8');
    const binary = Buffer.from([0, 1, 2, 0xff, 0xfe, 0x80, 0]);
    // Metadata the client cannot parse as JSON comes back as bytes, as they were.
    const metadata = Buffer.from([0x80, 0x81, 0x00, 0x7b]);
    const appended = await admin.appendToStream(stream, [
      binaryEvent({ type: 'OrderPlaced', data: json, metadata }),
      binaryEvent({ type: '$custom binary', data: binary }),
      jsonEvent({ type: 'OrderShipped', data: { orderId: 17, note: 'naïve ✓' }, metadata: { by: 'warehouse' } }),
    ]);
    expect(appended.nextExpectedRevision).toBe(2n);

    const read = await collect(admin.readStream(stream));
    expect(read.map((resolved) => [resolved.event!.streamId, resolved.event!.type, resolved.event!.revision])).toEqual([
      [stream, 'OrderPlaced', 0n],
      [stream, '$custom binary', 1n],
      [stream, 'OrderShipped', 2n],
    ]);
    const [placed, custom, shipped] = read.map((resolved) => resolved.event!);
    expect(Buffer.from(placed!.data as Uint8Array).equals(json)).toBe(true);
    expect(Buffer.from(placed!.metadata as Uint8Array).equals(metadata)).toBe(true);
    expect(Buffer.from(custom!.data as Uint8Array).equals(binary)).toBe(true);
    expect(custom!.metadata).toBeUndefined();
    expect(shipped!.isJson).toBe(true);
    expect(shipped!.data).toEqual({ orderId: 17, note: 'naïve ✓' });
    expect(shipped!.metadata).toEqual({ by: 'warehouse' });

    // In the log: ApplicationEvents of the mapped stream, recorded as the admin, chained like every event.
    const stored = await h.store.readStream('kdb:orders@20@28eu@29@20@2317');
    expect(stored.map((event) => [event.type, (event.data as { type: string }).type])).toEqual([
      ['ApplicationEvent', 'OrderPlaced'],
      ['ApplicationEvent', '$custom binary'],
      ['ApplicationEvent', 'OrderShipped'],
    ]);
    expect(stored[0]!.actor).toEqual({ kind: 'operator', id: principals.admin, role: 'admin' });
    expect((await h.store.verifyChain()).ok).toBe(true);
  });

  it('puts application events in the Merkle tree: an inclusion proof of one verifies against the root', async () => {
    const { position } = await admin.appendToStream('proof-me', jsonEvent({ type: 'Proven', data: { n: 1 } }));
    const head = (await h.store.head()).position;
    const follower = new MerkleFollower({ connectionString: h.store.connectionString, intervalMs: 20 });
    follower.start();
    try {
      const deadline = Date.now() + 20_000;
      while (follower.status.size < head && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
      const [event] = await h.store.readAll({ fromPosition: Number(position!.commit), toPosition: Number(position!.commit) });
      const proof = await inclusionProof(h.store.pool, event!.position, head);
      const leaf = createHash('sha256').update(Buffer.from([0])).update(Buffer.from(event!.hash, 'hex')).digest();
      expect(leaf.equals(proof.leafHash)).toBe(true);
      expect(verifyInclusion(proof.leafHash, proof.leafIndex, proof.treeSize, proof.proof, proof.root)).toBe(true);
    } finally {
      await follower.stop();
    }
  });

  it('keeps the fleet streams to the catalogue, and the catalogue\'s types to the fleet streams', async () => {
    const before = (await h.store.head()).position;
    // An unknown type to a fleet stream is still a bad request; a fleet type to an application stream is still judged
    // as the fleet's (an intent belongs in the stream its payload derives).
    await expect(admin.appendToStream('node-dc1-r01-n01', jsonEvent({ type: 'test', data: {} }))).rejects.toThrow(/unknown event type 'test'/);
    await expect(admin.appendToStream('orders', jsonEvent({ type: 'NodeCordoned', data: { nodeId: 'dc1-r01-n01', reason: 'x' } }), { credentials: { username: principals.admin, password: tokens.admin } })).rejects.toThrow(
      /API_STREAM_MISMATCH/,
    );
    // The server's `$` streams are nobody's.
    await expect(admin.appendToStream('$settings', jsonEvent({ type: 'x', data: {} }))).rejects.toBeInstanceOf(AccessDeniedError);
    expect((await h.store.head()).position).toBe(before);
    // A valid fleet event still goes where it always went.
    await admin.appendToStream('node-dc1-r01-n01', jsonEvent({ type: 'NodeRegistered', data: registration('dc1-r01-n01') }));
  });

  it('lets operators and admins write application streams, nobody else; analysts read envelopes, without data or metadata', async () => {
    await h.client('operator').appendToStream('ops-notes', jsonEvent({ type: 'Note', data: { text: 'hi' }, metadata: { who: 'ops' } }));
    await expect(h.client('agent').appendToStream('ops-notes', jsonEvent({ type: 'Note', data: {} }))).rejects.toBeInstanceOf(AccessDeniedError);
    await expect(h.client('analyst').appendToStream('ops-notes', jsonEvent({ type: 'Note', data: {} }))).rejects.toBeInstanceOf(AccessDeniedError);
    const [envelope] = await collect(h.client('analyst').readStream('ops-notes'));
    expect(envelope!.event!.type).toBe('Note');
    expect(Buffer.from(envelope!.event!.data as Uint8Array).length + Buffer.from((envelope!.event!.metadata as Uint8Array | undefined) ?? []).length).toBe(0);
  });

  it('refuses an ApplicationEvent through the HTTP API: only the face keeps application streams\' semantics', async () => {
    const api: ZodApp = await buildApi({ store: h.store, tokens: tokenTable });
    try {
      const response = await api.inject({
        method: 'POST',
        url: '/v1/streams/orders-http',
        headers: bearer('admin'),
        payload: { events: [{ type: 'ApplicationEvent', data: { type: 'X', contentType: 'application/json', data: { text: '{}' }, metadata: { text: '' } } }] },
      });
      expect(response.statusCode).toBe(403);
      expect(response.json()).toMatchObject({ error: { code: 'API_FORBIDDEN' } });
    } finally {
      await api.close();
    }
  });

  it('honours a deadline: an append past it is answered DeadlineExceeded and nothing is stored', async () => {
    const before = (await h.store.head()).position;
    const many = Array.from({ length: 20_000 }, (_, index) => jsonEvent({ type: 'Tick', data: { index } }));
    await expect(admin.appendToStream('ticks', many, { deadline: 1 })).rejects.toBeInstanceOf(DeadlineExceededError);
    await expect(admin.appendToStream('ticks', many.slice(0, 100), { deadline: 1, credentials: { username: principals.admin, password: tokens.admin } })).rejects.toBeInstanceOf(DeadlineExceededError);
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect((await h.store.head()).position).toBe(before);
  });

  it('reads a stream as its metadata says ($maxCount, $tb), and a soft delete hides it without removing anything', async () => {
    await admin.setStreamMetadata('capped', { maxCount: 2 });
    await admin.appendToStream('capped', Array.from({ length: 5 }, (_, index) => jsonEvent({ type: 'N', data: { index } })));
    expect((await collect(admin.readStream('capped'))).map((resolved) => (resolved.event!.data as { index: number }).index)).toEqual([3, 4]);
    expect((await admin.getStreamMetadata('capped')).metadata).toEqual({ maxCount: 2 });

    await admin.appendToStream('soft', Array.from({ length: 3 }, (_, index) => jsonEvent({ type: 'N', data: { index } })));
    await expect(admin.deleteStream('soft', { expectedRevision: 1n })).rejects.toBeInstanceOf(WrongExpectedVersionError);
    await admin.deleteStream('soft', { expectedRevision: 2n });
    await expect(collect(admin.readStream('soft'))).rejects.toBeInstanceOf(StreamNotFoundError);
    // The events are still in the log (and in $all); an append continues the stream, visible again.
    expect(await h.store.readStream('soft')).toHaveLength(3);
    await admin.appendToStream('soft', jsonEvent({ type: 'N', data: { index: 3 } }));
    expect((await collect(admin.readStream('soft'))).map((resolved) => resolved.event!.revision)).toEqual([3n]);
  });

  it('tombstones a stream: reads, appends (Append and BatchAppend) and metadata answer StreamDeleted; its events stay in the log', async () => {
    await admin.appendToStream('gone', jsonEvent({ type: 'N', data: {} }));
    await admin.tombstoneStream('gone');
    await expect(collect(admin.readStream('gone'))).rejects.toBeInstanceOf(StreamDeletedError);
    await expect(admin.appendToStream('gone', jsonEvent({ type: 'N', data: {} }))).rejects.toBeInstanceOf(StreamDeletedError);
    await expect(admin.appendToStream('gone', jsonEvent({ type: 'N', data: {} }), { credentials: { username: principals.admin, password: tokens.admin } })).rejects.toBeInstanceOf(StreamDeletedError);
    await expect(admin.setStreamMetadata('gone', { maxAge: 10 })).rejects.toBeInstanceOf(StreamDeletedError);
    await expect(admin.tombstoneStream('gone')).rejects.toBeInstanceOf(StreamDeletedError);
    const stored = await h.store.readStream('gone');
    expect(stored.map((event) => (event.data as { type: string }).type)).toEqual(['N', '$streamDeleted']);
    const [last] = await collect(admin.readAll({ direction: BACKWARDS, fromPosition: END, maxCount: 1 }));
    expect(last!.event!.type).toBe('$streamDeleted');
  });

  it('refuses metadata, deletes and tombstones on fleet streams (the log of the fleet is not the client\'s to hide)', async () => {
    await expect(admin.setStreamMetadata('node-dc1-r01-n01', { maxCount: 1 })).rejects.toBeInstanceOf(AccessDeniedError);
    await expect(admin.deleteStream('node-dc1-r01-n01')).rejects.toBeInstanceOf(AccessDeniedError);
    await expect(admin.tombstoneStream('node-dc1-r01-n01')).rejects.toBeInstanceOf(AccessDeniedError);
  });
});
