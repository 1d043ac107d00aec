/**
 * Which read models keep history, and the views time travel reads them through (`support/version-views.ts`).
 * A projection named here answers questions as of a point from its versioned tables; a table or column not kept
 * (liveness gaps, topology, the per-poll liveness columns) is absent from the as-of views, so a question that needs
 * it is refused rather than answered from the present.
 */
import type { Kysely } from 'kysely';
import type { DynamicDatabase } from '../src/ledger/index.js';
import { alarmsTable } from './alarms/alarms-table.js';
import { driftFieldsTable, driftNodesTable } from './drift/drift-tables.js';
import { inventoryFirmwareTable, inventoryNodesTable } from './inventory/inventory-tables.js';
import { livenessNodesTable } from './liveness/liveness-tables.js';
import { asOfSchema, createAsOfViews } from './support/version-views.js';
import type { VersionedTableSpec } from './support/versions.js';

export { setAsOfPosition } from './support/version-views.js';

/** Per projection, the tables whose history it keeps (and that its as-of views show). */
export const versionedReadModels: Readonly<Record<string, readonly VersionedTableSpec[]>> = {
  liveness: [livenessNodesTable],
  inventory: [inventoryNodesTable, inventoryFirmwareTable],
  drift: [driftNodesTable, driftFieldsTable],
  alarms: [alarmsTable],
};

/** Makes (or replaces) the as-of views of every versioned table: after the projections created their tables. */
export async function ensureAsOfViews(db: Kysely<DynamicDatabase>): Promise<void> {
  await createAsOfViews(db, Object.values(versionedReadModels).flat());
}

/** The schema the as-of views live in, for a reader's `withSchema`. */
export const asOfViewSchema = asOfSchema;
