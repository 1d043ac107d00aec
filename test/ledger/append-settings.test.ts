/**
 * Every append transaction commits durably (`synchronous_commit` on) and under its deadline (`statement_timeout` of
 * `appendTimeoutMs`), whatever the database's defaults say and whatever `options` the connection string carries: the
 * settings come with the group commit's connection, and where that connection lacks them, each transaction sets them.
 * Read inside the transactions themselves, by a trigger on the log's inserts.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EventStore } from '../../src/ledger/index.js';
import { backends, freshDatabase } from '../support/backends.js';
import { cordon } from '../support/ledger-fixtures.js';

for (const backend of backends()) {
  describe.skipIf(!backend.adminUrl)(`append transaction settings on ${backend.name} PostgreSQL${backend.unavailable ? ` (skipped: ${backend.unavailable})` : ''}`, () => {
    let url: string;
    let drop: () => Promise<void>;
    let admin: pg.Client;

    beforeAll(async () => {
      ({ url, drop } = await freshDatabase(backend.adminUrl!));
      // The schema first (a store opened and closed), then a trigger that notes each insert's settings, then defaults
      // that would make an append neither durable nor bounded if it took them.
      await (await EventStore.open({ connectionString: url })).close();
      admin = new pg.Client({ connectionString: url });
      await admin.connect();
      await admin.query(`
        CREATE TABLE seen_settings (synchronous_commit text, statement_timeout text);
        CREATE FUNCTION note_settings() RETURNS trigger LANGUAGE plpgsql AS $$
          BEGIN
            INSERT INTO seen_settings VALUES (current_setting('synchronous_commit'), (SELECT setting FROM pg_settings WHERE name = 'statement_timeout'));
            RETURN NULL;
          END $$;
        CREATE TRIGGER note_settings AFTER INSERT ON ledger_events FOR EACH STATEMENT EXECUTE FUNCTION note_settings();
      `);
      const database = new URL(url).pathname.slice(1);
      await admin.query(`ALTER DATABASE ${database} SET synchronous_commit = off`);
      await admin.query(`ALTER DATABASE ${database} SET statement_timeout = 0`);
    });
    afterAll(async () => {
      await admin?.end();
      await drop?.();
    });

    const appendSeveral = async (connectionString: string, tag: string): Promise<Array<{ synchronous_commit: string; statement_timeout: string }>> => {
      await admin.query('TRUNCATE seen_settings');
      const store = await EventStore.open({ connectionString, appendTimeoutMs: 4321, migrate: false });
      try {
        // The first append takes two round trips; the ones after it, one (this store wrote the head last).
        for (let i = 0; i < 4; i += 1) await store.append(`node-${tag}-${i}`, [cordon(`${tag}-${i}`)]);
        await Promise.all(Array.from({ length: 8 }, (_, i) => store.append(`node-${tag}-many-${i}`, [cordon(`${tag}-many-${i}`)])));
        expect(store.stats.oneRoundTripBatches).toBeGreaterThan(0);
      } finally {
        await store.close();
      }
      return (await admin.query<{ synchronous_commit: string; statement_timeout: string }>('SELECT * FROM seen_settings')).rows;
    };

    it('with the database defaulting to synchronous_commit off and no statement timeout, every append transaction has both set', async () => {
      const seen = await appendSeveral(url, 'defaults');
      expect(seen.length).toBeGreaterThanOrEqual(5);
      for (const row of seen) expect(row).toEqual({ synchronous_commit: 'on', statement_timeout: '4321' });
    });

    it('with a connection string whose own options replace the pool\'s, every append transaction still has both set', async () => {
      const withOptions = new URL(url);
      withOptions.searchParams.set('options', '-c synchronous_commit=off -c application_name=from-the-url');
      const seen = await appendSeveral(withOptions.toString(), 'options');
      expect(seen.length).toBeGreaterThanOrEqual(5);
      for (const row of seen) expect(row).toEqual({ synchronous_commit: 'on', statement_timeout: '4321' });
    });
  });
}
