/**
 * The centre: one PostgreSQL database that subscribes to every site's log through PostgreSQL's logical replication
 * (a subscription per site, whose replication slot on the site holds the site's backlog through a cut), witnesses
 * each site's log and checkpoints, applies the fleet's read models per site, and shows each site as it is heard:
 *
 * - `live`: its newest heartbeat arrived within two intervals and was recent when it arrived;
 * - `partitioned` since T, last heard at position P: no heartbeat for two intervals. T is the site-clock time of the
 *   last heartbeat received: everything the site committed before it is here (replication keeps commit order), so
 *   the site's nodes are shown "as of T", never as silently stale and never as dark because of the WAN. One site
 *   alarm (`SITE_PARTITIONED`), not an alarm per node;
 * - `catching-up`: heard again, but what arrives is the backlog (its heartbeats are older than two intervals when
 *   they arrive): "as of T" moves forward as it arrives; the alarm clears when the site is live again;
 * - `refused`: the site's log was rewritten, forked or rolled back (src/federation/centre-schema.ts,
 *   site-witness.ts): the centre keeps what it witnessed, stops the subscription and raises `SITE_LOG_REFUSED`.
 *
 * Nothing here ships rows: every row arrives through a subscription.
 */
import pg from 'pg';
import { redactConnectionString } from '../ledger/index.js';
import { centrePostgresSettings, ensureCentreSchema, ensureSitePartitions } from './centre-schema.js';
import { sitePublication } from './site-publication.js';
import { SiteReadModels, type RebuildComparison } from './site-read-models.js';
import { siteName, siteSlot, siteSubscription } from './site-names.js';
import { SiteWitness } from './site-witness.js';
import { SiteDoors, type SiteApi } from './site-doors.js';
import { ensureFleetRolloutTables, FleetRollouts } from './fleet-rollouts.js';

export { centrePostgresSettings };

/** What a site hands the centre (written by `fleet-ledger start --site` to `<data-dir>/site-card.json`). */
export interface SiteCard {
  site: string;
  /** The replicator role's connection string to the site's PostgreSQL (the publication's database). */
  publisherUrl: string;
  /** The site's checkpoint verifier key (`<name>+<id>+<key>`), pinned by the centre. */
  verifierKey: string;
  /** The site's heartbeat interval, until its first heartbeat says it. */
  intervalS: number;
  /** The site's API and the forwarder token it issued the centre: intents asked at the centre are forwarded there. */
  api?: SiteApi;
}

export type SiteState = 'new' | 'live' | 'partitioned' | 'catching-up' | 'refused';

export interface SiteStateChange {
  site: string;
  from: SiteState | null;
  to: SiteState;
  asOf: Date | null;
  asOfPosition: number | null;
  detail: string;
}

export interface CentreOptions {
  /** A connection string of a role that may create subscriptions (the embedded superuser). */
  connectionString: string;
  /** The centre's witness signing key (`PRIVATE+KEY+...`): every checkpoint proven is co-signed with it. */
  witnessSignerKey?: string | null;
  /** How often the sites' states are judged and their logs followed (default 1000 ms). */
  checkMs?: number;
  /** Share of a slot's bound at which the centre raises `SITE_SLOT_AT_RISK` from the site's heartbeats (default 0.5). */
  slotWarnShare?: number;
  log?: (message: string, fields?: Record<string, unknown>) => void;
  onStateChange?: (change: SiteStateChange) => void;
  /** How long a forwarded intent waits for its site's answer (default 5000 ms). */
  forwardTimeoutMs?: number;
}

interface SiteRow {
  site: string;
  verifier_key: string;
  added_at: Date;
  heard_position: number | null;
  heard_recorded_at: Date | null;
  heard_arrived_at: Date | null;
  interval_s: number | null;
  slots: Array<{ slot: string; walStatus: string | null; retainedBytes: number; limitBytes: number | null }> | null;
  now: Date;
  refusal_kind: string | null;
  refusal_position: number | null;
  refusal_reason: string | null;
  state: SiteState | null;
  partitioned_since: Date | null;
  partition_position: number | null;
  sub_enabled: boolean | null;
}

const sleep = (ms: number, signal: AbortSignal): Promise<void> =>
  new Promise((resolve) => {
    const done = (): void => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
  });

/** The libpq connection string of a subscription: the publisher's URL with bounded connection attempts. */
export function subscriptionConninfo(publisherUrl: string, site: string): string {
  const url = new URL(publisherUrl);
  url.searchParams.set('connect_timeout', '10');
  url.searchParams.set('application_name', siteSubscription(site));
  url.searchParams.set('keepalives_idle', '10');
  url.searchParams.set('keepalives_interval', '5');
  url.searchParams.set('keepalives_count', '3');
  return url.toString();
}

export class Centre {
  readonly pool: pg.Pool;
  readonly readModels: SiteReadModels;
  /** The sites' APIs, for intents forwarded from the centre. */
  readonly doors: SiteDoors;
  /** Fleet-wide rollouts: a child per site, each run by its site. */
  readonly rollouts: FleetRollouts;
  readonly #options: CentreOptions;
  readonly #witnesses = new Map<string, SiteWitness>();
  readonly #intervals = new Map<string, number>();
  readonly #abort = new AbortController();
  readonly #loops: Array<Promise<void>> = [];
  /** Per site: a rebuild comparison in progress holds the site's read models still. */
  readonly #busy = new Map<string, Promise<unknown>>();
  /** When each partitioned site's publisher was last asked about its slot. */
  readonly #probedAt = new Map<string, number>();
  /** This centre's id (its slots on the sites are named after it). */
  centreId = '';

  private constructor(options: CentreOptions) {
    this.#options = options;
    this.pool = new pg.Pool({ connectionString: options.connectionString, max: 8, application_name: 'fleet-ledger centre' });
    this.pool.on('error', (error) => options.log?.('centre pool error', { error: String(error) }));
    this.readModels = new SiteReadModels(this.pool);
    this.doors = new SiteDoors(this.pool, options.forwardTimeoutMs);
    this.rollouts = new FleetRollouts(this.pool, this.doors, () => this.sites);
  }

  /** Connects and makes the centre's schema. */
  static async open(options: CentreOptions): Promise<Centre> {
    const centre = new Centre(options);
    const client = await centre.pool.connect();
    try {
      await client.query('SELECT pg_advisory_lock(4242043)');
      try {
        await ensureCentreSchema(client);
        await ensureFleetRolloutTables(client);
      } finally {
        await client.query('SELECT pg_advisory_unlock(4242043)');
      }
    } catch (error) {
      client.release();
      await centre.pool.end();
      throw error;
    }
    client.release();
    centre.centreId = (await centre.pool.query<{ centre_id: string }>('SELECT centre_id FROM fleet_centre')).rows[0]!.centre_id;
    for (const row of (await centre.pool.query<{ site: string; verifier_key: string }>('SELECT site, verifier_key FROM fleet_sites')).rows) {
      centre.#witnesses.set(row.site, new SiteWitness(centre.pool, row.site, row.verifier_key, options.witnessSignerKey ?? null));
    }
    return centre;
  }

  get sites(): string[] {
    return [...this.#witnesses.keys()].sort();
  }

  /**
   * Federates a site (idempotent): its schema and partitions, its read models, and the subscription to its
   * publication (created with a copy of everything the site holds; a changed address is applied to the existing
   * subscription, whose slot keeps its place). A site already added with another verifier key is refused.
   */
  async addSite(card: SiteCard): Promise<void> {
    const site = siteName(card.site);
    const known = (await this.pool.query<{ verifier_key: string }>('SELECT verifier_key FROM fleet_sites WHERE site = $1', [site])).rows[0];
    if (known && known.verifier_key !== card.verifierKey) {
      throw new Error(`site ${site} was added with the verifier key ${known.verifier_key}; its card names ${card.verifierKey} (a site's key is pinned: remove the site to change it)`);
    }
    const client = await this.pool.connect();
    try {
      await client.query('SELECT pg_advisory_lock(4242043)');
      try {
        await client.query('BEGIN');
        await client.query('INSERT INTO fleet_sites (site, verifier_key, publisher) VALUES ($1, $2, $3) ON CONFLICT (site) DO UPDATE SET publisher = EXCLUDED.publisher', [site, card.verifierKey, redactConnectionString(card.publisherUrl)]);
        await ensureSitePartitions(client, site);
        await client.query('COMMIT');
      } catch (error) {
        await client.query('ROLLBACK').catch(() => undefined);
        throw error;
      } finally {
        await client.query('SELECT pg_advisory_unlock(4242043)');
      }
    } finally {
      client.release();
    }
    await this.readModels.ensure(site);
    const name = siteSubscription(site);
    const conninfo = subscriptionConninfo(card.publisherUrl, site);
    const existing = (await this.pool.query<{ subconninfo: string }>('SELECT subconninfo FROM pg_subscription WHERE subname = $1', [name])).rows[0];
    if (!existing) {
      // Not in a transaction: creating the subscription creates its slot on the site.
      await this.pool.query(`CREATE SUBSCRIPTION ${pg.escapeIdentifier(name)} CONNECTION ${pg.escapeLiteral(conninfo)} PUBLICATION ${pg.escapeIdentifier(sitePublication)} WITH (disable_on_error = false, streaming = off, slot_name = ${pg.escapeLiteral(siteSlot(site, this.centreId))})`);
      this.#options.log?.(`subscribed to site ${site}`, { site, subscription: name, publisher: redactConnectionString(card.publisherUrl) });
    } else if (existing.subconninfo !== conninfo) {
      await this.pool.query(`ALTER SUBSCRIPTION ${pg.escapeIdentifier(name)} CONNECTION ${pg.escapeLiteral(conninfo)}`);
      this.#options.log?.(`site ${site}: the subscription now reaches it at ${redactConnectionString(card.publisherUrl)}`, { site });
    }
    this.#intervals.set(site, card.intervalS);
    if (card.api) this.doors.set(site, card.api);
    if (!this.#witnesses.has(site)) {
      this.#witnesses.set(site, new SiteWitness(this.pool, site, card.verifierKey, this.#options.witnessSignerKey ?? null));
      if (this.#loops.length > 0) this.#loops.push(this.#followLoop(site));
    }
  }

  /** Starts judging the sites and following their logs. */
  start(): void {
    if (this.#loops.length > 0) return;
    this.#loops.push(this.#judgeLoop());
    for (const site of this.sites) this.#loops.push(this.#followLoop(site));
  }

  async stop(): Promise<void> {
    this.#abort.abort();
    await Promise.allSettled(this.#loops);
    await this.pool.end();
  }

  async #judgeLoop(): Promise<void> {
    const signal = this.#abort.signal;
    while (!signal.aborted) {
      try {
        await this.judge();
      } catch (error) {
        if (!signal.aborted) this.#options.log?.('judging the sites failed', { error: String(error) });
      }
      await sleep(this.#options.checkMs ?? 1000, signal);
    }
  }

  async #followLoop(site: string): Promise<void> {
    const signal = this.#abort.signal;
    while (!signal.aborted) {
      let more = false;
      try {
        more = await this.follow(site);
      } catch (error) {
        if (!signal.aborted) this.#options.log?.(`following site ${site} failed`, { site, error: String(error) });
      }
      if (!more) await sleep(this.#options.checkMs ?? 1000, signal);
    }
  }

  /** One pass over a site's arrivals: the witness, then the read models. True when there may be more to do at once. */
  async follow(site: string): Promise<boolean> {
    const witness = this.#witnesses.get(site);
    if (!witness) return false;
    const busy = this.#busy.get(site);
    if (busy) await busy.catch(() => undefined);
    const before = Number((await this.pool.query<{ position: number }>('SELECT position FROM fleet_read_model_positions WHERE site = $1', [site])).rows[0]?.position ?? 0);
    const progress = await witness.pass();
    if (progress.refused) this.#options.log?.(`SITE LOG REFUSED: ${site} at ${progress.refused.position} (${progress.refused.kind}): ${progress.refused.reason}`, { site, ...progress.refused });
    const reached = await this.readModels.follow(site, progress.verifiedPosition, this.#abort.signal);
    return reached > before && reached < progress.verifiedPosition;
  }

  /** Judges every site's state once (the loop does it every `checkMs`); returns the changes. */
  async judge(): Promise<SiteStateChange[]> {
    const { rows } = await this.pool.query<SiteRow>(`
      SELECT s.site, s.verifier_key, s.added_at,
             h.position AS heard_position, h.recorded_at AS heard_recorded_at, h.arrived_at AS heard_arrived_at, h.interval_s, h.slots,
             clock_timestamp() AS now,
             r.kind AS refusal_kind, r.position AS refusal_position, r.detail->>'reason' AS refusal_reason,
             st.state, st.partitioned_since, st.partition_position,
             sub.subenabled AS sub_enabled
        FROM fleet_sites s
        LEFT JOIN fleet_site_heard h USING (site)
        LEFT JOIN LATERAL (SELECT kind, position, detail FROM fleet_site_refusals WHERE site = s.site ORDER BY id LIMIT 1) r ON true
        LEFT JOIN fleet_site_state st USING (site)
        LEFT JOIN pg_subscription sub ON sub.subname = 'fleet_site_' || replace(s.site, '-', '_')
       ORDER BY s.site`);
    const changes: SiteStateChange[] = [];
    for (const row of rows) {
      const change = await this.#judgeSite(row);
      if (change) changes.push(change);
    }
    return changes;
  }

  async #judgeSite(row: SiteRow): Promise<SiteStateChange | null> {
    const site = row.site;
    const intervalMs = (row.interval_s ?? this.#intervals.get(site) ?? 60) * 1000;
    const now = row.now.getTime();
    let state: SiteState;
    let detail: string;
    const asOf = row.heard_recorded_at;
    const asOfPosition = row.heard_position === null ? null : Number(row.heard_position);
    let partitionedSince = row.partitioned_since;
    let partitionPosition = row.partition_position === null ? null : Number(row.partition_position);
    if (row.refusal_kind !== null) {
      state = 'refused';
      detail = `log refused at ${row.refusal_position} (${row.refusal_kind}): ${row.refusal_reason ?? ''}`;
      await this.#raise(site, 'SITE_LOG_REFUSED', `site ${site}: ${detail}; the centre keeps what it witnessed and applies nothing more of it`, { kind: row.refusal_kind, position: row.refusal_position, reason: row.refusal_reason });
      if (row.sub_enabled) await this.pool.query(`ALTER SUBSCRIPTION ${pg.escapeIdentifier(siteSubscription(site))} DISABLE`);
    } else if (row.heard_arrived_at === null) {
      const silentMs = now - row.added_at.getTime();
      state = silentMs > 2 * intervalMs ? 'partitioned' : 'new';
      detail = state === 'partitioned' ? `never heard since it was added at ${row.added_at.toISOString()}` : 'waiting for its first heartbeat';
    } else {
      const silentMs = now - row.heard_arrived_at.getTime();
      const behindMs = row.heard_arrived_at.getTime() - row.heard_recorded_at!.getTime();
      if (silentMs > 2 * intervalMs) {
        state = 'partitioned';
        detail = `partitioned since ${asOf!.toISOString()}, last heard at position ${asOfPosition}`;
      } else if (behindMs > 2 * intervalMs) {
        state = 'catching-up';
        detail = `catching up: as of ${asOf!.toISOString()} (position ${asOfPosition}), ${Math.round(behindMs / 1000)} s behind when it arrived`;
      } else {
        state = 'live';
        detail = `live: last heard at position ${asOfPosition}`;
      }
    }
    if (state === 'partitioned' && row.state !== 'partitioned' && row.state !== 'catching-up') {
      partitionedSince = asOf ?? row.added_at;
      partitionPosition = asOfPosition;
      await this.#raise(site, 'SITE_PARTITIONED', `site ${site} partitioned since ${partitionedSince.toISOString()}, last heard at position ${partitionPosition ?? 0}: its nodes are shown as of then`, {
        since: partitionedSince.toISOString(),
        position: partitionPosition,
      });
    }
    if (state === 'live' || state === 'new') {
      partitionedSince = null;
      partitionPosition = null;
      await this.#clear(site, 'SITE_PARTITIONED');
    }
    await this.#judgeSlots(site, row);
    if (state === 'partitioned' && Date.now() - (this.#probedAt.get(site) ?? 0) > 10_000) {
      // Not awaited: a link that drops packets holds the probe until its timeout, and the states must not wait for it.
      this.#probedAt.set(site, Date.now());
      void this.#probeSlot(site).catch((error: unknown) => this.#options.log?.(`asking site ${site} about its slot failed`, { site, error: String(error) }));
    }
    if (row.state === state) {
      await this.pool.query('UPDATE fleet_site_state SET as_of = $2, as_of_position = $3, detail = $4 WHERE site = $1', [site, asOf, asOfPosition, detail]);
      return null;
    }
    await this.pool.query(
      `INSERT INTO fleet_site_state (site, state, as_of, as_of_position, partitioned_since, partition_position, shown_at, detail)
       VALUES ($1, $2, $3, $4, $5, $6, clock_timestamp(), $7)
       ON CONFLICT (site) DO UPDATE SET state = EXCLUDED.state, as_of = EXCLUDED.as_of, as_of_position = EXCLUDED.as_of_position,
              partitioned_since = EXCLUDED.partitioned_since, partition_position = EXCLUDED.partition_position, shown_at = EXCLUDED.shown_at, detail = EXCLUDED.detail`,
      [site, state, asOf, asOfPosition, partitionedSince, partitionPosition, detail],
    );
    const change: SiteStateChange = { site, from: row.state, to: state, asOf, asOfPosition, detail };
    this.#options.log?.(`site ${site}: ${detail}`, { site, from: row.state, to: state });
    this.#options.onStateChange?.(change);
    return change;
  }

  async #judgeSlots(site: string, row: SiteRow): Promise<void> {
    const warnShare = this.#options.slotWarnShare ?? 0.5;
    const slot = (row.slots ?? []).find((s) => s.slot === siteSlot(site, this.centreId));
    if (!slot) return;
    if (slot.walStatus === 'lost') {
      await this.#raise(site, 'SITE_SLOT_LOST', `site ${site}: its replication slot is lost; the site must be re-synchronised from its log (fleet-ledger centre --resync ${site})`, { slot });
      return;
    }
    const share = slot.limitBytes ? slot.retainedBytes / slot.limitBytes : 0;
    if (share >= warnShare) {
      await this.#raise(site, 'SITE_SLOT_AT_RISK', `site ${site}: its replication slot holds ${Math.round(share * 100)}% of its bound (${slot.retainedBytes} of ${slot.limitBytes} bytes)`, { slot });
    } else if (share < warnShare / 2) {
      await this.#clear(site, 'SITE_SLOT_AT_RISK');
    }
  }

  /**
   * A partitioned site may be reachable with its slot gone (invalidated past its bound, dropped, or a site restored
   * from a backup): the subscription then fails for ever while the link is up. Asked directly, the site's server says
   * so, and the centre raises `SITE_SLOT_LOST` (the site is re-synchronised with `--resync`). Unreachable, it is a
   * partition, and nothing more is known.
   */
  async #probeSlot(site: string): Promise<void> {
    const sub = (await this.pool.query<{ subconninfo: string; subslotname: string | null }>('SELECT subconninfo, subslotname FROM pg_subscription WHERE subname = $1', [siteSubscription(site)])).rows[0];
    if (!sub?.subslotname) return;
    const publisher = new pg.Client({ connectionString: sub.subconninfo, connectionTimeoutMillis: 5_000 });
    publisher.on('error', () => undefined);
    try {
      await publisher.connect();
    } catch {
      return;
    }
    try {
      const slot = (await publisher.query<{ wal_status: string | null }>('SELECT wal_status FROM pg_replication_slots WHERE slot_name = $1', [sub.subslotname])).rows[0];
      if (!slot || slot.wal_status === 'lost') {
        await this.#raise(site, 'SITE_SLOT_LOST', `site ${site} answers, but its replication slot ${sub.subslotname} is ${slot ? 'lost (past its bound)' : 'gone'}: re-synchronise it from its log (fleet-ledger centre --resync ${site})`, { slot: sub.subslotname, walStatus: slot?.wal_status ?? null });
      }
    } finally {
      await publisher.end().catch(() => undefined);
    }
  }

  async #raise(site: string, code: string, summary: string, detail: Record<string, unknown>): Promise<void> {
    const { rowCount } = await this.pool.query(
      `INSERT INTO fleet_site_alarms (site, code, summary, detail) VALUES ($1, $2, $3, $4)
       ON CONFLICT (site, code) WHERE cleared_at IS NULL DO NOTHING`,
      [site, code, summary, JSON.stringify(detail)],
    );
    if (rowCount) this.#options.log?.(`SITE ALARM ${code}: ${summary}`, { site, code });
  }

  async #clear(site: string, code: string): Promise<void> {
    const { rowCount } = await this.pool.query('UPDATE fleet_site_alarms SET cleared_at = clock_timestamp() WHERE site = $1 AND code = $2 AND cleared_at IS NULL', [site, code]);
    if (rowCount) this.#options.log?.(`site alarm ${code} of ${site} cleared`, { site, code });
  }

  /**
   * Rebuilds the site's read models (every site's, when none is named) from the replicated log into a scratch schema
   * and compares them with the live ones. The site's read models are held still meanwhile.
   */
  async compareWithRebuild(site?: string): Promise<RebuildComparison[]> {
    const results: RebuildComparison[] = [];
    for (const name of site ? [site] : this.sites) {
      const work = this.readModels.compareWithRebuild(name);
      this.#busy.set(name, work);
      try {
        results.push(await work);
      } finally {
        this.#busy.delete(name);
      }
    }
    return results;
  }

  /**
   * Re-synchronises a site whose slot was lost (or dropped): a new subscription copies the site's whole log again.
   * Rows the centre holds are compared as they arrive (the same row is skipped; another is refused as a fork), so the
   * site is proven to extend what the centre witnessed, and the checkpoints it signed since are proven against it.
   */
  async resync(site: string, publisherUrl?: string): Promise<void> {
    const name = pg.escapeIdentifier(siteSubscription(site));
    const sub = (await this.pool.query<{ subconninfo: string }>('SELECT subconninfo FROM pg_subscription WHERE subname = $1', [siteSubscription(site)])).rows[0];
    const conninfo = publisherUrl ? subscriptionConninfo(publisherUrl, site) : sub?.subconninfo;
    if (!conninfo) throw new Error(`site ${site} has no subscription and no publisher was given`);
    if (sub) {
      await this.pool.query(`ALTER SUBSCRIPTION ${name} DISABLE`);
      await this.pool.query(`ALTER SUBSCRIPTION ${name} SET (slot_name = NONE)`);
      await this.pool.query(`DROP SUBSCRIPTION ${name}`);
    }
    // What is left of the old slot on the site (lost, or held by nobody) goes, so the new one can take its name.
    const publisher = new pg.Client({ connectionString: conninfo, connectionTimeoutMillis: 10_000 });
    await publisher.connect();
    try {
      await publisher.query('SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE slot_name = $1 AND NOT active', [siteSlot(site, this.centreId)]);
    } finally {
      await publisher.end();
    }
    await this.pool.query(`CREATE SUBSCRIPTION ${name} CONNECTION ${pg.escapeLiteral(conninfo)} PUBLICATION ${pg.escapeIdentifier(sitePublication)} WITH (disable_on_error = false, streaming = off, slot_name = ${pg.escapeLiteral(siteSlot(site, this.centreId))})`);
    await this.#clear(site, 'SITE_SLOT_LOST');
    this.#options.log?.(`site ${site}: re-synchronising from its log (a new subscription copies it again; held rows are compared as they arrive)`, { site });
  }
}
