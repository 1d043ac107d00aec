/**
 * What the snapshot-based time travel of earlier versions left in a database: the `as_of_snapshots` catalogue, the
 * `as_of_snapshot_<id>` copies and the `as_of_view_<engine>_<n>` work schemas. Versioned read models answer every
 * question those answered, so an engine that starts drops them (they could be several times the size of the log).
 */
import { sql, type Kysely } from 'kysely';
import type { DynamicDatabase } from '../../src/ledger/index.js';

/** Drops the snapshot copies, work schemas and catalogue left by an earlier version; the schemas dropped. */
export async function dropSnapshotRemnants(db: Kysely<DynamicDatabase>): Promise<string[]> {
  const schemas = (
    await sql<{ nspname: string }>`SELECT nspname FROM pg_namespace WHERE nspname LIKE 'as\\_of\\_snapshot\\_%' OR nspname LIKE 'as\\_of\\_view\\_%'`.execute(db)
  ).rows.map((row) => row.nspname);
  for (const schema of schemas) await sql`DROP SCHEMA IF EXISTS ${sql.id(schema)} CASCADE`.execute(db);
  await sql`DROP TABLE IF EXISTS as_of_snapshot_parts, as_of_snapshots`.execute(db);
  return schemas;
}
