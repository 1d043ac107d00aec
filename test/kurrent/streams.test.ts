import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKWARDS, END, FORWARDS, START, jsonEvent, type AppendToStreamOptions, type EventStoreDBClient, type ResolvedEvent } from '@eventstore/db-client';
import { openKurrentHarness, principals, registration, tokens, openssl, type KurrentHarness } from './support/kurrent-harness.js';

async function collect(stream: AsyncIterable<ResolvedEvent>): Promise<ResolvedEvent[]> {
  const events: ResolvedEvent[] = [];
  for await (const resolved of stream) events.push(resolved);
  return events;
}

const cordon = (nodeId: string, reason: string) => jsonEvent({ type: 'NodeCordoned', data: { nodeId, reason } });

describe.skipIf(!openssl.runnable)(openssl.title('the KurrentDB face, driven by @eventstore/db-client'), () => {
  let h: KurrentHarness;
  let operator: EventStoreDBClient;
  let analyst: EventStoreDBClient;
  const roleOf = new Map<EventStoreDBClient, 'operator' | 'analyst'>();
  const credentialsOf = (client: EventStoreDBClient) => {
    const role = roleOf.get(client)!;
    return { username: principals[role], password: tokens[role] };
  };

  beforeAll(async () => {
    h = await openKurrentHarness();
    operator = h.client('operator');
    analyst = h.client('analyst');
    roleOf.set(operator, 'operator').set(analyst, 'analyst');
  });
  afterAll(async () => h?.close());

  describe.each([
    { path: 'Streams.BatchAppend', rack: 'dc1-r01' },
    { path: 'Streams.Append', rack: 'dc1-r02' },
  ] as const)('appends through $path', ({ path, rack }) => {
    // The 6.x client uses BatchAppend when ServerFeatures lists it, and Append when a call carries its own credentials.
    const append = (client: EventStoreDBClient, stream: string, events: Parameters<EventStoreDBClient['appendToStream']>[1], options: AppendToStreamOptions = {}) =>
      client.appendToStream(stream, events, path === 'Streams.Append' ? { ...options, credentials: credentialsOf(client) } : options);

    it('appends with each expected-revision form; revisions count from 0 like KurrentDB, positions are the ledger positions', async () => {
      const first = await append(operator, `node-${rack}-n01`, jsonEvent({ type: 'NodeRegistered', data: registration(`${rack}-n01`, rack.slice(4)) }), { expectedRevision: 'no_stream' });
      expect(first.success).toBe(true);
      expect(first.nextExpectedRevision).toBe(0n);
      const stored = await h.store.readStream(`node-${rack}-n01`);
      expect(first.position).toEqual({ commit: BigInt(stored[0]!.position), prepare: BigInt(stored[0]!.position) });
      expect((await append(operator, `node-${rack}-n01`, cordon(`${rack}-n01`, 'fan swap'), { expectedRevision: 0n })).nextExpectedRevision).toBe(1n);
      expect((await append(operator, `node-${rack}-n01`, cordon(`${rack}-n01`, 'again'), { expectedRevision: 'stream_exists' })).nextExpectedRevision).toBe(2n);
      expect((await append(operator, `node-${rack}-n01`, cordon(`${rack}-n01`, 'and again'), { expectedRevision: 'any' })).nextExpectedRevision).toBe(3n);
      expect((await h.store.readStream(`node-${rack}-n01`)).map((e) => e.streamVersion)).toEqual([1, 2, 3, 4]);
    });

    it('a wrong expected revision is the client\'s WrongExpectedVersionError with the actual revision, and stores nothing', async () => {
      const before = (await h.store.head()).position;
      await expect(append(operator, `node-${rack}-n01`, cordon(`${rack}-n01`, 'stale'), { expectedRevision: 1n })).rejects.toMatchObject({
        type: 'wrong-expected-version',
        streamName: `node-${rack}-n01`,
        expectedVersion: 1n,
        actualVersion: 3n,
      });
      await expect(append(operator, `node-${rack}-n01`, cordon(`${rack}-n01`, 'exists'), { expectedRevision: 'no_stream' })).rejects.toMatchObject({
        type: 'wrong-expected-version',
        expectedVersion: 'no_stream',
        actualVersion: 3n,
      });
      await expect(append(operator, `node-${rack}-n09`, cordon(`${rack}-n09`, 'absent'), { expectedRevision: 'stream_exists' })).rejects.toMatchObject({
        type: 'wrong-expected-version',
        expectedVersion: 'stream_exists',
        actualVersion: 'no_stream',
      });
      expect((await h.store.head()).position).toBe(before);
    });

    it('a bad payload is a typed error naming the field, and nothing of the append is stored', async () => {
      const before = (await h.store.head()).position;
      const events = [cordon(`${rack}-n03`, 'fine'), jsonEvent({ type: 'NodeCordoned', data: { nodeId: `${rack}-n03` } })];
      const refusal = await append(operator, `node-${rack}-n03`, events).catch((error: unknown) => error);
      expect(String((refusal as Error).message)).toMatch(/events\[1\]\.data\.reason: Invalid input/);
      if (path === 'Streams.Append') {
        // Append answers with the gRPC status and our trailers; BatchAppend with a google.rpc.Status the client reports by its message.
        expect(refusal).toMatchObject({ code: 3 });
        expect((refusal as { _raw: { metadata: { get(key: string): unknown[] } } })._raw.metadata.get('fleet-ledger-code')).toEqual(['LEDGER_INVALID_EVENT']);
      }
      await expect(append(operator, `node-${rack}-n03`, jsonEvent({ type: 'NoSuchEvent', data: {} }))).rejects.toThrow(/events\[0\]\.type: unknown event type 'NoSuchEvent'/);
      expect((await h.store.head()).position).toBe(before);
    });

    it('an analyst reads but its append is refused with AccessDeniedError; an operator may not append events of the system', async () => {
      expect((await collect(analyst.readStream(`node-${rack}-n01`, { maxCount: 1 }))).length).toBe(1);
      const before = (await h.store.head()).position;
      await expect(append(analyst, `node-${rack}-n04`, cordon(`${rack}-n04`, 'nope'))).rejects.toMatchObject({ type: 'access-denied' });
      const dark = jsonEvent({ type: 'NodeWentDark', data: { nodeId: `${rack}-n01`, lastContactAt: null, consecutiveMisses: 3, detectedAt: new Date().toISOString() } });
      await expect(append(operator, `node-${rack}-n01`, dark)).rejects.toMatchObject({ type: 'access-denied' });
      expect((await h.store.head()).position).toBe(before);
    });
  });

  it('reads a stream forwards and backwards, from a revision, with maxCount; a missing stream is StreamNotFoundError', async () => {
    // Payloads are the auditor's view (as over HTTP); an analyst reads the same events as envelopes (data null).
    const auditor = h.client('auditor');
    expect((await collect(analyst.readStream('node-dc1-r01-n01', { maxCount: 1 })))[0]!.event).toMatchObject({ type: 'NodeRegistered', data: null });
    const forwards = await collect(auditor.readStream('node-dc1-r01-n01', { direction: FORWARDS, fromRevision: START }));
    expect(forwards.map((r) => r.event!.revision)).toEqual([0n, 1n, 2n, 3n]);
    expect(forwards[0]!.event).toMatchObject({ type: 'NodeRegistered', streamId: 'node-dc1-r01-n01', isJson: true, data: registration('dc1-r01-n01') });
    const backwards = await collect(auditor.readStream('node-dc1-r01-n01', { direction: BACKWARDS, fromRevision: END, maxCount: 3 }));
    expect(backwards.map((r) => r.event!.revision)).toEqual([3n, 2n, 1n]);
    const fromRevision = await collect(auditor.readStream('node-dc1-r01-n01', { direction: FORWARDS, fromRevision: 2n, maxCount: 1 }));
    expect(fromRevision.map((r) => (r.event!.data as { reason: string }).reason)).toEqual(['again']);
    await expect(collect(analyst.readStream('node-nowhere'))).rejects.toMatchObject({ type: 'stream-not-found' });
  });

  it('an event\'s metadata carries the ledger envelope: the actor is the authenticated principal, with the hash chain', async () => {
    const [resolved] = await collect(analyst.readStream('node-dc1-r01-n01', { maxCount: 1 }));
    const [stored] = await h.store.readStream('node-dc1-r01-n01', { limit: 1 });
    expect(resolved!.event!.metadata).toEqual({
      actor: { kind: 'operator', id: 'alice', role: 'operator' },
      observedAt: null,
      recordedAt: stored!.recordedAt.toISOString(),
      correlationId: null,
      causationId: null,
      schemaVersion: 1,
      hash: stored!.hash,
      prevHash: stored!.prevHash,
    });
    expect(resolved!.event!.id).toBe(stored!.eventId);
    expect(resolved!.event!.created.getTime()).toBe(stored!.recordedAt.getTime());
  });

  it('correlation and causation ids come from the client\'s metadata; an actor in the metadata is refused, not recorded', async () => {
    const correlated = jsonEvent({ type: 'NodeCordoned', data: { nodeId: 'dc1-r01-n02', reason: 'x' }, metadata: { $correlationId: 'ticket-7', causationId: 'cause-1' } });
    await operator.appendToStream('node-dc1-r01-n02', correlated);
    const [stored] = await h.store.readStream('node-dc1-r01-n02');
    expect(stored).toMatchObject({ correlationId: 'ticket-7', causationId: 'cause-1', actor: { kind: 'operator', id: 'alice' } });
    const forged = jsonEvent({ type: 'NodeCordoned', data: { nodeId: 'dc1-r01-n02', reason: 'x' }, metadata: { actor: { kind: 'operator', id: 'mallory' } } });
    await expect(operator.appendToStream('node-dc1-r01-n02', forged)).rejects.toThrow(/events\[0\]\.metadata\.actor/);
  });

  it('reads $all forwards from a position (inclusive) and backwards from the end', async () => {
    const head = (await h.store.head()).position;
    const all = await collect(analyst.readAll({ fromPosition: { commit: 2n, prepare: 2n }, maxCount: 3 }));
    expect(all.map((r) => r.event!.position!.commit)).toEqual([2n, 3n, 4n]);
    expect(all.map((r) => r.commitPosition)).toEqual([2n, 3n, 4n]);
    const last = await collect(analyst.readAll({ fromPosition: END, direction: BACKWARDS, maxCount: 2 }));
    expect(last.map((r) => r.event!.position!.commit)).toEqual([BigInt(head), BigInt(head - 1)]);
    const everything = await collect(analyst.readAll({ fromPosition: START }));
    expect(everything).toHaveLength(head);
  });

  it('an agent appends only its GPU observations, only for the nodes its token names; agents may not read the log, operators read its envelopes', async () => {
    const seen = await collect(operator.readAll({ maxCount: 1 }));
    expect(seen).toHaveLength(1);
    expect(seen[0]!.event!.data).toBeNull();
    const agent = h.client('agent');
    const xid = (nodeId: string) => jsonEvent({ type: 'GpuXidObserved', data: { nodeId, source: 'agent', xid: 79, gpuIndex: 0, severity: 'critical', message: 'fell off the bus' } });
    await expect(agent.appendToStream('node-dc2-r01-n01', xid('dc2-r01-n01'))).rejects.toMatchObject({ type: 'access-denied' });
    await expect(agent.appendToStream('node-dc1-r01-n01', cordon('dc1-r01-n01', 'agents do not cordon'))).rejects.toMatchObject({ type: 'access-denied' });
    await expect(collect(agent.readStream('node-dc1-r01-n01'))).rejects.toMatchObject({ type: 'access-denied' });
  });

  it('an append over the size limit (4 MiB of data and metadata) is MaxAppendSizeExceededError through both paths, nothing stored', async () => {
    const before = (await h.store.head()).position;
    const big = (n: number) => cordon('dc1-r07-n01', `${n}`.padEnd(2.5 * 2 ** 20, '.'));
    await expect(operator.appendToStream('node-dc1-r07-n01', [big(1), big(2)])).rejects.toMatchObject({ type: 'maximum-append-size-exceeded', maxAppendSize: 4 * 2 ** 20 });
    await expect(operator.appendToStream('node-dc1-r07-n01', [big(1), big(2)], { credentials: credentialsOf(operator) })).rejects.toMatchObject({ type: 'maximum-append-size-exceeded', maxAppendSize: 4 * 2 ** 20 });
    expect((await h.store.head()).position).toBe(before);
  });

  it('readAll crosses page boundaries (pages are read ahead): forwards and backwards, from any position, with any count, each event once in log order', async () => {
    // More events than three of the face's pages (500 each), appended by many streams at once.
    const appends = Array.from({ length: 26 }, (_, n) => h.store.append(`node-dc4-r07-n${String(n).padStart(2, '0')}`, Array.from({ length: 60 }, (_, k) => ({ type: 'NodeCordoned', actor: { kind: 'operator', id: 'paging' }, data: { nodeId: `dc4-r07-n${String(n).padStart(2, '0')}`, reason: `page ${k}` } }))));
    await Promise.all(appends);
    const log = (await h.store.readAll({ limit: 100_000 })).map((event) => event.position);
    const head = log[log.length - 1]!;
    const positions = async (options: Parameters<EventStoreDBClient['readAll']>[0]) => (await collect(operator.readAll(options))).map((resolved) => Number(resolved.event!.position!.commit));
    expect(await positions({ fromPosition: START })).toEqual(log);
    expect(await positions({ direction: BACKWARDS, fromPosition: END })).toEqual([...log].reverse());
    for (const [from, count] of [[499, 2], [500, 501], [1, 1000], [777, 5000], [head, 3]] as const) {
      const at = { commit: BigInt(from), prepare: BigInt(from) };
      expect(await positions({ fromPosition: at, maxCount: count }), `forwards from ${from}, ${count}`).toEqual(log.filter((p) => p >= from).slice(0, count));
      expect(await positions({ direction: BACKWARDS, fromPosition: at, maxCount: count }), `backwards from ${from}, ${count}`).toEqual(log.filter((p) => p < from).reverse().slice(0, count));
    }
  });

  it('a client that discovers the cluster through Gossip finds the one node and reads from it', async () => {
    await h.plaintextClient();
    const port = h.plaintextPort();
    const discovering = (await import('@eventstore/db-client')).EventStoreDBClient.connectionString(`esdb+discover://127.0.0.1:${port}?tls=false`);
    expect(await collect(discovering.readAll({ maxCount: 1 }))).toHaveLength(1);
    await discovering.dispose();
  });

  it('credentials nobody issued are refused; a plaintext face serves its read-only principal and refuses appends', async () => {
    const stranger = (await import('@eventstore/db-client')).EventStoreDBClient.connectionString(
      `esdb://alice:not-the-token-at-all@127.0.0.1:${h.server.port}?tls=true&tlsCAFile=${encodeURIComponent(h.certificate.caPath)}`,
    );
    await expect(collect(stranger.readAll({ maxCount: 1 }))).rejects.toMatchObject({ type: 'access-denied' });
    await stranger.dispose();
    const plaintext = await h.plaintextClient();
    expect(await collect(plaintext.readAll({ maxCount: 2 }))).toHaveLength(2);
    await expect(plaintext.appendToStream('node-dc1-r01-n05', cordon('dc1-r01-n05', 'anonymous'))).rejects.toMatchObject({ type: 'access-denied' });
  });
});
