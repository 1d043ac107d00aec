/**
 * Fleet-wide firmware rollouts: planned at the centre as one child rollout per site (`<fleet id>.<site>`), each
 * requested on its site through the site's own API (the site plans it from its own read models and its saga runs it),
 * on behalf of the principal who asked at the centre. The centre holds only the fleet plan (who asked, for which sites,
 * with which request); each child's truth is its site's log. So:
 * - a verb (approve, pause, resume, abort) is forwarded to every child, each answered as its site answered (a cut
 *   site's child is refused with `CENTRE_SITE_UNREACHABLE`, the others go on);
 * - an approved child runs on its site through a cut, with nothing from the centre;
 * - the centre shows each child from the site's replicated log, as of the last heartbeat it heard when the site is not
 *   live (the site's label on every child).
 * A request whose selector names sites plans children on those sites only.
 * Planning again with the same id and request is idempotent: a child already requested is answered `already-requested`
 * (the site refuses a second plan under one id), a child refused before (its site was cut) is requested now.
 */
import type pg from 'pg';
import { fleetCatalogue } from '../../events/index.js';
import { evolveRollout, initialRollout, rolloutStream, rolloutSummary } from '../../sagas/index.js';
import { recordedEvent } from '../ledger/index.js';
import { CentreError } from './centre-errors.js';
import { fleetSites, type SiteLabel } from './fleet-answers.js';
import type { SiteAnswer, SiteDoors } from './site-doors.js';

export const fleetRolloutVerbs = ['approve', 'pause', 'resume', 'abort'] as const;
export type FleetRolloutVerb = (typeof fleetRolloutVerbs)[number];

export interface FleetRolloutPlan {
  fleetRolloutId: string;
  /** The sites to plan a child on (default: every federated site). */
  sites?: readonly string[] | undefined;
  /** The site API's rollout request (`POST /v1/rollouts`) without its id; each child's selector is narrowed to its site. */
  request: Record<string, unknown>;
}

/** What one site answered for its child. */
export interface ChildAnswer {
  site: string;
  rolloutId: string;
  outcome: 'recorded' | 'already-requested' | 'refused';
  status: number;
  answer: unknown;
}

export interface ChildView extends SiteLabel {
  rolloutId: string;
  /** The child as the site's replicated log says (null: not in the log the centre holds). */
  rollout: Record<string, unknown> | null;
}

/** The child of a fleet rollout on one site. */
export const childRolloutId = (fleetRolloutId: string, site: string): string => `${fleetRolloutId}.${site}`;

export async function ensureFleetRolloutTables(client: pg.ClientBase): Promise<void> {
  await client.query(`
    CREATE TABLE IF NOT EXISTS fleet_rollouts (
      fleet_rollout_id  text        PRIMARY KEY,
      request           jsonb       NOT NULL,
      sites             text[]      NOT NULL,
      requested_by      text        NOT NULL,
      requested_at      timestamptz NOT NULL DEFAULT clock_timestamp()
    );
    -- A child's stream is read from its site's replicated log.
    CREATE INDEX IF NOT EXISTS ledger_events_site_stream ON ledger_events (site, stream, position);`);
}

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** `error.details.reason` of a site's error answer, when it has one. */
function conflictReason(body: unknown): unknown {
  const error = body && typeof body === 'object' && 'error' in body ? body.error : null;
  const details = error && typeof error === 'object' && 'details' in error ? error.details : null;
  return details && typeof details === 'object' && 'reason' in details ? details.reason : undefined;
}

/** The sites a plan gets children on: those named (default every site), narrowed by the request's `selector.sites`. */
function childSites(plan: FleetRolloutPlan, selector: Record<string, unknown>, known: readonly string[]): string[] {
  const selected = Array.isArray(selector.sites) ? selector.sites.filter((site): site is string => typeof site === 'string') : null;
  const named = [...(plan.sites ?? known)];
  const unknown = named.filter((site) => !known.includes(site));
  const sites = named.filter((site) => selected === null || selected.includes(site)).sort();
  if (unknown.length > 0 || sites.length === 0) {
    const reason = unknown.length > 0 ? `not federated here: ${unknown.join(', ')}` : "no site left once the request's selector.sites is applied";
    throw new CentreError('CENTRE_INVALID_REQUEST', { field: 'sites', reason }, `sites: ${reason}`);
  }
  for (const site of sites) {
    const child = childRolloutId(plan.fleetRolloutId, site);
    if (child.length > 80) throw new CentreError('CENTRE_INVALID_REQUEST', { field: 'fleetRolloutId', reason: `child id ${child} is longer than 80 characters` }, `fleetRolloutId: child id ${child} is too long`);
  }
  return sites;
}

export class FleetRollouts {
  constructor(
    private readonly pool: pg.Pool,
    private readonly doors: SiteDoors,
    private readonly sites: () => readonly string[],
  ) {}

  /** Records the fleet plan (once per id) and requests every child not yet requested. */
  async plan(plan: FleetRolloutPlan, principal: string): Promise<{ fleetRolloutId: string; children: ChildAnswer[] }> {
    const selector = isRecord(plan.request.selector) ? plan.request.selector : {};
    const sites = childSites(plan, selector, this.sites());
    await this.pool.query('INSERT INTO fleet_rollouts (fleet_rollout_id, request, sites, requested_by) VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING', [plan.fleetRolloutId, JSON.stringify(plan.request), sites, principal]);
    // Compared as jsonb: the stored request's keys are in jsonb's order, not the caller's.
    const held = (await this.pool.query<{ same: boolean }>('SELECT request = $2::jsonb AND sites = $3::text[] AS same FROM fleet_rollouts WHERE fleet_rollout_id = $1', [plan.fleetRolloutId, JSON.stringify(plan.request), sites])).rows[0]!;
    if (!held.same) {
      throw new CentreError('CENTRE_CONFLICT', { resource: 'fleet-rollout', id: plan.fleetRolloutId, reason: 'planned before with another request or other sites' }, `fleet rollout ${plan.fleetRolloutId} was planned with another request or other sites`);
    }
    const children: ChildAnswer[] = [];
    for (const site of sites) {
      const rolloutId = childRolloutId(plan.fleetRolloutId, site);
      const body = { ...plan.request, rolloutId, selector: { ...selector, sites: [site] } };
      children.push(await this.#child(site, rolloutId, '/v1/rollouts', body, principal, `${plan.fleetRolloutId}:plan`));
    }
    return { fleetRolloutId: plan.fleetRolloutId, children };
  }

  /** Forwards a verb to every child of the fleet rollout. */
  async verb(fleetRolloutId: string, verb: FleetRolloutVerb, reason: string, principal: string, key: string): Promise<{ fleetRolloutId: string; children: ChildAnswer[] }> {
    const sites = await this.#sitesOf(fleetRolloutId);
    const children: ChildAnswer[] = [];
    for (const site of sites) {
      const rolloutId = childRolloutId(fleetRolloutId, site);
      children.push(await this.#child(site, rolloutId, `/v1/rollouts/${encodeURIComponent(rolloutId)}/${verb}`, { reason }, principal, key));
    }
    return { fleetRolloutId, children };
  }

  /** Every child as its site's replicated log says, labelled with how the centre hears the site. */
  async show(fleetRolloutId: string): Promise<{ fleetRolloutId: string; requestedBy: string; requestedAt: string; children: ChildView[] }> {
    const row = (await this.pool.query<{ sites: string[]; requested_by: string; requested_at: Date }>('SELECT sites, requested_by, requested_at FROM fleet_rollouts WHERE fleet_rollout_id = $1', [fleetRolloutId])).rows[0];
    if (!row) throw new CentreError('CENTRE_NOT_FOUND', { resource: 'fleet-rollout', id: fleetRolloutId }, `no fleet rollout ${fleetRolloutId}`);
    const views = await fleetSites(this.pool);
    const children: ChildView[] = [];
    for (const site of row.sites) {
      const view = views.find((v) => v.site === site);
      const rolloutId = childRolloutId(fleetRolloutId, site);
      children.push({ site, state: view?.state ?? 'new', asOf: view?.asOf ?? null, rolloutId, rollout: await this.#childFromLog(site, rolloutId) });
    }
    return { fleetRolloutId, requestedBy: row.requested_by, requestedAt: row.requested_at.toISOString(), children };
  }

  async list(): Promise<Array<{ fleetRolloutId: string; sites: string[]; requestedBy: string; requestedAt: string }>> {
    const { rows } = await this.pool.query<{ fleet_rollout_id: string; sites: string[]; requested_by: string; requested_at: Date }>('SELECT * FROM fleet_rollouts ORDER BY requested_at');
    return rows.map((row) => ({ fleetRolloutId: row.fleet_rollout_id, sites: row.sites, requestedBy: row.requested_by, requestedAt: row.requested_at.toISOString() }));
  }

  async #sitesOf(fleetRolloutId: string): Promise<string[]> {
    const row = (await this.pool.query<{ sites: string[] }>('SELECT sites FROM fleet_rollouts WHERE fleet_rollout_id = $1', [fleetRolloutId])).rows[0];
    if (!row) throw new CentreError('CENTRE_NOT_FOUND', { resource: 'fleet-rollout', id: fleetRolloutId }, `no fleet rollout ${fleetRolloutId}`);
    return row.sites;
  }

  /** The child's state folded from the site's log as the centre holds it (up to the prefix its witness verified). */
  async #childFromLog(site: string, rolloutId: string): Promise<Record<string, unknown> | null> {
    const { rows } = await this.pool.query(
      `SELECT * FROM ledger_events WHERE site = $1 AND stream = $2
          AND position <= (SELECT verified_position FROM fleet_site_witness WHERE site = $1) ORDER BY position`,
      [site, rolloutStream(rolloutId)],
    );
    let state = initialRollout(rolloutId);
    for (const row of rows) {
      const event = recordedEvent(row, fleetCatalogue);
      state = evolveRollout(state, { type: event.type, data: event.data, actor: event.actor, recordedAt: event.recordedAt.getTime() });
    }
    return state.plan ? rolloutSummary(state) : null;
  }

  async #child(site: string, rolloutId: string, path: string, body: unknown, principal: string, key: string): Promise<ChildAnswer> {
    let answer: SiteAnswer;
    try {
      answer = await this.doors.forward(site, { method: 'POST', path, body, onBehalfOf: principal, idempotencyKey: `${key}:${site}` });
    } catch (error) {
      if (!(error instanceof CentreError)) throw error;
      return { site, rolloutId, outcome: 'refused', status: error.status, answer: { error: { code: error.code, message: error.message, details: { ...error.details, retryable: error.retryable } } } };
    }
    const exists = answer.status === 409 && conflictReason(answer.body) === 'SAGA_EXISTS';
    const outcome = answer.status < 300 ? 'recorded' : exists && path === '/v1/rollouts' ? 'already-requested' : 'refused';
    return { site, rolloutId, outcome, status: answer.status, answer: answer.body };
  }
}
