import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { startEmbeddedPostgres } from '../../src/ledger/index.js';

/** One PostgreSQL for a whole benchmark run: DATABASE_URL's server, else an embedded one in a temp folder. */
export async function benchPostgres(): Promise<{ kind: string; freshDatabase: () => Promise<string>; close: () => Promise<void> }> {
  let adminUrl = process.env.DATABASE_URL;
  let stop = async (): Promise<void> => undefined;
  let kind = 'server (DATABASE_URL)';
  if (!adminUrl) {
    const dir = mkdtempSync(join(tmpdir(), 'fleet-ledger-bench-'));
    const embedded = await startEmbeddedPostgres({ dataDir: dir, database: 'postgres' });
    adminUrl = embedded.connectionString;
    kind = 'embedded';
    stop = async () => {
      await embedded.stop();
      rmSync(dir, { recursive: true, force: true });
    };
  }
  const created: string[] = [];
  const admin = adminUrl;
  return {
    kind,
    async freshDatabase() {
      const name = `fl_bench_${randomBytes(5).toString('hex')}`;
      const client = new pg.Client({ connectionString: admin });
      await client.connect();
      await client.query(`CREATE DATABASE ${name}`);
      await client.end();
      created.push(name);
      const url = new URL(admin);
      url.pathname = `/${name}`;
      return url.toString();
    },
    async close() {
      const client = new pg.Client({ connectionString: admin });
      await client.connect();
      for (const name of created) await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await client.end();
      await stop();
    },
  };
}

export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

export function round(value: number, digits = 2): number {
  const f = 10 ** digits;
  return Math.round(value * f) / f;
}
