/**
 * Fleet answers as of an instant, or of a position vector (a position per site). An instant T becomes, per site, the
 * last position of its log recorded at or before T on the site's clock (the prefix before the first row recorded
 * after T), within what the centre verified. A site that is not live and whose last heartbeat heard is older than T
 * (partitioned, catching up) is answered as far as the centre holds it, and says so (`complete: false`, `heardUntil`):
 * never silently stale. Each site's read models are rebuilt to its position from its replicated log
 * (src/federation/site-read-models.ts).
 */
import type { Kysely } from 'kysely';
import type pg from 'pg';
import { livenessNodeRows, livenessStateCounts, type LivenessTables } from '../../projections/index.js';
import type { DynamicDatabase } from '../ledger/index.js';
import { CentreError } from './centre-errors.js';
import type { SiteReadModels } from './site-read-models.js';

export interface AsOfQuestion {
  /** An instant (site clocks); or, instead, */
  instant?: Date;
  /** a position per site (sites left out are answered at their verified position). */
  vector?: Readonly<Record<string, number>>;
}

export interface SiteAsOf {
  site: string;
  position: number;
  /** False when the centre's copy of the site's log does not reach the instant asked. */
  complete: boolean;
  /** The site-clock time of the newest heartbeat the centre holds of the site. */
  heardUntil: string | null;
}

/** Parses `site:position,site:position` (the `at` parameter). */
export function parseVector(text: string, sites: readonly string[]): Record<string, number> {
  const vector: Record<string, number> = {};
  for (const part of text.split(',').filter((p) => p.length > 0)) {
    const match = /^([a-z0-9-]+):(\d+)$/.exec(part);
    if (!match || !sites.includes(match[1]!)) throw new CentreError('CENTRE_INVALID_REQUEST', { field: 'at', reason: `'${part}' is not site:position for a federated site (${sites.join(', ')})` }, `at: '${part}' is not site:position`);
    vector[match[1]!] = Number(match[2]);
  }
  return vector;
}

/** Each site's position for the question, with whether the centre holds the site's log that far. */
export async function positionsFor(pool: pg.Pool, sites: readonly string[], question: AsOfQuestion): Promise<SiteAsOf[]> {
  const answers: SiteAsOf[] = [];
  for (const site of sites) {
    const { rows } = await pool.query<{ verified: string; heard: Date | null; state: string | null; first_after: string | null }>(
      `SELECT w.verified_position AS verified, h.recorded_at AS heard, st.state,
              (SELECT min(position) FROM ledger_events e WHERE e.site = $1 AND e.recorded_at > $2 AND e.position <= w.verified_position) AS first_after
         FROM fleet_site_witness w LEFT JOIN fleet_site_heard h USING (site) LEFT JOIN fleet_site_state st USING (site) WHERE w.site = $1`,
      [site, question.instant ?? new Date(8.64e15)],
    );
    const row = rows[0];
    const verified = Number(row?.verified ?? 0);
    const heard = row?.heard ?? null;
    const asked = question.vector?.[site];
    if (asked !== undefined && asked > verified) throw new CentreError('CENTRE_INVALID_REQUEST', { field: 'at', reason: `site ${site} is verified here up to ${verified}, not ${asked}` }, `at: ${site} is verified here up to ${verified}`);
    const position = asked ?? (question.instant && row?.first_after ? Number(row.first_after) - 1 : verified);
    // A live site's log is here to within its replication lag; any other is here up to its last heartbeat heard.
    const complete = question.instant ? row?.state === 'live' || (heard !== null && heard >= question.instant) : true;
    answers.push({ site, position, complete, heardUntil: heard ? heard.toISOString() : null });
  }
  return answers;
}

const liveness = (db: Kysely<DynamicDatabase>): Kysely<LivenessTables> => db as unknown as Kysely<LivenessTables>;

/** Liveness counts per site and for the fleet, as of the question. */
export async function fleetLivenessAsOf(pool: pg.Pool, readModels: SiteReadModels, sites: readonly string[], question: AsOfQuestion) {
  const fleet: Record<string, number> = {};
  const parts = [];
  for (const at of await positionsFor(pool, sites, question)) {
    const counts = await readModels.atPosition(at.site, at.position, (db) => livenessStateCounts(liveness(db)));
    for (const [state, n] of Object.entries(counts)) fleet[state] = (fleet[state] ?? 0) + n;
    parts.push({ ...at, counts });
  }
  return { asOf: question.instant?.toISOString() ?? null, vector: Object.fromEntries(parts.map((p) => [p.site, p.position])), fleet, sites: parts };
}

/** Nodes (of one state, up to `limit` per site) as of the question, each with its site's position and completeness. */
export async function fleetNodesAsOf(pool: pg.Pool, readModels: SiteReadModels, sites: readonly string[], question: AsOfQuestion, filter: { state?: string; limit: number }) {
  const nodes = [];
  const positions = await positionsFor(pool, sites, question);
  for (const at of positions) {
    const rows = await readModels.atPosition(at.site, at.position, (db) => livenessNodeRows(liveness(db), { after: null, limit: filter.limit, ...(filter.state ? { state: filter.state } : {}) }));
    for (const row of rows) nodes.push({ nodeId: row.node_id, site: at.site, rack: row.rack ?? null, state: row.state, position: at.position, complete: at.complete });
  }
  return { asOf: question.instant?.toISOString() ?? null, vector: Object.fromEntries(positions.map((p) => [p.site, p.position])), nodes };
}
