/**
 * The two ways history is read, both plain SQL views over `<table>_versions` (`versions.ts`):
 * - History views (`<read model>_history`, beside the tables): every version with its validity as positions and as
 *   instants, for analysts (the read-only analyst role reads them as it reads the tables).
 * - As-of views (schema `as_of`, one view per versioned table, named as the table): the versions whose validity
 *   contains the position the reading transaction set (`fleet_ledger.as_of_position`, `setAsOfPosition`). A query
 *   written for the present-tense tables runs unchanged on them through `withSchema('as_of')`: one indexed read per
 *   table (GiST over the position range), no copy, no replay. A view carries only the versioned columns: what it
 *   offers is exact, what it lacks is refused (the column or table does not exist there).
 * Unset, the position is null and every as-of view is empty.
 */
import { sql, type Kysely } from 'kysely';
import type { DynamicDatabase } from '../../src/ledger/index.js';
import type { Db } from './table.js';
import { versionColumns, versionsTableName, type VersionedTableSpec } from './versions.js';

/** The schema of the as-of views. */
export const asOfSchema = 'as_of';

/** The setting a reading transaction sets to the position it reads as of. */
const positionSetting = 'fleet_ledger.as_of_position';

/** `<history>`: every version of `spec`'s rows with its validity, in the schema `db` is bound to. */
export async function createHistoryView(db: Kysely<DynamicDatabase>, spec: VersionedTableSpec, history: string): Promise<void> {
  const columns = [...versionColumns(spec), 'valid_from', 'valid_to', 'valid_from_at', 'valid_to_at'];
  await db.schema
    .createView(history)
    .orReplace()
    .as(db.selectFrom(versionsTableName(spec)).select(columns))
    .execute();
}

/** The as-of views of `specs` (made or replaced), over the versions tables in `public`. */
export async function createAsOfViews(db: Kysely<DynamicDatabase>, specs: readonly VersionedTableSpec[]): Promise<void> {
  await sql`CREATE SCHEMA IF NOT EXISTS ${sql.id(asOfSchema)}`.execute(db);
  for (const spec of specs) {
    const columns = sql.join(versionColumns(spec).map((column) => sql.id(column)));
    await sql`
      CREATE OR REPLACE VIEW ${sql.id(asOfSchema, spec.name)} AS
      SELECT ${columns} FROM ${sql.id('public', versionsTableName(spec))}
       WHERE int8range(valid_from, valid_to) @> nullif(current_setting(${sql.lit(positionSetting)}, true), '')::bigint`.execute(db);
  }
}

/** Sets the position the as-of views show, for the rest of the transaction `trx`. */
export async function setAsOfPosition(trx: Db, position: number): Promise<void> {
  if (!Number.isSafeInteger(position) || position < 0) throw new RangeError(`an as-of position is a whole number, got ${position}`);
  await sql`SELECT set_config(${positionSetting}, ${String(position)}, true)`.execute(trx);
}
