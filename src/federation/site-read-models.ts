/**
 * The fleet's read models at the centre: the site's own projections (liveness, inventory, drift, topology, alarms),
 * the same code a site runs, applied to each site's replicated log into that site's schema (the projection contract
 * binds a projection to the schema it is given, `withSchema`). Each site's read models are applied up to the prefix the
 * witness verified, and their position per site, together, is the fleet's position vector. A fleet-wide answer is
 * the union of the sites' answers, each labelled with its site's state (src/federation/fleet-answers.ts).
 *
 * `compareWithRebuild` rebuilds a site's read models from zero into a scratch schema, from the replicated log, and
 * compares them with the live ones, row for row: the check that what the centre shows is what its logs say.
 */
import { Kysely, PostgresDialect, sql } from 'kysely';
import type pg from 'pg';
import { fleetCatalogue, type RecordedEvent } from '../../events/index.js';
import { fleetProjections } from '../../projections/index.js';
import { recordedEvent, type DynamicDatabase, type Projection } from '../ledger/index.js';
import { siteAsOfSchema, siteRebuildSchema, siteSchema } from './site-names.js';

const page = 1_000;

export interface RebuildComparison {
  site: string;
  position: number;
  matches: boolean;
  tables: Array<{ table: string; liveRows: number; rebuiltRows: number; differing: number }>;
  seconds: number;
}

export class SiteReadModels {
  readonly projections: readonly Projection[];
  readonly db: Kysely<DynamicDatabase>;
  readonly version: string;

  constructor(private readonly pool: pg.Pool) {
    this.projections = fleetProjections();
    this.db = new Kysely<DynamicDatabase>({ dialect: new PostgresDialect({ pool }) });
    this.version = this.projections.map((p) => `${p.name}:${p.version}`).join(',');
  }

  /** Creates the site's read-model tables (dropping them first when the projections changed since they were made). */
  async ensure(site: string): Promise<void> {
    const schema = siteSchema(site);
    const stored = (await this.pool.query<{ version: string }>('SELECT version FROM fleet_read_model_positions WHERE site = $1', [site])).rows[0]?.version;
    if (stored !== undefined && stored !== this.version) {
      for (const projection of this.projections) {
        for (const table of projection.tables) await sql`DROP TABLE IF EXISTS ${sql.id(schema, table)} CASCADE`.execute(this.db);
      }
      await this.pool.query('UPDATE fleet_read_model_positions SET position = 0, version = $2 WHERE site = $1', [site, this.version]);
    }
    for (const projection of this.projections) await projection.createTables(this.db.withSchema(schema));
    await this.pool.query('INSERT INTO fleet_read_model_positions (site, position, version) VALUES ($1, 0, $2) ON CONFLICT (site) DO NOTHING', [site, this.version]);
  }

  async #events(site: string, after: number, through: number): Promise<RecordedEvent[]> {
    const { rows } = await this.pool.query('SELECT * FROM ledger_events WHERE site = $1 AND position > $2 AND position <= $3 ORDER BY position LIMIT $4', [site, after, through, page]);
    return rows.map((row) => recordedEvent(row, fleetCatalogue));
  }

  async #apply(db: Kysely<DynamicDatabase>, schema: string, events: readonly RecordedEvent[]): Promise<void> {
    for (const projection of this.projections) {
      const types = new Set(projection.eventTypes);
      const mine = events.filter((event) => types.has(event.type));
      if (mine.length > 0) await projection.apply(db.withSchema(schema) as never, mine);
    }
  }

  /** Applies the site's log up to `through` (the verified prefix); returns the position reached. */
  async follow(site: string, through: number, signal?: AbortSignal): Promise<number> {
    let position = Number((await this.pool.query<{ position: number }>('SELECT position FROM fleet_read_model_positions WHERE site = $1', [site])).rows[0]?.position ?? 0);
    const schema = siteSchema(site);
    while (position < through && !signal?.aborted) {
      const events = await this.#events(site, position, through);
      if (events.length === 0) break;
      const last = events[events.length - 1]!.position;
      await this.db.transaction().execute(async (trx) => {
        await this.#apply(trx as unknown as Kysely<DynamicDatabase>, schema, events);
        await sql`UPDATE fleet_read_model_positions SET position = ${last} WHERE site = ${site}`.execute(trx);
      });
      position = last;
    }
    return position;
  }

  /** Makes `schema` afresh and applies the site's replicated log to it from zero up to `position`. */
  async #rebuildInto(site: string, schema: string, position: number): Promise<void> {
    await sql`DROP SCHEMA IF EXISTS ${sql.id(schema)} CASCADE`.execute(this.db);
    await sql`CREATE SCHEMA ${sql.id(schema)}`.execute(this.db);
    for (const projection of this.projections) await projection.createTables(this.db.withSchema(schema));
    let at = 0;
    while (at < position) {
      const events = await this.#events(site, at, position);
      if (events.length === 0) break;
      await this.db.transaction().execute((trx) => this.#apply(trx as unknown as Kysely<DynamicDatabase>, schema, events));
      at = events[events.length - 1]!.position;
    }
  }

  /**
   * Answers `read` over the site's read models as of `position`: rebuilt from the replicated log into a scratch schema
   * (never the live ones, which move on while the question is answered), dropped afterwards. A rebuild costs the
   * site's log up to `position`, so the API answers one such question at a time.
   */
  async atPosition<T>(site: string, position: number, read: (db: Kysely<DynamicDatabase>) => Promise<T>): Promise<T> {
    const scratch = siteAsOfSchema(site, Math.random().toString(36).slice(2, 10));
    try {
      await this.#rebuildInto(site, scratch, position);
      return await read(this.db.withSchema(scratch));
    } finally {
      await sql`DROP SCHEMA IF EXISTS ${sql.id(scratch)} CASCADE`.execute(this.db);
    }
  }

  /**
   * Rebuilds the site's read models from zero up to the position they are at now, into a scratch schema, and compares
   * every table with the live one (as whole rows, either way). The caller keeps the live ones still meanwhile.
   */
  async compareWithRebuild(site: string): Promise<RebuildComparison> {
    const started = performance.now();
    const live = siteSchema(site);
    const scratch = siteRebuildSchema(site);
    const position = Number((await this.pool.query<{ position: number }>('SELECT position FROM fleet_read_model_positions WHERE site = $1', [site])).rows[0]?.position ?? 0);
    await this.#rebuildInto(site, scratch, position);
    try {
      const tables: RebuildComparison['tables'] = [];
      for (const projection of this.projections) {
        for (const table of projection.tables) {
          const { rows } = await sql<{ live_rows: string; rebuilt_rows: string; differing: string }>`
            SELECT (SELECT count(*) FROM ${sql.id(live, table)}) AS live_rows,
                   (SELECT count(*) FROM ${sql.id(scratch, table)}) AS rebuilt_rows,
                   (SELECT count(*) FROM (SELECT l::text FROM ${sql.id(live, table)} l EXCEPT ALL SELECT r::text FROM ${sql.id(scratch, table)} r) d)
                 + (SELECT count(*) FROM (SELECT r::text FROM ${sql.id(scratch, table)} r EXCEPT ALL SELECT l::text FROM ${sql.id(live, table)} l) d) AS differing`.execute(this.db);
          const row = rows[0]!;
          tables.push({ table, liveRows: Number(row.live_rows), rebuiltRows: Number(row.rebuilt_rows), differing: Number(row.differing) });
        }
      }
      return { site, position, matches: tables.every((t) => t.differing === 0), tables, seconds: (performance.now() - started) / 1000 };
    } finally {
      await sql`DROP SCHEMA IF EXISTS ${sql.id(scratch)} CASCADE`.execute(this.db);
    }
  }
}
