/**
 * The same checks through `@kurrent/kurrentdb-client`, the successor client (reads go through its Rust core, the
 * rest through grpc-js), against the face in a process of its own (see `support/face-process.ts`: the two clients'
 * generated protobuf classes share global names, so this file loads neither `@eventstore/db-client` nor the server).
 * An append with credentials of its own goes through Streams.Append, one without through Streams.BatchAppend. */
import { spawn, type ChildProcess } from 'node:child_process';
import { rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { BACKWARDS, END, KurrentDBClient, START, eventTypeFilter, jsonEvent, streamNameFilter, type AllStreamResolvedEvent, type Position, type ResolvedEvent } from '@kurrent/kurrentdb-client';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { Role } from '../../src/api/index.js';
import { EventStore } from '../../src/ledger/index.js';
import { freshDatabase } from '../support/backends.js';
import { openssl, principals, registration, testCertificate, tlsConnectionString, tokens, type TestCertificate } from './support/tls-certificate.js';

const faceProcess = fileURLToPath(new URL('./support/face-process.ts', import.meta.url));

async function collect(stream: AsyncIterable<ResolvedEvent>): Promise<ResolvedEvent[]> {
  const events: ResolvedEvent[] = [];
  for await (const resolved of stream) events.push(resolved);
  return events;
}

async function until(done: () => boolean, ms = 20_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!done()) {
    if (Date.now() > deadline) throw new Error('timed out waiting');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

const cordon = (nodeId: string, reason: string) => jsonEvent({ type: 'NodeCordoned', data: { nodeId, reason } });

describe.skipIf(!openssl.runnable)(openssl.title('the KurrentDB face, driven by @kurrent/kurrentdb-client'), { timeout: 60_000 }, () => {
  let database: { url: string; drop: () => Promise<void> };
  let certificate: TestCertificate;
  let store: EventStore;
  let face: ChildProcess | null = null;
  let port = 0;
  const clients: KurrentDBClient[] = [];
  const client = (role: Role): KurrentDBClient => {
    const made = KurrentDBClient.connectionString(tlsConnectionString(port, certificate.caPath, role, 'kurrentdb'));
    clients.push(made);
    return made;
  };
  const credentials = (role: Role) => ({ username: principals[role], password: tokens[role] });

  async function startFace(): Promise<void> {
    const child = spawn(process.execPath, ['--unhandled-rejections=strict', '--import', 'tsx', faceProcess], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: {
        ...process.env,
        DATABASE_URL: database.url,
        KURRENT_PORT: String(port),
        KURRENT_TLS_CERT: certificate.certPath,
        KURRENT_TLS_KEY: certificate.keyPath,
        FLEET_LEDGER_TOKENS: (['operator', 'analyst'] as const).map((role) => `${tokens[role]}=${principals[role]}:${role}`).join(','),
      },
    });
    let output = '';
    child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    port = await new Promise<number>((resolve, reject) => {
      child.stdout!.on('data', (chunk: Buffer) => {
        output += chunk.toString('utf8');
        const match = /listening (\d+)/.exec(output);
        if (match) resolve(Number(match[1]));
      });
      child.once('exit', () => reject(new Error(`the face process exited:\n${output}`)));
    });
    face = child;
  }

  async function stopFace(): Promise<void> {
    const child = face;
    if (!child || child.exitCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    await exited;
  }

  beforeAll(async () => {
    database = await freshDatabase(inject('embeddedAdminUrl'));
    certificate = testCertificate();
    store = await EventStore.open({ connectionString: database.url, pollIntervalMs: 200 });
    await startFace();
  });
  afterAll(async () => {
    await Promise.all(clients.map((made) => made.dispose().catch(() => undefined)));
    await stopFace();
    await store?.close();
    await database?.drop();
    if (certificate) rmSync(certificate.dir, { recursive: true, force: true });
  });

  it.each([
    { path: 'Streams.BatchAppend', rack: 'r01' },
    { path: 'Streams.Append', rack: 'r02' },
  ])('appends through $path with each stream state, and a wrong one is WrongExpectedVersionError with the actual revision', async ({ path, rack }) => {
    const operator = client('operator');
    const as = path === 'Streams.Append' ? { credentials: credentials('operator') } : {};
    const stream = `node-dc1-${rack}-n01`;
    const nodeId = `dc1-${rack}-n01`;
    expect((await operator.appendToStream(stream, jsonEvent({ type: 'NodeRegistered', data: registration(nodeId, rack) }), { streamState: 'no_stream', ...as })).nextExpectedRevision).toBe(0n);
    expect((await operator.appendToStream(stream, cordon(nodeId, 'a'), { streamState: 0n, ...as })).nextExpectedRevision).toBe(1n);
    expect((await operator.appendToStream(stream, cordon(nodeId, 'b'), { streamState: 'stream_exists', ...as })).nextExpectedRevision).toBe(2n);
    expect((await operator.appendToStream(stream, cordon(nodeId, 'c'), { streamState: 'any', ...as })).nextExpectedRevision).toBe(3n);
    await expect(operator.appendToStream(stream, cordon(nodeId, 'stale'), { streamState: 1n, ...as })).rejects.toMatchObject({ type: 'wrong-expected-version', streamName: stream, expectedState: 1n, actualState: 3n });
    expect((await store.readStream(stream)).map((event) => event.streamVersion)).toEqual([1, 2, 3, 4]);
  });

  it('reads a stream forwards and backwards and $all from a position', async () => {
    const analyst = client('analyst');
    expect((await collect(analyst.readStream('node-dc1-r01-n01', { fromRevision: START }))).map((r) => r.event!.revision)).toEqual([0n, 1n, 2n, 3n]);
    expect((await collect(analyst.readStream('node-dc1-r01-n01', { direction: BACKWARDS, fromRevision: END, maxCount: 2 }))).map((r) => r.event!.revision)).toEqual([3n, 2n]);
    const all = await collect(analyst.readAll({ fromPosition: { commit: 2n, prepare: 2n }, maxCount: 2 }));
    expect(all.map((r) => r.event!.position!.commit)).toEqual([2n, 3n]);
    expect(all[0]!.event!.metadata).toMatchObject({ actor: { kind: 'operator', id: principals.operator } });
  });

  it('an analyst\'s append is refused with AccessDeniedError', async () => {
    const before = (await store.head()).position;
    await expect(client('analyst').appendToStream('node-dc1-r01-n02', cordon('dc1-r01-n02', 'no'), { credentials: credentials('analyst') })).rejects.toMatchObject({ type: 'access-denied' });
    expect((await store.head()).position).toBe(before);
  });

  it('a filtered subscription to $all gets every matching event once across a restart of the face, resuming from its checkpoint', async () => {
    const received: AllStreamResolvedEvent[] = [];
    let checkpoint: Position | null = null;
    const subscribe = (from: Position | typeof START) => {
      const subscription = client('analyst').subscribeToAll({
        fromPosition: from,
        filter: eventTypeFilter({ prefixes: ['NodeCordoned'], checkpointReached: (_s, position) => void (checkpoint = position) }),
      });
      subscription.on('data', (resolved: AllStreamResolvedEvent) => received.push(resolved));
      subscription.on('error', () => undefined);
      return subscription;
    };
    const before = (await store.readAll({ types: ['NodeCordoned'] })).length;
    subscribe(START);
    await until(() => received.length === before);
    const noise = await client('operator').appendToStream('node-dc1-r01-n03', jsonEvent({ type: 'NodeRegistered', data: registration('dc1-r01-n03') }), { credentials: credentials('operator') });
    await until(() => checkpoint !== null && checkpoint.commit >= noise.position!.commit);
    await stopFace();
    await store.append('node-dc1-r01-n03', [{ type: 'NodeCordoned', data: { nodeId: 'dc1-r01-n03', reason: 'while down' }, actor: { kind: 'operator', id: 'alice' } }]);
    await startFace();
    subscribe(checkpoint!);
    await client('operator').appendToStream('node-dc1-r01-n03', cordon('dc1-r01-n03', 'after'), { credentials: credentials('operator') });
    await until(() => received.length === before + 2);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(received.map((r) => r.event!.id)).toEqual((await store.readAll({ types: ['NodeCordoned'] })).map((event) => event.eventId));
  });

  it('16 concurrent appenders: a stream-prefix subscriber misses and duplicates nothing', async () => {
    const from = (await store.head()).position;
    const received: AllStreamResolvedEvent[] = [];
    const subscription = client('analyst').subscribeToAll({ fromPosition: { commit: BigInt(from), prepare: BigInt(from) }, filter: streamNameFilter({ prefixes: ['node-dc1-r04-'] }) });
    subscription.on('data', (resolved: AllStreamResolvedEvent) => received.push(resolved));
    await Promise.all(
      Array.from({ length: 16 }, async (_, index) => {
        const operator = client('operator');
        const nodeId = `dc1-r04-n${String(index + 1).padStart(2, '0')}`;
        await operator.appendToStream(`node-${nodeId}`, jsonEvent({ type: 'NodeRegistered', data: registration(nodeId, 'r04') }), { streamState: 'no_stream', credentials: credentials('operator') });
        for (let i = 1; i < 6; i += 1) await operator.appendToStream(`node-${nodeId}`, cordon(nodeId, `round ${i}`), { streamState: BigInt(i - 1), credentials: credentials('operator') });
      }),
    );
    await until(() => received.length >= 96);
    await new Promise((resolve) => setTimeout(resolve, 300));
    await subscription.unsubscribe();
    const stored = await store.readAll({ fromPosition: from + 1, streamPrefix: 'node-dc1-r04-', limit: 1000 });
    expect(received.map((r) => r.event!.id)).toEqual(stored.map((event) => event.eventId));
  });
});
