/**
 * The site's side of the federation: what a site ledger's PostgreSQL carries so a centre can subscribe to it.
 *
 * - The server runs with `wal_level=logical` and a bound on what a replication slot may hold back
 *   (`max_slot_wal_keep_size`): a centre cut off for longer than the bound allows loses its slot (the site never fills
 *   its disk for it) and re-synchronises the site from its log.
 * - The log's tables (`ledger_events`, `ledger_checkpoints`) are stamped with the site's name: a `site` column whose
 *   default is the name and whose check refuses any other. Logical replication matches tables by their qualified
 *   name, so every site's `public.ledger_events` lands in the centre's `public.ledger_events`, a table partitioned by
 *   that column (docs/architecture.md, "Sites and the centre"). The stamp is fixed at the first `--site` start.
 * - Both tables have `REPLICA IDENTITY FULL`: a row rewritten or deleted on the site (only a superuser can, past the
 *   triggers) reaches the centre with its whole old and new content, which the centre keeps as the evidence of a
 *   refused rewrite.
 * - One publication, `fleet_ledger_site`, of inserts, updates and deletes (not truncates: a truncate would reach the
 *   partitioned table at the centre as a whole).
 * - One login role, `fleet_ledger_replicator`, with the REPLICATION attribute and SELECT on the two tables: the only
 *   thing the centre is given.
 */
import pg from 'pg';
import { siteName } from './site-names.js';

export const sitePublication = 'fleet_ledger_site';
export const replicatorRole = 'fleet_ledger_replicator';

export interface SiteReplicationOptions {
  /** The bound on a slot's backlog (`max_slot_wal_keep_size`), in PostgreSQL's units; default `1GB`. */
  maxSlotWalKeepSize?: string;
  /** Addresses the server listens on (`listen_addresses`); default 127.0.0.1 (a centre on this machine). */
  listenAddresses?: string;
}

/** The server settings of a site's embedded PostgreSQL. */
export function sitePostgresSettings(options: SiteReplicationOptions = {}): Record<string, string> {
  return {
    wal_level: 'logical',
    max_replication_slots: '16',
    max_wal_senders: '16',
    max_slot_wal_keep_size: options.maxSlotWalKeepSize ?? '1GB',
    // A centre that vanished is noticed, and its walsender ended, within this.
    wal_sender_timeout: '30s',
    ...(options.listenAddresses ? { listen_addresses: options.listenAddresses } : {}),
  };
}

export class SitePublicationError extends Error {}

/**
 * Makes `ownerUrl`'s ledger a publishing site named `site` (idempotent): checks the server's WAL level, stamps the
 * log's tables, creates the publication and the replicator role (its password set to `replicatorPassword`). A ledger
 * already stamped with another site's name is refused: a site ledger belongs to one site for good.
 */
export async function prepareSitePublication(ownerUrl: string, site: string, replicatorPassword: string): Promise<void> {
  siteName(site);
  const client = new pg.Client({ connectionString: ownerUrl });
  await client.connect();
  try {
    const walLevel = (await client.query<{ wal_level: string }>('SHOW wal_level')).rows[0]!.wal_level;
    if (walLevel !== 'logical') {
      throw new SitePublicationError(`the site's PostgreSQL runs with wal_level=${walLevel}; a site needs wal_level=logical (ALTER SYSTEM SET wal_level = logical, then restart the server)`);
    }
    await client.query('BEGIN');
    await client.query('LOCK TABLE ledger_events, ledger_checkpoints IN SHARE ROW EXCLUSIVE MODE');
    await client.query(`
      CREATE TABLE IF NOT EXISTS ledger_site (
        singleton   boolean     PRIMARY KEY DEFAULT true CHECK (singleton),
        site        text        NOT NULL,
        stamped_at  timestamptz NOT NULL DEFAULT now()
      )`);
    const stamped = (await client.query<{ site: string }>('SELECT site FROM ledger_site')).rows[0]?.site;
    if (stamped !== undefined && stamped !== site) {
      throw new SitePublicationError(`this ledger is the site '${stamped}'; it cannot be started as '${site}' (a site's log carries its name for good)`);
    }
    if (stamped === undefined) {
      const literal = pg.escapeLiteral(site);
      await client.query('INSERT INTO ledger_site (site) VALUES ($1)', [site]);
      // A constant default is stored once in the catalogue (no rewrite, no UPDATE of the append-only rows); logical
      // decoding and the initial copy both send it with every row.
      await client.query(`ALTER TABLE ledger_events ADD COLUMN site text NOT NULL DEFAULT ${literal} CONSTRAINT ledger_events_site_stamp CHECK (site = ${literal})`);
      await client.query(`ALTER TABLE ledger_checkpoints ADD COLUMN site text NOT NULL DEFAULT ${literal} CONSTRAINT ledger_checkpoints_site_stamp CHECK (site = ${literal})`);
    }
    await client.query('ALTER TABLE ledger_events REPLICA IDENTITY FULL');
    await client.query('ALTER TABLE ledger_checkpoints REPLICA IDENTITY FULL');
    const published = (await client.query('SELECT 1 FROM pg_publication WHERE pubname = $1', [sitePublication])).rowCount;
    if (!published) await client.query(`CREATE PUBLICATION ${sitePublication} FOR TABLE ledger_events, ledger_checkpoints WITH (publish = 'insert, update, delete')`);
    const role = (await client.query('SELECT 1 FROM pg_roles WHERE rolname = $1', [replicatorRole])).rowCount;
    const password = pg.escapeLiteral(replicatorPassword);
    await client.query(role ? `ALTER ROLE ${replicatorRole} WITH LOGIN REPLICATION PASSWORD ${password}` : `CREATE ROLE ${replicatorRole} WITH LOGIN REPLICATION PASSWORD ${password}`);
    await client.query(`GRANT USAGE ON SCHEMA public TO ${replicatorRole}`);
    await client.query(`GRANT SELECT ON ledger_events, ledger_checkpoints, ledger_site TO ${replicatorRole}`);
    await client.query('COMMIT');
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  } finally {
    await client.end();
  }
}

/** A connection string for the replicator role on the server of `url` (its host, port and database). */
export function replicatorUrl(url: string, password: string, host?: string): string {
  const parsed = new URL(url);
  parsed.username = replicatorRole;
  parsed.password = password;
  if (host) parsed.host = host;
  parsed.search = '';
  return parsed.toString();
}
