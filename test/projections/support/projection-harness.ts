/** A fresh ledger and the real projection runner, for projection tests. */
import type { Kysely } from 'kysely';
import type { Projection } from '../../../projections/index.js';
import { EventStore, ProjectionRunner } from '../../../src/ledger/index.js';
import { freshDatabase } from '../../support/backends.js';

export interface Harness {
  store: EventStore;
  db: Kysely<any>;
  close(): Promise<void>;
}

export async function openHarness(adminUrl: string): Promise<Harness> {
  const database = await freshDatabase(adminUrl);
  const store = await EventStore.open({ connectionString: database.url, pollIntervalMs: 50, poolSize: 4 });
  return {
    store,
    db: store.db as unknown as Kysely<any>,
    async close() {
      await store.close();
      await database.drop();
    },
  };
}

/** Waits until every projection of the runner has applied the log up to its head. */
export async function caughtUp(store: EventStore, runner: Pick<ProjectionRunner, 'status'>, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const head = (await store.head()).position;
    const statuses = await runner.status();
    const failed = statuses.find((s) => s.state === 'failed');
    if (failed) throw new Error(`projection ${failed.name} failed: ${JSON.stringify(failed.error)}`);
    // A specification never lets a projection set an event aside unnoticed.
    const setAside = statuses.find((s) => s.setAside > 0);
    if (setAside) throw new Error(`projection ${setAside.name} set ${setAside.setAside} event(s) aside`);
    if (statuses.every((s) => s.position >= head && s.state === 'running')) return;
    if (Date.now() > deadline) throw new Error(`projections did not catch up: ${JSON.stringify(statuses)}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** Runs the projections over everything in the log (start, catch up, stop). */
export async function project(store: EventStore, projections: readonly Projection[]): Promise<void> {
  const runner = new ProjectionRunner(store, projections, { batchSize: 500 });
  await runner.start();
  try {
    await caughtUp(store, runner);
  } finally {
    await runner.stop();
  }
}

/** Every row of the tables, sorted, for comparing two runs. */
export async function snapshot(db: Kysely<any>, tables: readonly string[]): Promise<Record<string, unknown[]>> {
  const result: Record<string, unknown[]> = {};
  for (const table of tables) {
    const rows = await db.selectFrom(table).selectAll().execute();
    result[table] = rows.map((row) => JSON.stringify(row)).sort();
  }
  return result;
}
