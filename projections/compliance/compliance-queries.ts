/**
 * Firmware compliance: a query over the drift and inventory read models (it owns no table). Per component, how
 * many nodes are at their declared baseline, above it, below it, or unknown (baseline declared, version never
 * observed); and which nodes a rollout to a target version would have to touch.
 */
import { sql, type Kysely } from 'kysely';
import type { DriftTables } from '../drift/drift-tables.js';
import type { InventoryTables } from '../inventory/inventory-tables.js';
import { normalizeFirmwareVersion } from '../../src/firmware/index.js';
import { compareVersionOrder } from './version-order.js';

export type ComplianceStatus = 'at-baseline' | 'above' | 'below' | 'unknown';

export interface ComplianceNode {
  nodeId: string;
  component: string;
  declared: string;
  observed: string | null;
  status: ComplianceStatus;
}

export interface ComponentCompliance {
  component: string;
  atBaseline: number;
  above: number;
  below: number;
  unknown: number;
}

/** Every node's status against its own declared baseline, per component. */
export async function complianceByNode(db: Kysely<DriftTables & InventoryTables>, component?: string): Promise<ComplianceNode[]> {
  let query = db
    .selectFrom('drift_fields as f')
    .leftJoin('drift_nodes as n', 'n.node_id', 'f.node_id')
    .select(['f.node_id', 'f.field', 'f.kind', 'f.declared', 'f.observed', sql<string | null>`n.observed->>'dialect'`.as('dialect')])
    .where('f.field', 'like', 'firmware:%');
  if (component) query = query.where('f.field', '=', `firmware:${component}`);
  const rows = await query.orderBy('f.field').orderBy('f.node_id').execute();
  return rows.map((row: any) => {
    const name = (row.field as string).slice('firmware:'.length);
    let status: ComplianceStatus;
    if (row.kind === 'match') status = 'at-baseline';
    else if (row.observed === null) status = 'unknown';
    else {
      const dialect = row.dialect ?? 'generic';
      const order = compareVersionOrder(normalizeFirmwareVersion(dialect, name, row.observed).normalized, normalizeFirmwareVersion(dialect, name, row.declared).normalized);
      status = order > 0 ? 'above' : order < 0 ? 'below' : 'at-baseline';
    }
    return { nodeId: row.node_id, component: name, declared: row.declared, observed: row.observed, status };
  });
}

/** Counts per component: at baseline, above, below, unknown. */
export async function complianceSummary(db: Kysely<DriftTables & InventoryTables>): Promise<ComponentCompliance[]> {
  const summary = new Map<string, ComponentCompliance>();
  for (const node of await complianceByNode(db)) {
    let entry = summary.get(node.component);
    if (!entry) summary.set(node.component, (entry = { component: node.component, atBaseline: 0, above: 0, below: 0, unknown: 0 }));
    if (node.status === 'at-baseline') entry.atBaseline += 1;
    else entry[node.status] += 1;
  }
  return [...summary.values()];
}

export interface RolloutTarget {
  nodeId: string;
  current: string | null;
  /** `below` or `above` the target, or `unknown` (the component was never observed on the node). */
  status: Exclude<ComplianceStatus, 'at-baseline'>;
}

/**
 * The nodes a rollout of `component` to `targetVersion` would have to touch: every observed node whose running
 * version (normalized by its dialect) is not the target, plus the inventoried nodes where the component was
 * never seen. `manufacturer` narrows to one vendor's nodes.
 */
export async function rolloutTargets(db: Kysely<DriftTables & InventoryTables>, component: string, targetVersion: string, options: { manufacturer?: string } = {}): Promise<RolloutTarget[]> {
  let nodes = db.selectFrom('inventory_nodes').select(['node_id', 'dialect']);
  if (options.manufacturer) nodes = nodes.where('manufacturer', '=', options.manufacturer);
  const inventoried = await nodes.orderBy('node_id').execute();
  const running = new Map(
    (await db.selectFrom('inventory_firmware').select(['node_id', 'version', 'normalized_version']).where(sql<boolean>`lower(component) = lower(${component})`).execute()).map((row: any) => [
      row.node_id as string,
      row as { version: string; normalized_version: string },
    ]),
  );
  const targets: RolloutTarget[] = [];
  for (const node of inventoried as Array<{ node_id: string; dialect: string | null }>) {
    const current = running.get(node.node_id);
    if (!current) {
      targets.push({ nodeId: node.node_id, current: null, status: 'unknown' });
      continue;
    }
    const target = normalizeFirmwareVersion(node.dialect ?? 'generic', component, targetVersion).normalized;
    const order = compareVersionOrder(current.normalized_version, target);
    if (order !== 0) targets.push({ nodeId: node.node_id, current: current.version, status: order < 0 ? 'below' : 'above' });
  }
  return targets;
}

/** A node as a rollout plan sees it: its topology, what inventory observed of it, and its liveness state. */
export interface RolloutCandidateRow {
  node_id: string;
  site: string;
  rack: string;
  pdus: unknown;
  tors: unknown;
  cdu: string | null;
  manufacturer: string | null;
  model: string | null;
  bmc_firmware: string | null;
  state: string | null;
}

/** Every node of the topology, with its rack's feeds, its inventory and its liveness state (null where unknown). */
export async function rolloutCandidateRows<DB>(db: Kysely<DB>): Promise<RolloutCandidateRow[]> {
  const rows = await sql<RolloutCandidateRow>`
    SELECT t.node_id, t.site, t.rack, r.pdus, r.tors, r.cdu, i.manufacturer, i.model, i.bmc_firmware, l.state
      FROM topology_nodes t
      LEFT JOIN topology_racks r ON r.rack = t.rack
      LEFT JOIN inventory_nodes i ON i.node_id = t.node_id
      LEFT JOIN liveness_nodes l ON l.node_id = t.node_id`.execute(db);
  return rows.rows;
}
