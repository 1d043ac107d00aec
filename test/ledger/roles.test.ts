import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Kysely } from 'kysely';
import { ensureAsOfViews, fleetProjections } from '../../projections/index.js';
import { ensureLedgerRoles, EventStore, ledgerRoles, roleConnectionString } from '../../src/ledger/index.js';
import { backends, freshDatabase } from '../support/backends.js';
import { cordon } from '../support/ledger-fixtures.js';

/** Least privilege: what each login role may not do, tried for real against PostgreSQL. */
describe('the ledger roles in PostgreSQL', () => {
  let drop: () => Promise<void>;
  let url: string;
  const passwords = { app: randomBytes(12).toString('hex'), analyst: randomBytes(12).toString('hex'), auditor: randomBytes(12).toString('hex') };
  const clients: pg.Client[] = [];

  async function as(role: keyof typeof ledgerRoles): Promise<pg.Client> {
    const client = new pg.Client({ connectionString: roleConnectionString(url, ledgerRoles[role], passwords[role]) });
    await client.connect();
    clients.push(client);
    return client;
  }

  async function refused(client: pg.Client, statement: string): Promise<string> {
    try {
      await client.query(statement);
    } catch (error) {
      return (error as Error).message;
    }
    throw new Error(`not refused: ${statement}`);
  }

  beforeAll(async () => {
    const db = await freshDatabase(backends()[0]!.adminUrl!);
    drop = db.drop;
    url = db.url;
    const store = await EventStore.open({ connectionString: url });
    await store.append('node-n1', [cordon('n1'), cordon('n1', 'again')]);
    // The real read models, with their history (versions tables, history views) and time travel's as-of views.
    const readModels = store.db as unknown as Kysely<any>;
    for (const projection of fleetProjections()) await projection.createTables(readModels);
    await ensureAsOfViews(readModels);
    await store.close();
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    await admin.query('CREATE TABLE liveness_example (node_id text PRIMARY KEY)');
    await ensureLedgerRoles(admin, passwords);
    await admin.end();
  });

  afterAll(async () => {
    for (const client of clients) await client.end().catch(() => undefined);
    await drop?.();
  });

  it('the analyst reads the read models, and may not read the log, rewrite it, read server files or run programs', async () => {
    const analyst = await as('analyst');
    expect((await analyst.query('SELECT count(*) FROM liveness_example')).rows).toHaveLength(1);
    // History: the versions, the history views, and the as-of views time travel reads (read, never written).
    for (const relation of ['liveness_nodes_versions', 'liveness_history', 'alarms_history', 'inventory_history', 'inventory_firmware_history', 'drift_history', 'as_of.liveness_nodes', 'as_of.alarms']) {
      expect((await analyst.query(`SELECT count(*) FROM ${relation}`)).rows, relation).toHaveLength(1);
    }
    expect(await refused(analyst, `DELETE FROM liveness_nodes_versions`)).toMatch(/permission denied/);
    expect(await refused(analyst, 'SELECT * FROM ledger_events')).toMatch(/permission denied/);
    expect(await refused(analyst, `UPDATE ledger_events SET data = '{}'`)).toMatch(/permission denied/);
    expect(await refused(analyst, 'DELETE FROM ledger_events')).toMatch(/permission denied/);
    expect(await refused(analyst, 'TRUNCATE ledger_events')).toMatch(/permission denied/);
    expect(await refused(analyst, 'INSERT INTO liveness_example VALUES (1)')).toMatch(/permission denied/);
    expect(await refused(analyst, `SELECT pg_read_file('/etc/passwd')`)).toMatch(/permission denied/);
    expect(await refused(analyst, `COPY (SELECT 1) TO PROGRAM 'true'`)).toMatch(/permission denied|must be superuser|pg_execute_server_program/);
  });

  it("the ledger's own role appends, and may not update, delete or truncate the log, nor move its head back", async () => {
    const app = await as('app');
    const store = await EventStore.open({ connectionString: roleConnectionString(url, ledgerRoles.app, passwords.app), migrate: false });
    try {
      await store.append('node-n2', [cordon('n2')]);
      expect((await store.head()).position).toBe(3);
    } finally {
      await store.close();
    }
    expect(await refused(app, `UPDATE ledger_events SET data = '{}' WHERE position = 1`)).toMatch(/permission denied|append-only/);
    expect(await refused(app, 'DELETE FROM ledger_events WHERE position = 3')).toMatch(/permission denied|append-only/);
    expect(await refused(app, 'TRUNCATE ledger_events')).toMatch(/permission denied|append-only/);
    expect(await refused(app, 'UPDATE ledger_head SET position = 1')).toMatch(/backwards/);
    expect(await refused(app, 'DROP TRIGGER ledger_events_append_only ON ledger_events')).toMatch(/must be owner/);
  });

  it('even the owner of the log cannot rewrite it without stepping around its triggers', async () => {
    const owner = new pg.Client({ connectionString: url });
    await owner.connect();
    clients.push(owner);
    expect(await refused(owner, `UPDATE ledger_events SET data = '{}' WHERE position = 1`)).toMatch(/append-only/);
    expect(await refused(owner, 'DELETE FROM ledger_events')).toMatch(/append-only/);
    expect(await refused(owner, 'TRUNCATE ledger_events')).toMatch(/append-only/);
  });

  it('the auditor reads the log, its head and checkpoints, and writes nothing', async () => {
    const auditor = await as('auditor');
    expect((await auditor.query('SELECT count(*)::int AS n FROM ledger_events')).rows[0].n).toBe(3);
    await auditor.query('SELECT * FROM ledger_checkpoints');
    expect(await refused(auditor, `INSERT INTO ledger_checkpoints VALUES (1, '\\x00', 'x', 'x', now())`)).toMatch(/permission denied/);
    expect(await refused(auditor, 'DELETE FROM ledger_events')).toMatch(/permission denied/);
    expect(await refused(auditor, 'SELECT * FROM liveness_example')).toMatch(/permission denied/);
  });
});
