/**
 * The append transaction's own statements (BEGIN, the lock, COMMIT) are parsed once per connection under names. A
 * name counts as parsed only once a sequence that parsed it completed: when a write fails, the server skips the rest of
 * its sequence, the COMMIT's Parse included, and the next use on that connection must parse it again.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EventStore } from '../../src/ledger/index.js';
import { backends, freshDatabase } from '../support/backends.js';
import { cordon } from '../support/ledger-fixtures.js';

for (const backend of backends()) {
  describe.skipIf(!backend.adminUrl)(`transaction statements parsed once per connection on ${backend.name} PostgreSQL${backend.unavailable ? ` (skipped: ${backend.unavailable})` : ''}`, () => {
    let url: string;
    let drop: () => Promise<void>;

    beforeAll(async () => {
      ({ url, drop } = await freshDatabase(backend.adminUrl!));
    });
    afterAll(async () => {
      await drop?.();
    });

    it('a new connection whose first sequence fails at the write (a retry of stored ids) parses COMMIT again: the retry is answered as a replay, and appends go on', async () => {
      const store = await EventStore.open({ connectionString: url });
      const admin = new pg.Client({ connectionString: url });
      await admin.connect();
      try {
        const event = cordon('p1', 'retried', '01937a00-0000-7000-8000-00000000ab01');
        const original = await store.append('node-p1', [event]);
        await store.append('node-p2', [cordon('p2')]);
        expect(store.stats.oneRoundTripBatches).toBeGreaterThan(0);
        // The store's connections end under it (a restart of the server's side, an idle timeout): its next append
        // opens a new one, and, this process having written the head last, sends the whole transaction at once.
        await admin.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()');
        await new Promise((resolve) => setTimeout(resolve, 300));
        const before = { oneRoundTrip: store.stats.oneRoundTripBatches, misses: store.stats.speculationMisses };
        // That first sequence on the new connection fails at the write (the event id is stored): the server skips its
        // COMMIT, Parse and all. The long way on the same connection must parse COMMIT again.
        expect(await store.append('node-p1', [event])).toEqual({ ...original, idempotentReplay: true });
        expect(store.stats.speculationMisses).toBe(before.misses + 1);
        await store.append('node-p3', [cordon('p3')]);
        await store.append('node-p4', [cordon('p4')]);
        expect(store.stats.oneRoundTripBatches).toBeGreaterThan(before.oneRoundTrip);
        expect((await store.verifyChain()).ok).toBe(true);
      } finally {
        await admin.end();
        await store.close();
      }
    });
  });
}
