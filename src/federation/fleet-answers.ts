/**
 * The centre's fleet-wide answers: the union of the sites' read models, each site's part labelled with how the centre
 * hears the site. A partitioned or catching-up site's nodes are answered "as of T" (the last heartbeat received):
 * they are neither silently stale nor dark because of the WAN. Every answer carries the position vector it reflects
 * (the read models' position per site).
 */
import type { Kysely } from 'kysely';
import type pg from 'pg';
import { livenessNodeRows, livenessStateCounts, openAlarms, type AlarmsTables, type AlarmView, type LivenessTables } from '../../projections/index.js';
import type { DynamicDatabase } from '../ledger/index.js';
import type { SiteState } from './centre.js';
import { siteSchema } from './site-names.js';

export interface SiteView {
  site: string;
  state: SiteState;
  /** The site's nodes are shown as of this instant (site clock) when it is not live; null when live. */
  asOf: string | null;
  asOfPosition: number | null;
  partitionedSince: string | null;
  partitionPosition: number | null;
  /** When the centre first showed the current state. */
  shownAt: string | null;
  detail: string | null;
  lastHeard: { position: number; recordedAt: string; arrivedAt: string; intervalS: number } | null;
  /** The replicated log: its highest position here, and the prefix the witness verified. */
  replicatedPosition: number;
  verifiedPosition: number;
  /** The read models' position (this site's entry of the fleet's vector). */
  readModelPosition: number;
  witnessedSize: number;
  checkpointsWitnessed: number;
  refusals: Array<{ kind: string; position: number | null; reason: string | null; at: string }>;
  alarms: Array<{ code: string; summary: string; raisedAt: string }>;
}

export interface SiteLabel {
  site: string;
  state: SiteState;
  asOf: string | null;
}

export async function fleetSites(pool: pg.Pool): Promise<SiteView[]> {
  const { rows } = await pool.query(`
    SELECT s.site, st.state, st.as_of, st.as_of_position, st.partitioned_since, st.partition_position, st.shown_at, st.detail,
           h.position AS heard_position, h.recorded_at AS heard_recorded_at, h.arrived_at AS heard_arrived_at, h.interval_s,
           (SELECT max(position) FROM ledger_events e WHERE e.site = s.site) AS replicated_position,
           w.verified_position, w.witnessed_size, w.checkpoints_witnessed,
           coalesce(p.position, 0) AS read_model_position,
           coalesce((SELECT json_agg(json_build_object('kind', kind, 'position', position, 'reason', detail->>'reason', 'at', refused_at) ORDER BY id)
                       FROM fleet_site_refusals r WHERE r.site = s.site), '[]') AS refusals,
           coalesce((SELECT json_agg(json_build_object('code', code, 'summary', summary, 'raisedAt', raised_at) ORDER BY alarm_id)
                       FROM fleet_site_alarms a WHERE a.site = s.site AND a.cleared_at IS NULL), '[]') AS alarms
      FROM fleet_sites s
      LEFT JOIN fleet_site_state st USING (site)
      LEFT JOIN fleet_site_heard h USING (site)
      LEFT JOIN fleet_site_witness w USING (site)
      LEFT JOIN fleet_read_model_positions p USING (site)
     ORDER BY s.site`);
  const iso = (value: Date | null): string | null => (value ? value.toISOString() : null);
  return rows.map((row) => {
    const state = (row.state ?? 'new') as SiteState;
    return {
      site: row.site,
      state,
      asOf: state === 'live' ? null : iso(row.as_of),
      asOfPosition: row.as_of_position === null ? null : Number(row.as_of_position),
      partitionedSince: iso(row.partitioned_since),
      partitionPosition: row.partition_position === null ? null : Number(row.partition_position),
      shownAt: iso(row.shown_at),
      detail: row.detail,
      lastHeard: row.heard_position === null ? null : { position: Number(row.heard_position), recordedAt: row.heard_recorded_at.toISOString(), arrivedAt: row.heard_arrived_at.toISOString(), intervalS: Number(row.interval_s) },
      replicatedPosition: Number(row.replicated_position ?? 0),
      verifiedPosition: Number(row.verified_position ?? 0),
      readModelPosition: Number(row.read_model_position),
      witnessedSize: Number(row.witnessed_size ?? 0),
      checkpointsWitnessed: Number(row.checkpoints_witnessed ?? 0),
      refusals: row.refusals,
      alarms: row.alarms,
    };
  });
}

/** The fleet's position vector: per site, the position its read models reflect. */
export async function fleetVector(pool: pg.Pool): Promise<Record<string, number>> {
  const { rows } = await pool.query<{ site: string; position: number }>('SELECT site, position FROM fleet_read_model_positions ORDER BY site');
  return Object.fromEntries(rows.map((row) => [row.site, Number(row.position)]));
}

const labelOf = (view: SiteView): SiteLabel => ({ site: view.site, state: view.state, asOf: view.asOf });

/** Liveness counts per site and for the fleet, each site's labelled. */
export async function fleetLiveness(pool: pg.Pool, db: Kysely<DynamicDatabase>): Promise<{ vector: Record<string, number>; fleet: Record<string, number>; sites: Array<SiteLabel & { counts: Record<string, number> }> }> {
  const sites = await fleetSites(pool);
  const fleet: Record<string, number> = {};
  const parts = [];
  for (const view of sites) {
    const counts = await livenessStateCounts(db.withSchema(siteSchema(view.site)) as unknown as Kysely<LivenessTables>);
    for (const [state, n] of Object.entries(counts)) fleet[state] = (fleet[state] ?? 0) + n;
    parts.push({ ...labelOf(view), counts });
  }
  return { vector: await fleetVector(pool), fleet, sites: parts };
}

export interface FleetNode {
  nodeId: string;
  site: string;
  rack: string | null;
  state: string;
  lastContactAt: string | null;
  /** The site's label: a node of a partitioned site is shown as of then. */
  siteState: SiteState;
  asOf: string | null;
}

/** Nodes of the fleet (optionally of one state or site), up to `limit` per site, each with its site's label. */
export async function fleetNodes(pool: pg.Pool, db: Kysely<DynamicDatabase>, filter: { state?: string; site?: string; limit?: number } = {}): Promise<{ vector: Record<string, number>; nodes: FleetNode[] }> {
  const sites = (await fleetSites(pool)).filter((view) => !filter.site || view.site === filter.site);
  const nodes: FleetNode[] = [];
  for (const view of sites) {
    const rows = await livenessNodeRows(db.withSchema(siteSchema(view.site)) as unknown as Kysely<LivenessTables>, { after: null, limit: filter.limit ?? 1000, ...(filter.state ? { state: filter.state } : {}) } as never);
    for (const row of rows as unknown as Array<Record<string, unknown>>) {
      const last = row.last_contact_at;
      nodes.push({
        nodeId: String(row.node_id),
        site: view.site,
        rack: (row.rack as string | null) ?? null,
        state: String(row.state),
        lastContactAt: last instanceof Date ? last.toISOString() : last === null || last === undefined ? null : new Date(Number(last)).toISOString(),
        siteState: view.state,
        asOf: view.asOf,
      });
    }
  }
  return { vector: await fleetVector(pool), nodes };
}

/** The fleet's open alarms: the site alarms first, then each site's node alarms, labelled with their site. */
export async function fleetAlarms(pool: pg.Pool, db: Kysely<DynamicDatabase>): Promise<{ vector: Record<string, number>; siteAlarms: Array<{ site: string; code: string; summary: string; raisedAt: string }>; alarms: Array<AlarmView & SiteLabel> }> {
  const sites = await fleetSites(pool);
  const siteAlarms = sites.flatMap((view) => view.alarms.map((alarm) => ({ site: view.site, ...alarm })));
  const alarms: Array<AlarmView & SiteLabel> = [];
  for (const view of sites) {
    for (const alarm of await openAlarms(db.withSchema(siteSchema(view.site)) as unknown as Kysely<AlarmsTables>)) alarms.push({ ...alarm, ...labelOf(view) });
  }
  return { vector: await fleetVector(pool), siteAlarms, alarms };
}
