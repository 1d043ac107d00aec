/**
 * Least privilege in PostgreSQL: three login roles, none of them a superuser, and nobody handed the superuser's
 * password.
 *
 * - `fleet_ledger_app`, the ledger's own process: appends to the log (INSERT, never UPDATE, DELETE or TRUNCATE),
 *   moves the head forward, maintains the transparency log and owns the read models it builds.
 * - `fleet_ledger_analyst`: reads the read models (the projections' tables), not the log.
 * - `fleet_ledger_auditor`: reads the log, its head, the Merkle tiles and the checkpoints; nothing else.
 *
 * Grants say what each may do; the triggers of migration 0003 refuse rewriting the log even to its owner. Roles are
 * cluster-wide, grants per database: `ensureLedgerRoles` is idempotent and run by an administrator (the embedded
 * backend runs it at every start, as the superuser it keeps to itself).
 */
import pg from 'pg';

export const ledgerRoles = { app: 'fleet_ledger_app', analyst: 'fleet_ledger_analyst', auditor: 'fleet_ledger_auditor' } as const;
export type LedgerRoleName = keyof typeof ledgerRoles;

/** The log's own tables: written only through the app's narrow grants, read by auditors. */
const logTables = ['ledger_events', 'ledger_head', 'ledger_streams', 'ledger_merkle_tiles', 'ledger_merkle_state', 'ledger_checkpoints'];
/** Bookkeeping the app owns rows of but not the tables. */
const appWritable: Record<string, string> = {
  ledger_events: 'SELECT, INSERT',
  ledger_head: 'SELECT, UPDATE',
  ledger_streams: 'SELECT, INSERT, UPDATE',
  ledger_merkle_tiles: 'SELECT, INSERT, UPDATE',
  ledger_merkle_state: 'SELECT, UPDATE',
  ledger_checkpoints: 'SELECT, INSERT',
  ledger_migrations: 'SELECT',
  ledger_migrations_lock: 'SELECT',
};

/**
 * Creates the roles when absent (with LOGIN and the given passwords, else NOLOGIN), sets passwords given, and grants
 * them their privileges on the database `client` is connected to. Read-model tables that exist are handed to the app
 * (a rebuild drops and swaps them) and opened to analysts; tables the app creates later are opened to analysts by
 * default privileges.
 */
export async function ensureLedgerRoles(client: pg.ClientBase, passwords: Partial<Record<LedgerRoleName, string>> = {}): Promise<void> {
  const database = (await client.query<{ db: string }>('SELECT current_database() AS db')).rows[0]!.db;
  for (const [key, role] of Object.entries(ledgerRoles) as Array<[LedgerRoleName, string]>) {
    const exists = (await client.query('SELECT 1 FROM pg_roles WHERE rolname = $1', [role])).rowCount! > 0;
    const password = passwords[key];
    const login = password ? `LOGIN PASSWORD ${pg.escapeLiteral(password)}` : exists ? '' : 'NOLOGIN';
    const options = `NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION NOBYPASSRLS ${login}`;
    await client.query(`${exists ? 'ALTER' : 'CREATE'} ROLE ${role} ${options}`);
    await client.query(`GRANT CONNECT, TEMPORARY ON DATABASE ${pg.escapeIdentifier(database)} TO ${role}`);
    await client.query(`GRANT USAGE ON SCHEMA public TO ${role}`);
  }
  const { app, analyst, auditor } = ledgerRoles;
  // The app creates read-model tables and the scratch schemas of rebuilds and as-of queries.
  await client.query(`GRANT CREATE ON DATABASE ${pg.escapeIdentifier(database)} TO ${app}`);
  await client.query(`GRANT CREATE ON SCHEMA public TO ${app}`);
  for (const [table, privileges] of Object.entries(appWritable)) {
    await client.query(`REVOKE ALL ON ${table} FROM ${app}`);
    await client.query(`GRANT ${privileges} ON ${table} TO ${app}`);
  }
  for (const table of logTables) await client.query(`GRANT SELECT ON ${table} TO ${auditor}`);
  // What the projections set aside is part of the record an auditor checks.
  if ((await client.query(`SELECT to_regclass('public.projection_dead_letters') AS t`)).rows[0]?.t) await client.query(`GRANT SELECT ON projection_dead_letters TO ${auditor}`);
  const readModels = await client.query<{ tablename: string; tableowner: string }>(
    `SELECT tablename, tableowner FROM pg_tables WHERE schemaname = 'public' AND tablename NOT LIKE 'ledger\\_%'`,
  );
  for (const { tablename, tableowner } of readModels.rows) {
    if (tableowner !== app) await client.query(`ALTER TABLE ${pg.escapeIdentifier(tablename)} OWNER TO ${app}`);
    await client.query(`GRANT SELECT ON ${pg.escapeIdentifier(tablename)} TO ${analyst}`);
  }
  // The history views beside the read models (`<read model>_history`) and time travel's as-of views are read models too.
  const views = await client.query<{ schemaname: string; viewname: string; viewowner: string }>(
    `SELECT schemaname, viewname, viewowner FROM pg_views WHERE schemaname = 'public' AND viewname LIKE '%\\_history' OR schemaname = 'as_of'`,
  );
  if (views.rows.some((view) => view.schemaname === 'as_of')) {
    await client.query(`ALTER SCHEMA as_of OWNER TO ${app}`);
    await client.query(`GRANT USAGE ON SCHEMA as_of TO ${analyst}`);
  }
  for (const { schemaname, viewname, viewowner } of views.rows) {
    const name = `${pg.escapeIdentifier(schemaname)}.${pg.escapeIdentifier(viewname)}`;
    if (viewowner !== app) await client.query(`ALTER VIEW ${name} OWNER TO ${app}`);
    await client.query(`GRANT SELECT ON ${name} TO ${analyst}`);
  }
  await client.query(`ALTER DEFAULT PRIVILEGES FOR ROLE ${app} GRANT SELECT ON TABLES TO ${analyst}`);
  await client.query(`ALTER DEFAULT PRIVILEGES FOR ROLE ${app} GRANT USAGE ON SCHEMAS TO ${analyst}`);
}

/** A connection string for `role` on the server and database of `adminUrl`. */
export function roleConnectionString(adminUrl: string, role: string, password: string): string {
  const url = new URL(adminUrl);
  url.username = encodeURIComponent(role);
  url.password = encodeURIComponent(password);
  return url.toString();
}
