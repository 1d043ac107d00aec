import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { END, EventStoreDBClient, START, eventTypeFilter, jsonEvent, streamNameFilter, type AllStreamResolvedEvent, type Position } from '@eventstore/db-client';
import { TokenTable } from '../../src/api/index.js';
import { serveKurrent } from '../../src/kurrent/index.js';
import { openKurrentHarness, registration, openssl, type KurrentHarness } from './support/kurrent-harness.js';

const cordon = (nodeId: string, reason: string) => jsonEvent({ type: 'NodeCordoned', data: { nodeId, reason } });
const uncordon = (nodeId: string) => jsonEvent({ type: 'NodeUncordoned', data: { nodeId } });

/** Waits until `done` holds, polling; fails after `ms`. */
async function until(done: () => boolean, ms = 20_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!done()) {
    if (Date.now() > deadline) throw new Error('timed out waiting');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe.skipIf(!openssl.runnable)(openssl.title('KurrentDB subscriptions over the ledger'), () => {
  let h: KurrentHarness;

  beforeAll(async () => {
    h = await openKurrentHarness();
  });
  afterAll(async () => h?.close());

  it('a filtered subscription to $all receives every matching event exactly once across a restart, resuming after its last checkpoint', async () => {
    const operator = h.client('operator');
    // Noise that the filter must skip, and matching events before the subscription starts (catch-up).
    for (let n = 1; n <= 6; n += 1) {
      const nodeId = `dc1-r03-n0${n}`;
      await operator.appendToStream(`node-${nodeId}`, [jsonEvent({ type: 'NodeRegistered', data: registration(nodeId, 'r03') }), cordon(nodeId, `first ${n}`)]);
    }
    const received: AllStreamResolvedEvent[] = [];
    let checkpoint: Position | null = null;
    const checkpoints: Position[] = [];
    const subscribe = (client: ReturnType<KurrentHarness['client']>, from: Position | typeof START) =>
      client.subscribeToAll({
        fromPosition: from,
        filter: eventTypeFilter({
          prefixes: ['NodeCordoned'],
          checkpointReached: (_subscription, position) => {
            checkpoint = position;
            checkpoints.push(position);
          },
        }),
      });
    const first = subscribe(h.client('analyst'), START);
    first.on('data', (resolved: AllStreamResolvedEvent) => received.push(resolved));
    first.on('error', () => undefined);
    await until(() => received.length === 6);
    for (let n = 1; n <= 6; n += 1) await operator.appendToStream(`node-dc1-r03-n0${n}`, [uncordon(`dc1-r03-n0${n}`), cordon(`dc1-r03-n0${n}`, `live ${n}`)]);
    // Events the filter skips after the last match: only a checkpoint tells the consumer it has seen past them.
    const noise = await operator.appendToStream('node-dc1-r03-n07', jsonEvent({ type: 'NodeRegistered', data: registration('dc1-r03-n07', 'r03') }));
    await until(() => received.length === 12 && checkpoint !== null && checkpoint.commit >= noise.position!.commit);

    // The server stops (the subscription sees it drop), the ledger takes more events meanwhile, and the server comes back.
    const dropped = new Promise<unknown>((resolve) => first.once('error', resolve).once('end', () => resolve('end')));
    await h.restart();
    expect(await dropped).toMatchObject({ type: 'unavailable' });
    for (let n = 1; n <= 6; n += 1) {
      await h.store.append(`node-dc1-r03-n0${n}`, [{ type: 'NodeCordoned', data: { nodeId: `dc1-r03-n0${n}`, reason: `while down ${n}` }, actor: { kind: 'operator', id: 'alice' } }]);
    }

    // The consumer resumes after the later of its last checkpoint and its last event, as KurrentDB consumers do.
    const lastEvent = received[received.length - 1]!.event!.position!;
    expect(checkpoint!.commit).toBeGreaterThan(lastEvent.commit);
    const resumeFrom = checkpoint!.commit > lastEvent.commit ? checkpoint! : lastEvent;
    const second = subscribe(h.client('analyst'), resumeFrom);
    second.on('data', (resolved: AllStreamResolvedEvent) => received.push(resolved));
    for (let n = 1; n <= 6; n += 1) await h.client('operator').appendToStream(`node-dc1-r03-n0${n}`, cordon(`dc1-r03-n0${n}`, `after ${n}`));
    await until(() => received.length === 24);
    await new Promise((resolve) => setTimeout(resolve, 300));
    await second.unsubscribe();

    const expected = (await h.store.readAll({ types: ['NodeCordoned'] })).map((event) => event.eventId);
    expect(expected).toHaveLength(24);
    expect(received.map((resolved) => resolved.event!.id)).toEqual(expected);
    expect(received.every((resolved) => resolved.event!.type === 'NodeCordoned')).toBe(true);
    // Checkpoints only move forward, and each names a position of the log (commit and prepare alike).
    const head = BigInt((await h.store.head()).position);
    expect(checkpoints.every((position, index) => position.commit <= head && position.prepare === position.commit && (index === 0 || position.commit >= checkpoints[index - 1]!.commit))).toBe(true);
  });

  it('16 concurrent client appenders: a subscriber to $all (stream prefix filter) misses and duplicates nothing, in log order', async () => {
    const from = (await h.store.head()).position;
    const received: AllStreamResolvedEvent[] = [];
    const subscription = h.client('auditor').subscribeToAll({ fromPosition: { commit: BigInt(from), prepare: BigInt(from) }, filter: streamNameFilter({ prefixes: ['node-dc1-r04-'] }) });
    subscription.on('data', (resolved: AllStreamResolvedEvent) => received.push(resolved));
    const appenders = Array.from({ length: 16 }, (_, index) => index + 1);
    const perAppender = 12;
    await Promise.all(
      appenders.map(async (n) => {
        const client = h.client('operator');
        const nodeId = `dc1-r04-n${String(n).padStart(2, '0')}`;
        await client.appendToStream(`node-${nodeId}`, jsonEvent({ type: 'NodeRegistered', data: registration(nodeId, 'r04') }), { expectedRevision: 'no_stream' });
        for (let i = 1; i < perAppender; i += 1) {
          await client.appendToStream(`node-${nodeId}`, i % 2 === 1 ? cordon(nodeId, `round ${i}`) : uncordon(nodeId), { expectedRevision: BigInt(i - 1) });
        }
      }),
    );
    await until(() => received.length >= 16 * perAppender);
    await new Promise((resolve) => setTimeout(resolve, 300));
    await subscription.unsubscribe();
    const stored = await h.store.readAll({ fromPosition: from + 1, streamPrefix: 'node-dc1-r04-', limit: 10_000 });
    expect(stored).toHaveLength(16 * perAppender);
    expect(received.map((resolved) => resolved.event!.id)).toEqual(stored.map((event) => event.eventId));
    const positions = received.map((resolved) => resolved.event!.position!.commit);
    expect(positions).toEqual([...positions].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)));
  });

  it('a subscription to one stream catches up from a revision, then receives live appends once', async () => {
    const operator = h.client('operator');
    const stream = 'node-dc1-r05-n01';
    await operator.appendToStream(stream, [jsonEvent({ type: 'NodeRegistered', data: registration('dc1-r05-n01', 'r05') }), cordon('dc1-r05-n01', 'a'), uncordon('dc1-r05-n01')]);
    const revisions: bigint[] = [];
    const subscription = h.client('analyst').subscribeToStream(stream, { fromRevision: 0n });
    subscription.on('data', (resolved) => revisions.push(resolved.event!.revision));
    await until(() => revisions.length === 2);
    await operator.appendToStream(stream, [cordon('dc1-r05-n01', 'b'), uncordon('dc1-r05-n01')]);
    await operator.appendToStream('node-dc1-r05-n02', jsonEvent({ type: 'NodeRegistered', data: registration('dc1-r05-n02', 'r05') }));
    await until(() => revisions.length === 4);
    await new Promise((resolve) => setTimeout(resolve, 300));
    await subscription.unsubscribe();
    expect(revisions).toEqual([1n, 2n, 3n, 4n]);

    const fromEnd: bigint[] = [];
    const live = h.client('analyst').subscribeToStream(stream, { fromRevision: END });
    live.on('data', (resolved) => fromEnd.push(resolved.event!.revision));
    await new Promise((resolve) => live.once('confirmation', resolve));
    await operator.appendToStream(stream, cordon('dc1-r05-n01', 'c'));
    await until(() => fromEnd.length === 1);
    await live.unsubscribe();
    expect(fromEnd).toEqual([5n]);
  });

  it('a regex filter on the event type selects by pattern; an invalid regex is refused naming filter.regex', async () => {
    const from = (await h.store.head()).position;
    const types: string[] = [];
    const subscription = h.client('analyst').subscribeToAll({ fromPosition: { commit: BigInt(from), prepare: BigInt(from) }, filter: eventTypeFilter({ regex: '^Node(Un)?[Cc]ordoned$' }) });
    subscription.on('data', (resolved: AllStreamResolvedEvent) => types.push(resolved.event!.type));
    const operator = h.client('operator');
    await operator.appendToStream('node-dc1-r06-n01', [jsonEvent({ type: 'NodeRegistered', data: registration('dc1-r06-n01', 'r06') }), cordon('dc1-r06-n01', 'x'), uncordon('dc1-r06-n01')]);
    await until(() => types.length === 2);
    await subscription.unsubscribe();
    expect(types).toEqual(['NodeCordoned', 'NodeUncordoned']);

    const invalid = h.client('analyst').subscribeToAll({ filter: eventTypeFilter({ regex: '(' }) });
    const error = await new Promise<unknown>((resolve) => invalid.once('error', resolve));
    expect(String((error as Error).message)).toMatch(/filter\.regex/);
  });

  it('subscriptions are bounded: one past the limit is refused with RESOURCE_EXHAUSTED, and a freed slot is taken again', async () => {
    const face = await serveKurrent({ store: h.store, tokens: new TokenTable([]), port: 0, anonymousReads: 'envelopes', maxSubscriptions: 1 });
    const client = EventStoreDBClient.connectionString(`esdb://127.0.0.1:${face.port}?tls=false`);
    try {
      const first = client.subscribeToAll({ fromPosition: END });
      await new Promise((resolve) => first.once('confirmation', resolve));
      const second = client.subscribeToAll({ fromPosition: END });
      const refused = await new Promise<unknown>((resolve) => second.once('error', resolve));
      expect(refused).toMatchObject({ code: 8 });
      expect(String((refused as Error).message)).toMatch(/1 subscriptions are open/);
      await first.unsubscribe();
      // The cancellation reaches the server a moment later: until then the slot is still taken.
      const deadline = Date.now() + 10_000;
      for (let confirmed = false; !confirmed; ) {
        const third = client.subscribeToAll({ fromPosition: END });
        confirmed = await new Promise<boolean>((resolve) => third.once('confirmation', () => resolve(true)).once('error', () => resolve(false)));
        await third.unsubscribe();
        if (!confirmed && Date.now() > deadline) throw new Error('the freed slot was never taken again');
        if (!confirmed) await new Promise((resolve) => setTimeout(resolve, 50));
      }
    } finally {
      await client.dispose();
      await face.close();
    }
  });
});
