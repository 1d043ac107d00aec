/** The ledger: append, read, subscribe, group commit, hash chain, migrations, backends. */
export * from './append-types.js';
export * from './ledger-error.js';
export * from './event-store.js';
export * from './open-ledger.js';
export { postmasterPid, startEmbeddedPostgres, redactConnectionString, type EmbeddedOptions, type EmbeddedPostgresHandle } from './embedded-postgres.js';
export { migrateToLatest } from './migrations/index.js';
export { canonicalJson, chainHash, firstUnstorablePart, genesisHash } from './canonical-json.js';
export { canonicalEvent, storedEvent } from './event-row.js';
export { fastTimestamptzParser, parseIsoTimestamptz, pgTimestamptzParser } from './timestamp-parser.js';
export { DataDirLock, processStartTime } from './data-dir-lock.js';
export * from './projection-runner.js';
export { ProjectionApplyError } from './projection.js';
export type { HeldTableSet, Projection } from './projection.js';
export { nameUuid } from './name-uuid.js';
export { boundedConnection, defaultConnectionBounds, type ConnectionBounds } from './connection-bounds.js';
export { ensureLedgerRoles, ledgerRoles, roleConnectionString, type LedgerRoleName } from './roles.js';
export { isStoreUnavailable, outageBackoffMs, pause } from './store-outage.js';
