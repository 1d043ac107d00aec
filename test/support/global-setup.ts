import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import type { TestProject } from 'vitest/node';
import { startEmbeddedPostgres, type EmbeddedPostgresHandle } from '../../src/ledger/index.js';

declare module 'vitest' {
  export interface ProvidedContext {
    embeddedAdminUrl: string;
    embeddedDataDir: string;
    serverAdminUrl: string | null;
    serverUnavailableReason: string | null;
  }
}

/** The machine's PostgreSQL service: DATABASE_URL, else the local trust-auth default. */
export const serverUrl = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

let embedded: EmbeddedPostgresHandle | null = null;
let dataDir: string | null = null;

/**
 * Starts one embedded PostgreSQL for the whole run (in a temp folder) and checks the server backend.
 * On CI the server backend is required: its absence fails the run instead of skipping half the suite.
 */
export async function setup(project: TestProject): Promise<void> {
  dataDir = mkdtempSync(join(tmpdir(), 'fleet-ledger-test-'));
  embedded = await startEmbeddedPostgres({ dataDir, database: 'postgres' });
  project.provide('embeddedAdminUrl', embedded.connectionString);
  project.provide('embeddedDataDir', dataDir);

  const client = new pg.Client({ connectionString: serverUrl, connectionTimeoutMillis: 5000 });
  try {
    await client.connect();
    await client.query('SELECT 1');
    project.provide('serverAdminUrl', serverUrl);
    project.provide('serverUnavailableReason', null);
  } catch (error) {
    const reason = `PostgreSQL server at ${serverUrl.replace(/:[^:@/]*@/, ':***@')} unreachable: ${String(error)}`;
    if (process.env.CI === 'true') throw new Error(`${reason} (CI=true: the server backend is required)`);
    project.provide('serverAdminUrl', null);
    project.provide('serverUnavailableReason', reason);
  } finally {
    await client.end().catch(() => undefined);
  }
}

export async function teardown(): Promise<void> {
  await embedded?.stop();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
}
