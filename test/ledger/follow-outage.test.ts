/**
 * A follower of the log outlives its database: while the database refuses connections and every session is cut,
 * `follow` waits (it used to reject with `head failed`, and every caller that did not catch it ended the process);
 * once the database is back it delivers what was appended, in order, nothing skipped or repeated. The Merkle follower
 * and the projections build on the same rule (`test/cli/start-outage.test.ts` runs them under a real outage).
 */
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { EventStore, isStoreUnavailable, LedgerError } from '../../src/ledger/index.js';
import { backends, freshDatabase } from '../support/backends.js';
import { cordon } from '../support/ledger-fixtures.js';

describe.each(backends())('$name backend: a follower of the log while the database is away', (backend) => {
  const cleanups: Array<() => Promise<unknown>> = [];
  afterAll(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup();
  });

  it.skipIf(backend.unavailable !== null)('pauses instead of rejecting, and delivers what was appended once the database is back', async () => {
    const database = await freshDatabase(backend.adminUrl!);
    cleanups.push(() => database.drop());
    const store = await EventStore.open({ connectionString: database.url, pollIntervalMs: 100 });
    cleanups.push(() => store.close());
    const stream = 'node-follow-outage';
    await store.append(stream, [cordon('follow-outage', 'before')], { expectedVersion: 'no_stream' });

    const seen: number[] = [];
    const abort = new AbortController();
    let ended: unknown = null;
    const following = store
      .follow({ fromPosition: 1 }, (batch) => void seen.push(...batch.events.map((event) => event.position)), abort.signal)
      .then(() => 'resolved', (error: unknown) => (ended = error));
    while (seen.length < 1) await new Promise((resolve) => setTimeout(resolve, 50));

    const admin = new pg.Client({ connectionString: backend.adminUrl! });
    await admin.connect();
    const name = new URL(database.url).pathname.slice(1);
    try {
      await admin.query(`ALTER DATABASE ${name} WITH ALLOW_CONNECTIONS false`);
      await admin.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()', [name]);
      // Meanwhile an append is refused as retryable, and the follower keeps trying (several polling intervals).
      await expect(store.append(stream, [cordon('follow-outage', 'refused')], { expectedVersion: 1 })).rejects.toMatchObject({ code: 'LEDGER_STORE_UNAVAILABLE', retryable: true });
      await new Promise((resolve) => setTimeout(resolve, 1_500));
      expect(ended).toBeNull();
    } finally {
      await admin.query(`ALTER DATABASE ${name} WITH ALLOW_CONNECTIONS true`);
      await admin.end();
    }

    let appended: number | null = null;
    for (let tries = 0; appended === null; tries += 1) {
      appended = await store.append(stream, [cordon('follow-outage', 'after')], { expectedVersion: 1 }).then(
        (result) => result.positions[0]!,
        (error: unknown) => {
          if (tries > 50 || !isStoreUnavailable(error)) throw error;
          return null;
        },
      );
      if (appended === null) await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const deadline = Date.now() + 15_000;
    while (!seen.includes(appended) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
    expect(ended).toBeNull();
    expect(seen).toEqual([1, appended]);
    abort.abort();
    expect(await following).toBe('resolved');
  });
});

describe('which errors mean the store is away', () => {
  it('names a lost or refused connection, a restarting server and one in recovery, never a refused append', () => {
    const pgError = (code: string, message: string): Error => Object.assign(new Error(message), { code });
    expect(isStoreUnavailable(new LedgerError('LEDGER_STORE_UNAVAILABLE', { operation: 'head', cause: 'x' }, 'head failed'))).toBe(true);
    expect(isStoreUnavailable(pgError('57P01', 'terminating connection due to administrator command'))).toBe(true);
    expect(isStoreUnavailable(pgError('57P03', 'the database system is starting up'))).toBe(true);
    expect(isStoreUnavailable(pgError('ECONNREFUSED', 'connect ECONNREFUSED 127.0.0.1:5432'))).toBe(true);
    expect(isStoreUnavailable(new Error('Connection terminated unexpectedly'))).toBe(true);
    expect(isStoreUnavailable(new Error('Client has encountered a connection error and is not queryable'))).toBe(true);
    expect(isStoreUnavailable(pgError('55000', 'database "x" is not currently accepting connections'))).toBe(true);
    // A node in recovery reached through a failover front for a moment (a standby, or a primary restarted in place).
    expect(isStoreUnavailable(pgError('25006', 'cannot execute UPDATE in a read-only transaction'))).toBe(true);
    expect(isStoreUnavailable(pgError('0A000', 'cannot set transaction read-write mode during recovery'))).toBe(true);
    expect(isStoreUnavailable(new LedgerError('LEDGER_CLOSED', { operation: 'head' }, 'the ledger is closed'))).toBe(false);
    expect(isStoreUnavailable(new LedgerError('LEDGER_EMPTY_APPEND', { stream: 's' }, 'empty'))).toBe(false);
    expect(isStoreUnavailable(pgError('42P01', 'relation "liveness_nodes" does not exist'))).toBe(false);
    expect(isStoreUnavailable(new TypeError("Cannot read properties of undefined (reading 'position')"))).toBe(false);
  });
});
