/**
 * The declared topology: which PDUs, top-of-rack switches and coolant unit serve each rack, and which rack each
 * node is in. It is what a blast radius is computed over ("what does PDU P1 feed?").
 */
import type { Kysely, Transaction } from 'kysely';
import { isEventOf, type RecordedEvent } from '../../events/index.js';
import type { Projection } from '../projection.js';
import { createTable, upsertRows, type Row, type TableSpec, holdTablesForRebuild, type HeldTables, type TableRow } from '../support/table.js';
import type { DynamicDatabase } from '../../src/ledger/index.js';

export const topologyRacksTable = {
  name: 'topology_racks',
  primaryKey: ['rack'],
  columns: {
    rack: { type: 'text' },
    site: { type: 'text' },
    pdus: { type: 'jsonb' },
    tors: { type: 'jsonb' },
    cdu: { type: 'text', nullable: true },
    declared_at: { type: 'timestamptz' },
  },
} satisfies TableSpec;

export const topologyNodesTable = {
  name: 'topology_nodes',
  primaryKey: ['node_id'],
  columns: {
    node_id: { type: 'text' },
    site: { type: 'text' },
    rack: { type: 'text' },
    registered_at: { type: 'timestamptz' },
  },
  indexes: [['rack']],
} satisfies TableSpec;

/** The topology read model's tables, for kysely. */
export type TopologyTables = {
  topology_racks: TableRow<typeof topologyRacksTable>;
  topology_nodes: TableRow<typeof topologyNodesTable>;
};

export class TopologyProjection implements Projection {
  readonly name = 'topology';
  readonly version = 1;
  readonly eventTypes = ['TopologyDeclared', 'NodeRegistered'] as const;
  readonly tables = [topologyRacksTable.name, topologyNodesTable.name];

  /** Its tables are reached only through `loadRows`, `upsertRows` and `deleteRows`: a rebuild holds them in memory. */
  holdTables(): HeldTables {
    return holdTablesForRebuild(this.tables);
  }

  async createTables(db: Kysely<DynamicDatabase>): Promise<void> {
    await createTable(db, topologyRacksTable);
    await createTable(db, topologyNodesTable);
  }

  async apply(trx: Transaction<DynamicDatabase>, events: readonly RecordedEvent[]): Promise<void> {
    const racks = new Map<string, Row>();
    const nodes = new Map<string, Row>();
    for (const event of events) {
      if (isEventOf(event, 'TopologyDeclared')) {
        const d = event.data;
        racks.set(d.rack, { rack: d.rack, site: d.site, pdus: d.pdu, tors: d.tor, cdu: d.cdu ?? null, declared_at: event.recordedAt });
      } else if (isEventOf(event, 'NodeRegistered')) {
        const d = event.data;
        nodes.set(d.nodeId, { node_id: d.nodeId, site: d.site, rack: d.rack, registered_at: event.recordedAt });
      }
    }
    await upsertRows(trx, topologyRacksTable, [...racks.values()]);
    await upsertRows(trx, topologyNodesTable, [...nodes.values()]);
  }
}
