import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { Kysely, PostgresDialect } from 'kysely';
import { inject } from 'vitest';

export interface Backend {
  name: 'embedded' | 'server';
  adminUrl: string | null;
  /** Why this backend is absent from this run (only ever off CI). */
  unavailable: string | null;
}

/** The two backends every contract test runs against. */
export function backends(): Backend[] {
  return [
    { name: 'embedded', adminUrl: inject('embeddedAdminUrl'), unavailable: null },
    { name: 'server', adminUrl: inject('serverAdminUrl'), unavailable: inject('serverUnavailableReason') },
  ];
}

function withDatabase(adminUrl: string, database: string): string {
  const url = new URL(adminUrl);
  url.pathname = `/${database}`;
  return url.toString();
}

/** A new, empty database on the backend, dropped by the returned function. */
export async function freshDatabase(adminUrl: string): Promise<{ url: string; drop: () => Promise<void> }> {
  const name = `fl_test_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  return {
    url: withDatabase(adminUrl, name),
    async drop() {
      const client = new pg.Client({ connectionString: adminUrl });
      await client.connect();
      try {
        await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      } finally {
        await client.end();
      }
    },
  };
}

/** A fresh database on the first backend behind a small kysely pool, for tests of the table helpers; `close` drops it. */
export async function freshKysely(): Promise<{ db: Kysely<any>; close: () => Promise<void> }> {
  const fresh = await freshDatabase(backends()[0]!.adminUrl!);
  const db = new Kysely<any>({ dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: fresh.url, max: 2 }) }) });
  return {
    db,
    async close() {
      await db.destroy();
      await fresh.drop();
    },
  };
}
