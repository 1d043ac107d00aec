import type { ColumnType, Generated } from 'kysely';

/** The ledger's own tables, typed for kysely. */
export interface LedgerEventsTable {
  position: ColumnType<number, number, never>;
  event_id: string;
  stream: string;
  stream_version: number;
  type: string;
  schema_version: number;
  recorded_at: Date;
  observed_at: Date | null;
  actor: unknown;
  correlation_id: string | null;
  causation_id: string | null;
  data: unknown;
  prev_hash: Buffer;
  hash: Buffer;
}

export interface LedgerStreamsTable {
  stream: string;
  version: number;
  last_position: ColumnType<number, number, number>;
  created_at: Date;
  updated_at: Date;
}

export interface LedgerHeadTable {
  singleton: Generated<boolean>;
  position: ColumnType<number, number, number>;
  hash: Buffer;
  recorded_at: Date;
}

/** How far each projection has applied the log (migration 0002): its version, position and why it stopped. */
export interface ProjectionCheckpointsTable {
  name: string;
  version: number;
  position: number;
  status: 'running' | 'failed' | 'rebuilding';
  error: unknown;
  updated_at: Date;
}

export interface LedgerDatabase {
  ledger_events: LedgerEventsTable;
  ledger_streams: LedgerStreamsTable;
  ledger_head: LedgerHeadTable;
  projection_checkpoints: ProjectionCheckpointsTable;
}

/**
 * A database whose tables are known only at run time: a projection's tables reached through their table specs, a
 * rebuild's or a snapshot's schema, catalog reads. Every table and column name is accepted and every value read is
 * `unknown`, so a reader checks what it gets (where a database typed `any` would let any use through). A `Kysely<DynamicDatabase>` can be handed to a
 * function that asks for typed tables (a projection's query module).
 */
export type DynamicDatabase = Record<string, Record<string, unknown>>;
