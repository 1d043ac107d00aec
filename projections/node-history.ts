/**
 * One node's history as intervals, read from the history views (`liveness_history`, `inventory_history`,
 * `alarms_history`): its liveness states, its observed inventory and its alarms, each with the recording instants and
 * the log positions between which it held, limited to those overlapping a window. Exact: the intervals are
 * the row versions the projections wrote (`support/versions.ts`), merged only where the state shown did not change.
 */
import { sql, type Kysely } from 'kysely';
import type { AlarmsTables } from './alarms/alarms-table.js';
import type { InventoryTables } from './inventory/inventory-tables.js';
import type { LivenessStatus } from './liveness/liveness-evolve.js';
import type { LivenessTables } from './liveness/liveness-tables.js';

/** When an interval held: instants, and the log positions of the versions (from included, to excluded; null: still). */
export interface HistoryInterval {
  from: Date;
  to: Date | null;
  fromPosition: number;
  toPosition: number | null;
}

export interface LivenessInterval extends HistoryInterval {
  state: LivenessStatus;
  site: string | null;
  rack: string | null;
  darkSince: Date | null;
}

export interface InventoryInterval extends HistoryInterval {
  manufacturer: string | null;
  model: string | null;
  serial: string | null;
  bmcFirmware: string | null;
  biosVersion: string | null;
  gpuModel: string | null;
  gpuCount: number | null;
}

/** An alarm from the event that opened it to the one that closed it (its own `openedAt`/`closedAt` are the facts' times). */
export interface AlarmInterval extends HistoryInterval {
  alarmId: string;
  kind: string;
  severity: string;
  /** As it stood last (a drift alarm's summary follows the findings). */
  summary: string;
  openedAt: Date;
  /** Null while open. */
  closedAt: Date | null;
  acknowledgedBy: string | null;
}

export interface NodeHistory {
  nodeId: string;
  liveness: LivenessInterval[];
  inventory: InventoryInterval[];
  alarms: AlarmInterval[];
}

type HistoryDatabase = LivenessTables & InventoryTables & AlarmsTables;

interface AlarmRow {
  alarm_id: string;
  kind: string;
  severity: string;
  summary: string;
  acknowledged_by: string | null;
  opened_at: Date;
  closed_at: Date | null;
  from_position: number | string;
  from_at: Date;
  to_position: number | string | null;
  to_at: Date | null;
}

/** Versions whose validity overlaps [from, to]. */
const overlaps = (from: Date, to: Date) => sql<boolean>`valid_from_at <= ${to} AND (valid_to_at IS NULL OR valid_to_at > ${from})`;

/** Whether the node is known to history at all (any liveness or inventory version). */
export async function nodeHasHistory(db: Kysely<HistoryDatabase>, nodeId: string): Promise<boolean> {
  const [liveness, inventory] = await Promise.all([
    db.selectFrom('liveness_history').select('node_id').where('node_id', '=', nodeId).limit(1).executeTakeFirst(),
    db.selectFrom('inventory_history').select('node_id').where('node_id', '=', nodeId).limit(1).executeTakeFirst(),
  ]);
  return liveness !== undefined || inventory !== undefined;
}

/** The node's liveness, inventory and alarms as intervals overlapping [from, to], oldest first. */
export async function nodeHistory(db: Kysely<HistoryDatabase>, nodeId: string, window: { from: Date; to: Date }): Promise<NodeHistory> {
  const { from, to } = window;
  const [livenessRows, inventoryRows, alarmRows] = await Promise.all([
    db
      .selectFrom('liveness_history')
      .select(['state', 'site', 'rack', 'dark_since', 'valid_from', 'valid_to', 'valid_from_at', 'valid_to_at'])
      .where('node_id', '=', nodeId)
      .where(overlaps(from, to))
      .orderBy('valid_from')
      .execute(),
    db
      .selectFrom('inventory_history')
      .select(['manufacturer', 'model', 'serial', 'bmc_firmware', 'bios_version', 'gpu_model', 'gpu_count', 'valid_from', 'valid_to', 'valid_from_at', 'valid_to_at'])
      .where('node_id', '=', nodeId)
      .where(overlaps(from, to))
      .orderBy('valid_from')
      .execute(),
    sql<AlarmRow>`
      SELECT alarm_id, kind, severity,
             (array_agg(summary ORDER BY valid_from DESC))[1] AS summary,
             (array_agg(acknowledged_by ORDER BY valid_from DESC))[1] AS acknowledged_by,
             min(opened_at) AS opened_at, max(closed_at) AS closed_at,
             min(valid_from) AS from_position, min(valid_from_at) AS from_at,
             min(valid_from) FILTER (WHERE status = 'closed') AS to_position, min(valid_from_at) FILTER (WHERE status = 'closed') AS to_at
        FROM alarms_history WHERE node_id = ${nodeId}
       GROUP BY alarm_id, kind, severity
      HAVING min(valid_from_at) <= ${to} AND coalesce(min(valid_from_at) FILTER (WHERE status = 'closed'), 'infinity') > ${from}
       ORDER BY min(valid_from), alarm_id`.execute(db),
  ]);
  const interval = (row: { valid_from: number; valid_to: number | null; valid_from_at: Date; valid_to_at: Date | null }): HistoryInterval => ({
    from: row.valid_from_at,
    to: row.valid_to_at,
    fromPosition: Number(row.valid_from),
    toPosition: row.valid_to === null ? null : Number(row.valid_to),
  });
  const liveness = merged(
    livenessRows.map((row) => ({ ...interval(row), state: row.state as LivenessStatus, site: row.site, rack: row.rack, darkSince: row.dark_since })),
    (a, b) => a.state === b.state && a.site === b.site && a.rack === b.rack && a.darkSince?.getTime() === b.darkSince?.getTime(),
  );
  const inventory = merged(
    inventoryRows.map((row) => ({
      ...interval(row),
      manufacturer: row.manufacturer,
      model: row.model,
      serial: row.serial,
      bmcFirmware: row.bmc_firmware,
      biosVersion: row.bios_version,
      gpuModel: row.gpu_model,
      gpuCount: row.gpu_count,
    })),
    (a, b) =>
      a.manufacturer === b.manufacturer && a.model === b.model && a.serial === b.serial && a.bmcFirmware === b.bmcFirmware && a.biosVersion === b.biosVersion && a.gpuModel === b.gpuModel && a.gpuCount === b.gpuCount,
  );
  const alarms = alarmRows.rows.map((row) => ({
    from: row.from_at,
    to: row.to_at,
    fromPosition: Number(row.from_position),
    toPosition: row.to_position === null ? null : Number(row.to_position),
    alarmId: row.alarm_id,
    kind: row.kind,
    severity: row.severity,
    summary: row.summary,
    openedAt: row.opened_at,
    closedAt: row.closed_at,
    acknowledgedBy: row.acknowledged_by,
  }));
  return { nodeId, liveness, inventory, alarms };
}

/** Adjacent intervals that show the same thing (versions that differ only in columns not shown) as one. */
function merged<T extends HistoryInterval>(intervals: T[], same: (a: T, b: T) => boolean): T[] {
  const out: T[] = [];
  for (const next of intervals) {
    const last = out[out.length - 1];
    if (last && last.toPosition === next.fromPosition && same(last, next)) out[out.length - 1] = { ...last, to: next.to, toPosition: next.toPosition };
    else out.push(next);
  }
  return out;
}
