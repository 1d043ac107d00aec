import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import pg from 'pg';
import { firstValueFrom, take, toArray } from 'rxjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RecordedEvent } from '../../events/index.js';
import { APPEND_LOCK_KEY, EventStore, isLedgerError, type AppendResult } from '../../src/ledger/index.js';
import { backends, freshDatabase } from '../support/backends.js';
import { cordon, operator, withId } from '../support/ledger-fixtures.js';

for (const backend of backends()) {
  describe.skipIf(!backend.adminUrl)(`event store contract on ${backend.name} PostgreSQL${backend.unavailable ? ` (skipped: ${backend.unavailable})` : ''}`, () => {
    let store: EventStore;
    let url: string;
    let drop: () => Promise<void>;
    const opened: EventStore[] = [];
    const openStore = async (): Promise<EventStore> => {
      const s = await EventStore.open({ connectionString: url, pollIntervalMs: 200, poolSize: 4 });
      opened.push(s);
      return s;
    };

    beforeAll(async () => {
      ({ url, drop } = await freshDatabase(backend.adminUrl!));
      store = await openStore();
    });
    afterAll(async () => {
      await Promise.all(opened.map((s) => s.close()));
      await drop();
    });

    const stream = (): string => `node-${randomUUID().slice(0, 8)}`;

    it('an append returns the new stream version and global positions, and reads return it', async () => {
      const s = stream();
      const result = await store.append(s, [cordon('n1'), cordon('n1', 'second')], { expectedVersion: 'no_stream' });
      expect(result.nextExpectedVersion).toBe(2);
      expect(result.positions).toHaveLength(2);
      expect(result.positions[1]).toBe(result.positions[0]! + 1);
      const read = await store.readStream(s);
      expect(read.map((e) => [e.streamVersion, e.position, e.type])).toEqual([
        [1, result.positions[0], 'NodeCordoned'],
        [2, result.positions[1], 'NodeCordoned'],
      ]);
      expect(read[0]!.actor).toEqual(operator);
      const backward = await store.readStream(s, { direction: 'backward', limit: 1 });
      expect(backward.map((e) => e.streamVersion)).toEqual([2]);
      expect((await store.head()).position).toBeGreaterThanOrEqual(result.positions[1]!);
      const all = await store.readAll({ fromPosition: result.positions[0], limit: 2, streamPrefix: s });
      expect(all.map((e) => e.position)).toEqual(result.positions);
    });

    it('readStreamToEnd returns a stream past one page of readStream, in order, from any version', async () => {
      const s = stream();
      await store.append(s, Array.from({ length: 7 }, (_, i) => cordon('n1', `reason ${i}`)), { expectedVersion: 'no_stream' });
      expect((await store.readStream(s, { limit: 3 })).length).toBe(3);
      expect((await store.readStreamToEnd(s, 1, 3)).map((e) => e.streamVersion)).toEqual([1, 2, 3, 4, 5, 6, 7]);
      expect((await store.readStreamToEnd(s, 5, 2)).map((e) => e.streamVersion)).toEqual([5, 6, 7]);
      expect(await store.readStreamToEnd(s, 8, 3)).toEqual([]);
    });

    it('every expectedVersion form is enforced: number, no_stream, stream_exists and any', async () => {
      const s = stream();
      await expect(store.append(s, [cordon('n')], { expectedVersion: 'stream_exists' })).rejects.toMatchObject({ code: 'LEDGER_WRONG_EXPECTED_VERSION', details: { stream: s, actual: -1 } });
      await expect(store.append(s, [cordon('n')], { expectedVersion: 3 })).rejects.toMatchObject({ code: 'LEDGER_WRONG_EXPECTED_VERSION' });
      expect((await store.append(s, [cordon('n')], { expectedVersion: 'no_stream' })).nextExpectedVersion).toBe(1);
      await expect(store.append(s, [cordon('n')], { expectedVersion: 'no_stream' })).rejects.toMatchObject({ code: 'LEDGER_WRONG_EXPECTED_VERSION', details: { expected: 'no_stream', actual: 1 } });
      await expect(store.append(s, [cordon('n')], { expectedVersion: 0 })).rejects.toMatchObject({ code: 'LEDGER_WRONG_EXPECTED_VERSION', details: { expected: 0, actual: 1 } });
      expect((await store.append(s, [cordon('n')], { expectedVersion: 1 })).nextExpectedVersion).toBe(2);
      expect((await store.append(s, [cordon('n')], { expectedVersion: 'stream_exists' })).nextExpectedVersion).toBe(3);
      expect((await store.append(s, [cordon('n')], { expectedVersion: 'any' })).nextExpectedVersion).toBe(4);
      expect((await store.readStream(s)).length).toBe(4);
    });

    it('an empty append is rejected', async () => {
      await expect(store.append(stream(), [])).rejects.toMatchObject({ code: 'LEDGER_EMPTY_APPEND' });
    });

    it('an invalid payload is rejected naming the type, the field and the reason, and nothing of that append is stored', async () => {
      const s = stream();
      const before = (await store.head()).position;
      const error = await store
        .append(s, [cordon('n1'), { type: 'NodeCordoned', data: { nodeId: 'n1', reason: 42 }, actor: operator }])
        .catch((e: unknown) => e);
      expect(isLedgerError(error) && error.code).toBe('LEDGER_INVALID_EVENT');
      expect(error).toMatchObject({ details: { type: 'NodeCordoned', index: 1, issues: [{ path: 'reason' }] } });
      expect(String((error as Error).message)).toMatch(/NodeCordoned.*data\.reason/);
      expect(await store.readStream(s)).toEqual([]);
      expect((await store.head()).position).toBe(before);
    });

    it('a payload carrying a credential is refused so no secret enters the log', async () => {
      const error = await store
        .append(stream(), [{ type: 'NodeRegistered', data: { nodeId: 'n', site: 's', rack: 'r', bmc: { protocol: 'redfish', address: 'https://bmc', credentialRef: 'vault:x', password: 'hunter2' } }, actor: operator }])
        .catch((e: unknown) => e);
      expect(error).toMatchObject({ code: 'LEDGER_INVALID_EVENT', details: { issues: [{ path: 'bmc.password' }] } });
      expect(String((error as Error).message)).not.toContain('hunter2');
    });

    it('an unknown type is rejected with its own code', async () => {
      await expect(store.append(stream(), [{ type: 'NoSuchThing', data: {}, actor: operator }])).rejects.toMatchObject({ code: 'LEDGER_UNKNOWN_EVENT_TYPE', details: { type: 'NoSuchThing' } });
    });

    it('in one group commit, a failed check or invalid event rejects only its own append', async () => {
      const [ok1, bad, wrongVersion, ok2] = await Promise.allSettled([
        store.append(stream(), [cordon('a')]),
        store.append(stream(), [{ type: 'NodeCordoned', data: { nodeId: '' }, actor: operator }]),
        store.append(stream(), [cordon('c')], { expectedVersion: 5 }),
        store.append(stream(), [cordon('d')]),
      ]);
      expect(ok1.status).toBe('fulfilled');
      expect(ok2.status).toBe('fulfilled');
      expect(bad).toMatchObject({ status: 'rejected', reason: { code: 'LEDGER_INVALID_EVENT' } });
      expect(wrongVersion).toMatchObject({ status: 'rejected', reason: { code: 'LEDGER_WRONG_EXPECTED_VERSION' } });
      const p1 = (ok1 as PromiseFulfilledResult<AppendResult>).value.positions[0]!;
      const p2 = (ok2 as PromiseFulfilledResult<AppendResult>).value.positions[0]!;
      expect(p2).toBe(p1 + 1);
    });

    it('re-appending stored event ids with the same content returns the original result and writes nothing', async () => {
      const s = stream();
      const events = [cordon('n', 'a', randomUUID()), cordon('n', 'b', randomUUID())];
      const first = await store.append(s, events, { expectedVersion: 'no_stream' });
      const head = (await store.head()).position;
      const again = await store.append(s, events, { expectedVersion: 'no_stream' });
      expect(again).toEqual({ ...first, idempotentReplay: true });
      expect((await store.head()).position).toBe(head);
      expect(await store.readStream(s)).toHaveLength(2);
    });

    it('the same event id with different content is an idempotency conflict', async () => {
      const id = randomUUID();
      const s = stream();
      await store.append(s, [cordon('n', 'first', id)]);
      await expect(store.append(s, [cordon('n', 'changed', id)])).rejects.toMatchObject({ code: 'LEDGER_IDEMPOTENCY_CONFLICT', details: { eventId: id } });
      await expect(store.append(stream(), [cordon('n', 'first', id)])).rejects.toMatchObject({ code: 'LEDGER_IDEMPOTENCY_CONFLICT' });
    });

    it('within one group commit, a later append of an event id the batch already writes is a replay if its content is the same, a conflict if not', async () => {
      const id = randomUUID();
      const s = stream();
      const batchesBefore = store.stats.batches;
      const [first, same, changed] = await Promise.allSettled([
        store.append(s, [cordon('n', 'first', id)]),
        store.append(s, [cordon('n', 'first', id)]),
        store.append(s, [cordon('n', 'changed', id)]),
      ]);
      expect(store.stats.batches - batchesBefore).toBe(1);
      expect(first.status).toBe('fulfilled');
      expect(same).toEqual({ status: 'fulfilled', value: { ...(first as PromiseFulfilledResult<AppendResult>).value, idempotentReplay: true } });
      expect(changed).toMatchObject({ status: 'rejected', reason: { code: 'LEDGER_IDEMPOTENCY_CONFLICT', details: { eventId: id } } });
      expect(await store.readStream(s)).toHaveLength(1);
    });

    it('an old schema version is stored as written and read back upcast to the current version', async () => {
      const s = `polls-site-${randomUUID().slice(0, 6)}`;
      await store.append(s, [
        {
          type: 'PollOutcomesRecorded',
          schemaVersion: 1,
          data: {
            site: 'dc1',
            outcomes: [
              { nodeId: 'n1', work: 'liveness', outcome: 'success', latencyMs: 41, at: '2026-01-01T00:00:00.000Z' },
              { nodeId: 'n2', work: 'liveness', outcome: 'timeout', latencyMs: 5000, at: '2026-01-01T00:00:02.500Z' },
            ],
          },
          actor: { kind: 'system', id: 'poller' },
        },
      ]);
      const [event] = await store.readStream(s);
      expect(event!.schemaVersion).toBe(2);
      expect(event!.data).toEqual({
        site: 'dc1',
        windowStart: '2026-01-01T00:00:00.000Z',
        nodeIds: ['n1', 'n2'],
        work: ['liveness', 'liveness'],
        outcomes: ['success', 'timeout'],
        latencyMs: [41, 5000],
        offsetMs: [0, 2500],
      });
      const raw = await store.db.selectFrom('ledger_events').select(['schema_version']).where('stream', '=', s).executeTakeFirstOrThrow();
      expect(raw.schema_version).toBe(1);
      expect((await store.verifyChain()).ok).toBe(true);
    });

    it('a batch whose JSON passes maxJsonArrayChars is written one text per event: the same rows, the same chain, read back as written', async () => {
      const small = await EventStore.open({ connectionString: url, maxJsonArrayChars: 200, migrate: false });
      opened.push(small);
      const [big, tiny] = [stream(), stream()];
      const [wide, narrow] = await Promise.all([
        small.append(big, [cordon('b1', 'r'.repeat(300)), cordon('b2', 'quote " and backslash \\ and é')]),
        small.append(tiny, [cordon('t1', 'short')]),
      ]);
      expect(wide.positions).toHaveLength(2);
      expect(narrow.positions).toHaveLength(1);
      expect((await store.readStream(big)).map((e) => (e.data as { reason: string }).reason)).toEqual(['r'.repeat(300), 'quote " and backslash \\ and é']);
      await small.append(tiny, [cordon('t2', 'after the large batch')]);
      expect((await store.readStream(tiny)).map((e) => (e.data as { reason: string }).reason)).toEqual(['short', 'after the large batch']);
      // The same, in one round trip (this store wrote the head last).
      const oneRoundTrip = small.stats.oneRoundTripBatches;
      await small.append(big, [cordon('b3', 'r'.repeat(300))]);
      expect(small.stats.oneRoundTripBatches).toBe(oneRoundTrip + 1);
      expect((await store.readStream(big)).map((e) => e.streamVersion)).toEqual([1, 2, 3]);
      expect((await store.verifyChain()).ok).toBe(true);
    });

    describe('one round trip when this process wrote the head last', () => {
      /** A store of its own, so what it knows of the log is only what these tests make it know. */
      const warmStore = async (): Promise<EventStore> => {
        const own = await EventStore.open({ connectionString: url, migrate: false, poolSize: 2 });
        opened.push(own);
        await own.append(stream(), [cordon('warm')]);
        return own;
      };

      it('an append after this store\'s own commit is committed in one round trip, chained and versioned as the long way would', async () => {
        const own = await warmStore();
        const s = stream();
        const before = { ...own.stats };
        const first = await own.append(s, [cordon('n1'), cordon('n1', 'second')], { expectedVersion: 'no_stream' });
        const second = await own.append(s, [cordon('n1', 'third')], { expectedVersion: 2 });
        expect(own.stats.oneRoundTripBatches - before.oneRoundTripBatches).toBe(2);
        expect(own.stats.speculationMisses).toBe(before.speculationMisses);
        expect(second).toMatchObject({ nextExpectedVersion: 3, positions: [first.positions[1]! + 1] });
        expect((await store.readStream(s)).map((e) => e.streamVersion)).toEqual([1, 2, 3]);
        expect((await store.verifyChain()).ok).toBe(true);
      });

      /**
       * A one-round-trip append made while pg's global parser for `oid` is `parser`: the caller is told it committed
       * (not a replay), in one round trip, without a miss, and the batch is stored once.
       */
      const appendsOnceWithParser = async (oid: number, parser: (value: string) => unknown): Promise<void> => {
        const own = await warmStore();
        const s = stream();
        const before = { ...own.stats };
        const standard = pg.types.getTypeParser(oid);
        pg.types.setTypeParser(oid, parser);
        try {
          expect(await own.append(s, [cordon('p1')])).toMatchObject({ nextExpectedVersion: 1, idempotentReplay: false });
        } finally {
          pg.types.setTypeParser(oid, standard);
        }
        expect(own.stats.oneRoundTripBatches - before.oneRoundTripBatches).toBe(1);
        expect(own.stats.speculationMisses).toBe(before.speculationMisses);
        expect(await store.readStream(s)).toHaveLength(1);
        expect((await store.verifyChain()).ok).toBe(true);
      };

      it('a process that changed pg\'s global bool parser is still told its one-round-trip append committed, and the batch is stored once', async () => {
        await appendsOnceWithParser(16, (value) => (value === 't' ? 'yes' : 'no'));
      });

      it('a guarded write whose answer has an unexpected shape is not guessed from: the database is asked, and a stored batch is reported committed, once', async () => {
        // Every text column, the write's outcome among them, comes back as an object.
        await appendsOnceWithParser(25, (value) => ({ unexpected: value }));
      });

      it('a batch that waited for the append lock does not skew the clock estimate: the next append still commits in one round trip', async () => {
        const own = await EventStore.open({ connectionString: url, migrate: false, poolSize: 2 });
        opened.push(own);
        const holder = new pg.Client({ connectionString: url });
        await holder.connect();
        try {
          await holder.query('BEGIN');
          await holder.query('SELECT pg_advisory_xact_lock($1)', [APPEND_LOCK_KEY]);
          // The store's first append takes the long way (it knows no head yet) and waits 800 ms for the lock: half of
          // that, taken for network time, would put its estimate of the database's clock past the guard's 250 ms.
          const first = own.append(stream(), [cordon('w1')]);
          await new Promise((resolve) => setTimeout(resolve, 800));
          await holder.query('COMMIT');
          await first;
        } finally {
          await holder.end();
        }
        const before = { ...own.stats };
        await own.append(stream(), [cordon('w2')]);
        expect(own.stats.speculationMisses).toBe(before.speculationMisses);
        expect(own.stats.oneRoundTripBatches - before.oneRoundTripBatches).toBe(1);
      });

      it('another writer moved the head: the one-round-trip write writes nothing, and the append lands after that writer\'s events', async () => {
        const own = await warmStore();
        const other = await store.append(stream(), [cordon('other')]);
        const before = { ...own.stats };
        const s = stream();
        const result = await own.append(s, [cordon('n2')]);
        expect(own.stats.speculationMisses - before.speculationMisses).toBe(1);
        expect(own.stats.oneRoundTripBatches).toBe(before.oneRoundTripBatches);
        expect(result.positions[0]).toBeGreaterThan(other.positions[0]!);
        expect(await store.readStream(s)).toHaveLength(1);
        expect((await store.verifyChain()).ok).toBe(true);
      });

      it('a stream this store did not know of is assumed absent; where it exists, its version index refuses the write, and the append lands at the true version', async () => {
        const s = stream();
        await store.append(s, [cordon('n3')]);
        // Opened and warmed after: the head is this store's own, the stream unknown to it.
        const own = await warmStore();
        const before = { ...own.stats };
        const result = await own.append(s, [cordon('n3', 'second')]);
        expect(own.stats.speculationMisses - before.speculationMisses).toBe(1);
        expect(result.nextExpectedVersion).toBe(2);
        expect((await store.readStream(s)).map((e) => e.streamVersion)).toEqual([1, 2]);
        // An index's refusal says only that this stream was not as assumed: the next append is guessed again, and the
        // stream is now known.
        await own.append(s, [cordon('n3', 'third')]);
        expect(own.stats.oneRoundTripBatches - before.oneRoundTripBatches).toBe(1);
        expect((await store.readStream(s)).map((e) => e.streamVersion)).toEqual([1, 2, 3]);
        expect((await store.verifyChain()).ok).toBe(true);
      });

      it('an expected version checked against what this store assumed is checked again under the lock: no_stream on a stream it did not know exists is refused', async () => {
        const s = stream();
        await store.append(s, [cordon('n4')]);
        const own = await warmStore();
        await expect(own.append(s, [cordon('n4', 'again')], { expectedVersion: 'no_stream' })).rejects.toMatchObject({
          code: 'LEDGER_WRONG_EXPECTED_VERSION',
          details: { stream: s, expected: 'no_stream', actual: 1 },
        });
        expect(await store.readStream(s)).toHaveLength(1);
      });

      it('a retry of stored event ids after this store\'s own commit: the one-round-trip write is refused by the event-id index, and the append is answered as a replay', async () => {
        const own = await warmStore();
        const s = stream();
        const events = [withId(cordon('n5')), withId(cordon('n5', 'second'))];
        const original = await own.append(s, events);
        const before = { ...own.stats };
        expect(await own.append(s, events)).toEqual({ ...original, idempotentReplay: true });
        expect(own.stats.speculationMisses - before.speculationMisses).toBe(1);
        expect(await store.readStream(s)).toHaveLength(2);
        // A changed retry is still a conflict, not a write.
        await expect(own.append(s, [events[0]!, { ...events[1]!, data: { nodeId: 'n5', reason: 'changed' } }])).rejects.toMatchObject({ code: 'LEDGER_IDEMPOTENCY_CONFLICT' });
        expect(await store.readStream(s)).toHaveLength(2);
      });

      it('after a miss, guessing pauses for longer each time in a row, so a process sharing the log with a busy writer rarely pays for it', async () => {
        const own = await warmStore();
        const before = { ...own.stats };
        // Another writer appends before every one of this store's appends: each guess would miss.
        for (let i = 0; i < 12; i += 1) {
          await store.append(stream(), [cordon('busy')]);
          await own.append(stream(), [cordon('mine')]);
        }
        const misses = own.stats.speculationMisses - before.speculationMisses;
        // A miss pauses guessing for 2, then 4, then 8 batches (counted from the miss): guesses at the 1st, 3rd and 7th of
        // the 12 batches, not at every one.
        expect(misses).toBe(3);
        expect(own.stats.oneRoundTripBatches).toBe(before.oneRoundTripBatches);
        expect((await store.verifyChain()).ok).toBe(true);
      });
    });

    it('a live subscriber is woken by NOTIFY, well before its polling fallback', async () => {
      const slow = await EventStore.open({ connectionString: url, pollIntervalMs: 60_000, migrate: false });
      opened.push(slow);
      const s = stream();
      const from = (await slow.head()).position + 1;
      const received = firstValueFrom(slow.subscribe({ fromPosition: from, streamPrefix: s }).pipe(take(1)));
      await new Promise((r) => setTimeout(r, 300));
      const started = Date.now();
      await store.append(s, [cordon('n')]);
      const event = await received;
      expect(event.stream).toBe(s);
      expect(Date.now() - started).toBeLessThan(5000);
    });

    it('property: with 8 concurrent writers on separate connections, a subscriber receives every committed event exactly once, in commit order', async () => {
      const writers = await Promise.all(Array.from({ length: 8 }, () => openStore()));
      await fc.assert(
        fc.asyncProperty(fc.array(fc.array(fc.integer({ min: 1, max: 4 }), { minLength: 1, maxLength: 12 }), { minLength: 8, maxLength: 8 }), async (plans) => {
          const prefix = `prop-a-${randomUUID().slice(0, 8)}-`;
          const from = (await store.head()).position + 1;
          const expectedTotal = plans.flat().reduce((a, b) => a + b, 0);
          const collected = firstValueFrom(store.subscribe({ fromPosition: from, streamPrefix: prefix }).pipe(take(expectedTotal), toArray()));
          // Each append's start and acknowledgement, to check that an append acknowledged before another
          // started has the lower positions (commit order is log order).
          const timeline: Array<{ started: number; acked: number; positions: number[] }> = [];
          let clock = 0;
          await Promise.all(
            plans.map(async (plan, w) => {
              for (const [i, count] of plan.entries()) {
                const started = clock++;
                const result = await writers[w]!.append(`${prefix}${w}-${i % 3}`, Array.from({ length: count }, () => cordon(`n${w}`)));
                timeline.push({ started, acked: clock++, positions: result.positions });
              }
            }),
          );
          const events = await collected;
          const positions = events.map((e) => e.position);
          expect(new Set(positions).size).toBe(expectedTotal);
          expect([...positions].sort((a, b) => a - b)).toEqual(positions);
          expect(positions).toEqual(timeline.flatMap((t) => t.positions).sort((a, b) => a - b));
          for (const a of timeline) for (const b of timeline) if (a.acked < b.started) expect(Math.max(...a.positions)).toBeLessThan(Math.min(...b.positions));
        }),
        { numRuns: 8 },
      );
    });

    it('property: of N concurrent appends with the same expected version exactly one succeeds', async () => {
      const writers = [store, await openStore(), await openStore()];
      await fc.assert(
        fc.asyncProperty(fc.integer({ min: 2, max: 12 }), fc.constantFrom<number | 'no_stream'>(0, 'no_stream', 1), async (n, expected) => {
          const s = stream();
          if (expected === 1) await store.append(s, [cordon('n')]);
          const results = await Promise.allSettled(Array.from({ length: n }, (_, i) => writers[i % writers.length]!.append(s, [cordon('n', `attempt ${i}`)], { expectedVersion: expected })));
          const ok = results.filter((r) => r.status === 'fulfilled');
          expect(ok).toHaveLength(1);
          for (const r of results) if (r.status === 'rejected') expect(r.reason).toMatchObject({ code: 'LEDGER_WRONG_EXPECTED_VERSION' });
          expect(await store.readStream(s)).toHaveLength(expected === 1 ? 2 : 1);
        }),
        { numRuns: 15 },
      );
    });

    it('property: retrying an append after a timeout never duplicates', async () => {
      await fc.assert(
        fc.asyncProperty(fc.integer({ min: 1, max: 5 }), fc.integer({ min: 1, max: 4 }), async (events, retries) => {
          const s = stream();
          const batch = Array.from({ length: events }, (_, i) => cordon('n', `r${i}`, randomUUID()));
          // The caller gives up before the acknowledgement arrives (a timeout), while the commit goes ahead.
          const timedOut = await Promise.race([store.append(s, batch).then(() => 'acked' as const), Promise.resolve('timeout' as const)]);
          expect(timedOut).toBe('timeout');
          const outcomes = await Promise.all(Array.from({ length: retries }, () => store.append(s, batch)));
          const stored = await store.readStream(s);
          expect(stored.map((e) => e.eventId)).toEqual(batch.map((e) => e.eventId));
          for (const o of outcomes) expect(o.positions).toEqual(stored.map((e) => e.position));
        }),
        { numRuns: 15 },
      );
    });

    it('property: folding readStream equals folding readAll filtered to that stream', async () => {
      await fc.assert(
        fc.asyncProperty(fc.array(fc.tuple(fc.integer({ min: 0, max: 3 }), fc.string({ minLength: 1, maxLength: 20 })), { minLength: 1, maxLength: 25 }), async (ops) => {
          const prefix = `fold-${randomUUID().slice(0, 8)}-`;
          await Promise.all(ops.map(([target, reason]) => store.append(`${prefix}${target}`, [cordon('n', reason)])));
          const fold = (events: RecordedEvent[]): string[] => events.map((e) => `${e.streamVersion}:${(e.data as { reason: string }).reason}`);
          const all = await store.readAll({ streamPrefix: prefix, limit: 1000 });
          for (let target = 0; target <= 3; target += 1) {
            const name = `${prefix}${target}`;
            expect(fold(await store.readStream(name))).toEqual(fold(all.filter((e) => e.stream === name)));
          }
        }),
        { numRuns: 10 },
      );
    });

    it('property: verifyChain detects any single altered, deleted or reordered row', async () => {
      const { url: chainUrl, drop: dropChain } = await freshDatabase(backend.adminUrl!);
      const chainStore = await EventStore.open({ connectionString: chainUrl });
      const admin = new pg.Client({ connectionString: chainUrl });
      await admin.connect();
      // The log's triggers refuse rewriting it; a superuser can step around them, and that is the attacker here.
      await admin.query('SET session_replication_role = replica');
      try {
        for (let i = 0; i < 12; i += 1) await chainStore.append(`node-${i % 4}`, [cordon(`n${i}`, `reason ${i}`), cordon(`n${i}`, `again ${i}`)]);
        expect(await chainStore.verifyChain()).toMatchObject({ ok: true, checked: 24 });
        // Mutations are committed (the verifier reads on its own connections), then undone from this copy.
        await admin.query('CREATE TABLE pristine AS SELECT * FROM ledger_events');
        await fc.assert(
          fc.asyncProperty(fc.constantFrom('alter-data', 'alter-actor', 'alter-time', 'delete', 'reorder'), fc.integer({ min: 1, max: 24 }), async (mutation, position) => {
            try {
              const other = position === 24 ? 23 : position + 1;
              switch (mutation) {
                case 'alter-data':
                  await admin.query(`UPDATE ledger_events SET data = jsonb_set(data, '{reason}', '"rewritten"') WHERE position = $1`, [position]);
                  break;
                case 'alter-actor':
                  await admin.query(`UPDATE ledger_events SET actor = '{"kind":"operator","id":"mallory"}' WHERE position = $1`, [position]);
                  break;
                case 'alter-time':
                  await admin.query(`UPDATE ledger_events SET recorded_at = recorded_at - interval '1 hour' WHERE position = $1`, [position]);
                  break;
                case 'delete':
                  await admin.query('DELETE FROM ledger_events WHERE position = $1', [position]);
                  break;
                case 'reorder':
                  await admin.query('UPDATE ledger_events SET position = -1 WHERE position = $1', [position]);
                  await admin.query('UPDATE ledger_events SET position = $1 WHERE position = $2', [position, other]);
                  await admin.query('UPDATE ledger_events SET position = $1 WHERE position = -1', [other]);
                  break;
              }
              const verdict = await chainStore.verifyChain();
              expect(verdict.ok).toBe(false);
              if (!verdict.ok) expect(verdict.firstBrokenPosition).toBe(mutation === 'reorder' ? Math.min(position, other) : position);
            } finally {
              await admin.query('BEGIN; DELETE FROM ledger_events; INSERT INTO ledger_events SELECT * FROM pristine; COMMIT');
            }
          }),
          { numRuns: 40 },
        );
        expect((await chainStore.verifyChain()).ok).toBe(true);
      } finally {
        await admin.end();
        await chainStore.close();
        await dropChain();
      }
    });
  });
}
