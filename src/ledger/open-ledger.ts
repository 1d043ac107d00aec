import pg from 'pg';
import { EventStore, type EventStoreOptions } from './event-store.js';
import { ensureLedgerRoles } from './roles.js';
import { redactConnectionString, startEmbeddedPostgres, type EmbeddedPostgresHandle } from './embedded-postgres.js';

export interface OpenLedgerOptions extends Omit<EventStoreOptions, 'connectionString'> {
  /** A PostgreSQL server (14 or newer). When absent, the embedded PostgreSQL is started. */
  databaseUrl?: string;
  dataDir?: string;
  port?: number;
  log?: (message: string) => void;
  /**
   * On the embedded backend, the free space kept on the data folder's disk: below it appends are refused with
   * `LEDGER_STORAGE_FULL` before PostgreSQL meets a full disk (see `EventStoreOptions.storageReserve`).
   * Default 128 MiB.
   */
  minFreeBytes?: number;
  /** On the embedded backend, server settings for the postmaster (`-c name=value`; src/federation's site needs logical replication). */
  postgresSettings?: Readonly<Record<string, string>>;
  /**
   * Run once the schema is migrated, before the store opens, on a connection that owns the log's tables: the embedded
   * superuser, or `databaseUrl` itself (which must then own them). A site's publication is made here (src/federation).
   */
  prepare?: (ownerConnectionString: string) => Promise<void>;
}

/** The free space the embedded backend keeps on its disk unless told otherwise. */
export const defaultMinFreeBytes = 128 * 2 ** 20;

export interface OpenLedger {
  store: EventStore;
  backend: 'embedded' | 'server';
  /** Where the ledger lives, without credentials. */
  location: string;
  /** The connection the process runs on: the app role on the embedded backend, DATABASE_URL otherwise. */
  connectionString: string;
  /** On the embedded backend, the login roles of people (analyst, auditor) and where their passwords are. */
  roles?: EmbeddedPostgresHandle['roles'];
  close(): Promise<void>;
}

/** Opens the ledger on `databaseUrl` if given, else on the embedded PostgreSQL in `dataDir`. */
export async function openLedger(options: OpenLedgerOptions = {}): Promise<OpenLedger> {
  let embedded: EmbeddedPostgresHandle | null = null;
  let connectionString = options.databaseUrl;
  if (!connectionString) {
    embedded = await startEmbeddedPostgres({ dataDir: options.dataDir, port: options.port, log: options.log, ...(options.postgresSettings ? { settings: options.postgresSettings } : {}) });
    connectionString = embedded.roles.app.connectionString;
  }
  try {
    if (embedded) {
      // The superuser migrates and grants; the process then runs as the app role, which cannot rewrite the log.
      const admin = await EventStore.open({ ...options, connectionString: embedded.connectionString, migrate: true, poolSize: 1 });
      await admin.close();
      const client = new pg.Client({ connectionString: embedded.connectionString });
      await client.connect();
      try {
        await ensureLedgerRoles(client, { app: embedded.roles.app.password, analyst: embedded.roles.analyst.password, auditor: embedded.roles.auditor.password });
      } finally {
        await client.end();
      }
    }
    if (options.prepare) {
      if (!embedded) {
        // On a server the schema is migrated by the store's open; the preparation needs the tables.
        const migrated = await EventStore.open({ ...options, connectionString, poolSize: 1 });
        await migrated.close();
      }
      await options.prepare(embedded ? embedded.connectionString : connectionString);
    }
    const store = await EventStore.open({
      ...options,
      connectionString,
      ...(embedded ? { migrate: false, storageReserve: { path: embedded.dataDir, minFreeBytes: options.minFreeBytes ?? defaultMinFreeBytes } } : {}),
    });
    return {
      store,
      backend: embedded ? 'embedded' : 'server',
      location: embedded ? `embedded PostgreSQL in ${embedded.dataDir} on 127.0.0.1:${embedded.port}` : redactConnectionString(connectionString),
      connectionString,
      ...(embedded ? { roles: embedded.roles } : {}),
      async close() {
        await store.close();
        await embedded?.stop();
      },
    };
  } catch (error) {
    await embedded?.stop();
    throw error;
  }
}
