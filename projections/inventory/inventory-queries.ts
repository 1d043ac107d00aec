/** Typed questions of the inventory read model. */
import { sql, type Kysely } from 'kysely';
import type { InventoryTables } from './inventory-tables.js';

/** The node attributes the fleet can be counted by. */
export const inventoryDimensions = ['site', 'rack', 'manufacturer', 'model', 'bmc_firmware', 'bios_version', 'gpu_model', 'gpu_count', 'dialect'] as const;
export type InventoryDimension = (typeof inventoryDimensions)[number];

export interface InventoryCount {
  value: string | null;
  nodes: number;
}

/** How many nodes have each value of one attribute (most common first). */
export async function inventoryBy(db: Kysely<InventoryTables>, dimension: InventoryDimension): Promise<InventoryCount[]> {
  if (!inventoryDimensions.includes(dimension)) throw new Error(`unknown inventory dimension '${dimension}'`);
  const rows = await db
    .selectFrom('inventory_nodes')
    .select([sql<string | null>`${sql.ref(dimension)}::text`.as('value'), sql<number>`count(*)::int`.as('nodes')])
    .groupBy(dimension)
    .orderBy('nodes', 'desc')
    .orderBy('value')
    .execute();
  return rows.map((row: any) => ({ value: row.value, nodes: row.nodes }));
}

/** How many nodes run each version of one firmware component (by normalized version). */
export async function firmwareVersions(db: Kysely<InventoryTables>, component: string): Promise<Array<{ version: string; nodes: number; firstSeenAt: Date }>> {
  const rows = await db
    .selectFrom('inventory_firmware')
    .select(['normalized_version', sql<number>`count(*)::int`.as('nodes'), sql<Date>`min(first_seen_at)`.as('first_seen_at')])
    .where('component', '=', component)
    .groupBy('normalized_version')
    .orderBy('first_seen_at')
    .execute();
  return rows.map((row: any) => ({ version: row.normalized_version, nodes: row.nodes, firstSeenAt: row.first_seen_at }));
}

export interface HeterogeneityRow {
  manufacturer: string | null;
  model: string | null;
  component: string;
  version: string;
  nodes: number;
  firstSeenAt: Date;
}

/**
 * The heterogeneity report: every distinct (vendor, model, firmware component, version) with its node count,
 * the oldest (first seen) first. BMC firmware and BIOS appear as components `BMC` and `BIOS` from the node
 * inventory as well as under their own names from the firmware inventory.
 */
export async function heterogeneityReport(db: Kysely<InventoryTables>): Promise<HeterogeneityRow[]> {
  const result = await sql<any>`
    WITH facts AS (
      SELECT n.manufacturer, n.model, f.component, f.normalized_version AS version, f.first_seen_at, f.node_id
        FROM ${sql.table('inventory_firmware')} f JOIN ${sql.table('inventory_nodes')} n USING (node_id)
      UNION ALL
      SELECT manufacturer, model, 'BMC', bmc_firmware, first_seen_at, node_id FROM ${sql.table('inventory_nodes')} WHERE bmc_firmware IS NOT NULL
      UNION ALL
      SELECT manufacturer, model, 'BIOS', bios_version, first_seen_at, node_id FROM ${sql.table('inventory_nodes')} WHERE bios_version IS NOT NULL
    )
    SELECT manufacturer, model, component, version, count(DISTINCT node_id)::int AS nodes, min(first_seen_at) AS first_seen_at
      FROM facts GROUP BY manufacturer, model, component, version
     ORDER BY min(first_seen_at), manufacturer, model, component, version`.execute(db);
  return result.rows.map((row) => ({ manufacturer: row.manufacturer, model: row.model, component: row.component, version: row.version, nodes: row.nodes, firstSeenAt: row.first_seen_at }));
}

/** One node's row of `inventory_nodes` as stored (column names), or undefined. */
export async function inventoryNodeRow(db: Kysely<InventoryTables>, nodeId: string): Promise<InventoryTables['inventory_nodes'] | undefined> {
  return db.selectFrom('inventory_nodes').selectAll().where('node_id', '=', nodeId).executeTakeFirst();
}

/** One node's rows of `inventory_firmware` as stored, by component. */
export async function firmwareRowsOfNode(db: Kysely<InventoryTables>, nodeId: string): Promise<Array<InventoryTables['inventory_firmware']>> {
  return db.selectFrom('inventory_firmware').selectAll().where('node_id', '=', nodeId).orderBy('component').execute();
}

/** The columns of `inventory_nodes` a page may be filtered on by equality. */
export type InventoryTextColumn = 'site' | 'rack' | 'manufacturer' | 'model' | 'dialect' | 'source' | 'gpu_model' | 'bmc_model' | 'bmc_firmware' | 'bios_version';

/** Rows of `inventory_nodes` as stored, by node id after `after`, each filter an equal column; at most `limit`. */
export async function inventoryNodeRows(
  db: Kysely<InventoryTables>,
  filter: { after: string | null; equal: ReadonlyArray<[InventoryTextColumn, string | undefined]>; limit: number },
): Promise<Array<InventoryTables['inventory_nodes']>> {
  let query = db.selectFrom('inventory_nodes').selectAll();
  if (filter.after !== null) query = query.where('node_id', '>', filter.after);
  for (const [column, value] of filter.equal) if (value !== undefined) query = query.where(column, '=', value);
  return query.orderBy('node_id').limit(filter.limit).execute();
}

/** Every node's observed version of the components whose name contains `component` (case-insensitive). */
export async function firmwareOfComponent<DB>(db: Kysely<DB>, component: string): Promise<Array<{ node_id: string; version: string; updateable: boolean | null }>> {
  const rows = await sql<{ node_id: string; version: string; updateable: boolean | null }>`
    SELECT node_id, version, updateable FROM inventory_firmware WHERE component ILIKE ${`%${component}%`}`.execute(db);
  return rows.rows;
}
