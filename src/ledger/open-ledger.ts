import { EventStore, type EventStoreOptions } from './event-store.js';
import { redactConnectionString, startEmbeddedPostgres, type EmbeddedPostgresHandle } from './embedded-postgres.js';

export interface OpenLedgerOptions extends Omit<EventStoreOptions, 'connectionString'> {
  /** A PostgreSQL server (14 or newer). When absent, the embedded PostgreSQL is started. */
  databaseUrl?: string;
  dataDir?: string;
  port?: number;
  log?: (message: string) => void;
}

export interface OpenLedger {
  store: EventStore;
  backend: 'embedded' | 'server';
  /** Where the ledger lives, without credentials. */
  location: string;
  connectionString: string;
  close(): Promise<void>;
}

/** Opens the ledger on `databaseUrl` if given, else on the embedded PostgreSQL in `dataDir`. */
export async function openLedger(options: OpenLedgerOptions = {}): Promise<OpenLedger> {
  let embedded: EmbeddedPostgresHandle | null = null;
  let connectionString = options.databaseUrl;
  if (!connectionString) {
    embedded = await startEmbeddedPostgres({ dataDir: options.dataDir, port: options.port, log: options.log });
    connectionString = embedded.connectionString;
  }
  try {
    const store = await EventStore.open({ ...options, connectionString });
    return {
      store,
      backend: embedded ? 'embedded' : 'server',
      location: embedded ? `embedded PostgreSQL in ${embedded.dataDir} on 127.0.0.1:${embedded.port}` : redactConnectionString(connectionString),
      connectionString,
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
