import { Migrator, type Kysely, type Migration, type MigrationProvider } from 'kysely';
import * as eventLog from './0001-event-log.js';
import * as projectionCheckpoints from './0002-projection-checkpoints.js';
import * as appendOnly from './0003-append-only-and-transparency.js';
import * as historyNodeIndex from './0004-history-node-index.js';
import * as deadLetters from './0005-projection-dead-letters.js';
import * as clusterLeases from './0006-cluster-leases.js';
import * as sagaLeases from './0007-saga-leases.js';
import * as publishedCheckpointFloor from './0008-published-checkpoint-floor.js';
import * as kurrentPersistentSubscriptions from './0009-kurrent-persistent-subscriptions.js';

/**
 * Every schema migration, in order, named by number. Later folders (projections) register their own
 * migrations through `extraMigrations`, so one Migrator owns the whole schema.
 */
const ledgerMigrations: Record<string, Migration> = {
  '0001-event-log': eventLog,
  '0002-projection-checkpoints': projectionCheckpoints,
  '0003-append-only-and-transparency': appendOnly,
  '0004-history-node-index': historyNodeIndex,
  '0005-projection-dead-letters': deadLetters,
  '0006-cluster-leases': clusterLeases,
  '0007-saga-leases': sagaLeases,
  '0008-published-checkpoint-floor': publishedCheckpointFloor,
  '0009-kurrent-persistent-subscriptions': kurrentPersistentSubscriptions,
};

class StaticMigrationProvider implements MigrationProvider {
  constructor(private readonly migrations: Record<string, Migration>) {}
  async getMigrations(): Promise<Record<string, Migration>> {
    return this.migrations;
  }
}

export async function migrateToLatest(db: Kysely<unknown>, extraMigrations: Record<string, Migration> = {}): Promise<string[]> {
  const migrator = new Migrator({
    db,
    provider: new StaticMigrationProvider({ ...ledgerMigrations, ...extraMigrations }),
    migrationTableName: 'ledger_migrations',
    migrationLockTableName: 'ledger_migrations_lock',
  });
  const { error, results } = await migrator.migrateToLatest();
  if (error) throw error instanceof Error ? error : new Error(String(error));
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}
