/**
 * Faults between the ledger and PostgreSQL, made by a TCP proxy the test controls: the connection cut right after
 * COMMIT was sent (committed or not, the store asks and answers the truth; no duplicate on retry), and a half-open
 * connection holding the append lock (the append fails within its deadline, the server ends the stalled session, and
 * the next append succeeds).
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { APPEND_LOCK_KEY, boundedConnection, EventStore } from '../../src/ledger/index.js';
import { resolveCommit } from '../../src/ledger/commit-resolution.js';
import { backends, freshDatabase } from '../support/backends.js';
import { FaultProxy } from '../support/fault-proxy.js';
import { cordon } from '../support/ledger-fixtures.js';

const backend = backends()[0]!;

describe(`connection faults on ${backend.name} PostgreSQL`, () => {
  let proxy: FaultProxy;
  let store: EventStore;
  let direct: EventStore;
  let drop: () => Promise<void>;
  let proxiedUrl: string;

  beforeAll(async () => {
    const db = await freshDatabase(backend.adminUrl!);
    drop = db.drop;
    const url = new URL(db.url);
    proxy = new FaultProxy({ host: url.hostname, port: Number(url.port) });
    await proxy.listen();
    url.port = String(proxy.port);
    proxiedUrl = url.toString();
    direct = await EventStore.open({ connectionString: db.url });
    store = await EventStore.open({ connectionString: proxiedUrl, appendTimeoutMs: 1500, commitResolutionMs: 10_000 });
  });
  afterAll(async () => {
    await store?.close();
    await direct?.close();
    await proxy?.close();
    await drop?.();
  });

  /** Appends until this store commits in one round trip (it wrote the head last, and no earlier miss pauses guessing). */
  const warm = async (): Promise<void> => {
    for (let i = 0; i < 20; i += 1) {
      const before = store.stats.oneRoundTripBatches;
      await store.append('node-warm', [cordon('warm')]);
      if (store.stats.oneRoundTripBatches > before) return;
    }
    throw new Error('the store never committed in one round trip');
  };

  const copies = async (eventId: string): Promise<number> =>
    Number((await direct.db.selectFrom('ledger_events').select((eb) => eb.fn.countAll<string>().as('n')).where('event_id', '=', eventId).executeTakeFirstOrThrow()).n);

  it('a store\'s first append reaches the server in two round trips (the lock and the reads, then the write with its COMMIT); one after its own commit, in one', async () => {
    let before = proxy.sent;
    await store.append('node-r0', [cordon('r0')]);
    expect(proxy.sent - before).toBe(2);
    before = proxy.sent;
    await store.append('node-r1', [cordon('r1')]);
    expect(proxy.sent - before).toBe(1);
    // Another writer moved the log: the one message writes nothing, and the append takes the two round trips.
    await direct.append('node-r2', [cordon('r2')]);
    before = proxy.sent;
    await store.append('node-r2', [cordon('r2', 'after the other writer')]);
    expect(proxy.sent - before).toBe(3);
    expect((await direct.readStream('node-r2')).map((e) => e.streamVersion)).toEqual([1, 2]);
  });

  it('before the write, an append looks up the event ids its caller gave (a retry may carry them again), never one the ledger made for it', async () => {
    await direct.append('node-g0', [cordon('g0')]);
    const lookedUp = proxy.lookups.length;
    await store.append('node-g1', [cordon('g1')]);
    const made = (await direct.readStream('node-g1'))[0]!.eventId;
    expect(proxy.lookups.length).toBeGreaterThan(lookedUp);
    for (const lookup of proxy.lookups.slice(lookedUp)) expect(lookup).not.toContain(made);
    const given = '01937a00-0000-7000-8000-00000000c0aa';
    await direct.append('node-g0', [cordon('g0', 'again')]);
    await store.append('node-g2', [{ ...cordon('g2'), eventId: given }]);
    expect(proxy.lookups.at(-1)).toContain(given);
  });

  it('a retry of stored event ids cut after its one-round-trip message: answered not committed (the ids are stored, but not at the positions this attempt gave them), and the next retry is a replay', async () => {
    const event = { ...cordon('d1'), eventId: '01937a00-0000-7000-8000-00000000c0d1' };
    const original = await store.append('node-d1', [event]);
    await warm();
    // This store wrote the head last: the retry is guessed in one message, which the event-id index refuses.
    proxy.mode = { kind: 'cut-after-commit', forwardCommit: true };
    await expect(store.append('node-d1', [event])).rejects.toMatchObject({ code: 'LEDGER_STORE_UNAVAILABLE', retryable: true });
    expect(await copies(event.eventId)).toBe(1);
    expect(await store.append('node-d1', [event])).toEqual({ ...original, idempotentReplay: true });
  });

  it('a connection cut after the one-round-trip message (BEGIN, lock, write, COMMIT) reached the server: the append is answered committed, stored once', async () => {
    await store.append('node-f0', [cordon('f0')]);
    const oneRoundTrip = store.stats.oneRoundTripBatches;
    proxy.mode = { kind: 'cut-after-commit', forwardCommit: true };
    const result = await store.append('node-f1', [cordon('f1')]);
    expect(result).toMatchObject({ idempotentReplay: false, nextExpectedVersion: 1 });
    expect(await direct.readStream('node-f1')).toHaveLength(1);
    // It was the one-round-trip path that was cut: no batch of this store completed it, and none took the long way.
    expect(store.stats.oneRoundTripBatches).toBe(oneRoundTrip);
    expect((await direct.verifyChain()).ok).toBe(true);
  });

  it('a one-round-trip message the network delivers after its connection was cut cannot commit after the outcome was asked: the answer matches what is stored', async () => {
    const event = { ...cordon('l1'), eventId: '01937a00-0000-7000-8000-00000000c011' };
    await warm();
    // Late by less than the guard's clock bound (250 ms), which refuses a message later than that; enough for the outcome
    // to be asked before it arrives (a few local round trips).
    proxy.mode = { kind: 'deliver-late', delayMs: 150 };
    const answer = await store.append('node-l1', [event]).then(
      () => 'committed' as const,
      (error: unknown) => {
        expect(error).toMatchObject({ code: 'LEDGER_STORE_UNAVAILABLE', retryable: true });
        return 'not-committed' as const;
      },
    );
    // Past the late delivery, and past the second the proxy then keeps the server's side open.
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect(await copies(event.eventId)).toBe(answer === 'committed' ? 1 : 0);
    expect((await direct.verifyChain()).ok).toBe(true);
  });

  it('a connection cut before the one-round-trip message reached the server: the append is answered not committed (retryable), and nothing is stored', async () => {
    await store.append('node-f2', [cordon('f2')]);
    proxy.mode = { kind: 'cut-after-commit', forwardCommit: false };
    await expect(store.append('node-f3', [cordon('f3')])).rejects.toMatchObject({ code: 'LEDGER_STORE_UNAVAILABLE', retryable: true });
    expect(await direct.readStream('node-f3')).toHaveLength(0);
    await store.append('node-f3', [cordon('f3')]);
    expect(await direct.readStream('node-f3')).toHaveLength(1);
  });

  it('a connection cut after COMMIT reached the server: the append is answered committed, and a retry is a replay, not a duplicate', async () => {
    const event = { ...cordon('c1'), eventId: '01937a00-0000-7000-8000-00000000c001' };
    proxy.mode = { kind: 'cut-after-commit', forwardCommit: true };
    const result = await store.append('node-c1', [event]);
    expect(result.idempotentReplay).toBe(false);
    expect(await copies(event.eventId)).toBe(1);
    const retry = await store.append('node-c1', [event]);
    expect(retry).toMatchObject({ idempotentReplay: true, positions: result.positions });
    expect(await copies(event.eventId)).toBe(1);
  });

  it('a connection cut while the server is still writing (COMMIT received, a row lock holding the write): the outcome is asked only once that transaction ended, and is committed', async () => {
    const event = { ...cordon('s1'), eventId: '01937a00-0000-7000-8000-00000000c0b1' };
    await store.append('node-s1', [cordon('s1')]);
    await warm();
    const holder = new pg.Client({ connectionString: (direct as unknown as { connectionString: string }).connectionString });
    await holder.connect();
    try {
      // Another session holds the stream's row: the write (an upsert of that row, in the one message this warm store
      // sends) waits behind it, COMMIT queued.
      await holder.query(`BEGIN; SELECT * FROM ledger_streams WHERE stream = 'node-s1' FOR UPDATE`);
      proxy.mode = { kind: 'cut-after-commit', forwardCommit: true };
      const outcome = store.append('node-s1', [event]);
      // Past the cut (300 ms), within the write's statement timeout (1,500 ms here).
      await new Promise((resolve) => setTimeout(resolve, 900));
      await holder.query('COMMIT');
      expect(await outcome).toMatchObject({ idempotentReplay: false });
      expect(await copies(event.eventId)).toBe(1);
    } finally {
      await holder.end();
    }
  });

  it('a connection cut before COMMIT reached the server: the append is answered not committed (retryable), nothing is stored, and the retry stores it once', async () => {
    const event = { ...cordon('c2'), eventId: '01937a00-0000-7000-8000-00000000c002' };
    proxy.mode = { kind: 'cut-after-commit', forwardCommit: false };
    await expect(store.append('node-c2', [event])).rejects.toMatchObject({ code: 'LEDGER_STORE_UNAVAILABLE', retryable: true });
    expect(await copies(event.eventId)).toBe(0);
    await store.append('node-c2', [event]);
    expect(await copies(event.eventId)).toBe(1);
  });

  it('a half-open connection holding the append lock: an append fails within its deadline, the server ends the stalled session, and the next append succeeds', async () => {
    proxy.mode = { kind: 'freeze' };
    const holder = new pg.Client(boundedConnection(proxiedUrl, { idleInTransactionMs: 3000 }));
    holder.on('error', () => undefined);
    await holder.connect();
    void holder.query(`BEGIN; SELECT pg_advisory_xact_lock(${APPEND_LOCK_KEY})`).catch(() => undefined);
    await new Promise((resolve) => setTimeout(resolve, 500));
    proxy.mode = { kind: 'pass' };
    const started = Date.now();
    await expect(store.append('node-h1', [cordon('h1')])).rejects.toMatchObject({ code: 'LEDGER_STORE_UNAVAILABLE', retryable: true });
    expect(Date.now() - started).toBeLessThan(3000);
    // The holder's session is ended by the server (idle in transaction for 3 s); the lock goes with it.
    let stored: number | null = null;
    while (stored === null && Date.now() - started < 15_000) {
      stored = await store.append('node-h1', [cordon('h1')]).then((r) => r.positions[0]!, () => null);
    }
    expect(stored).not.toBeNull();
    expect(Date.now() - started).toBeLessThan(8000);
    await holder.end().catch(() => undefined);
  });
  it('the server process of a lost connection is ended only on the server it ran on: after a failover or a restart the same process id is someone else\'s session', async () => {
    const other = new pg.Client({ connectionString: direct.connectionString });
    await other.connect();
    other.on('error', () => undefined);
    try {
      const pid = Number((await other.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid);
      const server = (await other.query<{ server: string }>('SELECT pg_postmaster_start_time()::text AS server')).rows[0]!.server;
      const target = { connectionString: proxiedUrl, commitResolutionMs: 5000 };
      const unknownId = '01937a00-0000-7000-8000-00000000cf01';
      // A lost connection of another server instance (the one before a failover) that had this pid: left alone.
      expect(await resolveCommit(target, [unknownId], [1_000_000_000], new Error('lost'), { pid, server: '1999-01-01 00:00:00+00' })).toBe('not-committed');
      expect((await other.query('SELECT 1 AS one')).rows[0]).toEqual({ one: 1 });
      // The same server instance: the idle session is ended before the rows are counted, as before.
      expect(await resolveCommit(target, [unknownId], [1_000_000_000], new Error('lost'), { pid, server })).toBe('not-committed');
      await expect(other.query('SELECT 1')).rejects.toThrow();
    } finally {
      await other.end().catch(() => undefined);
    }
  });
});
