/** Typed questions of the declared topology. */
import { sql, type Kysely } from 'kysely';
import type { TopologyTables } from './topology-projection.js';
import type { ComponentKind } from './blast-radius-evolve.js';

const column: Record<ComponentKind, string> = { pdu: 'pdus', tor: 'tors', cdu: 'cdu' };

/** The racks a component serves. */
export async function racksFedBy(db: Kysely<TopologyTables>, kind: ComponentKind, id: string): Promise<string[]> {
  const condition = kind === 'cdu' ? sql<boolean>`cdu = ${id}` : sql<boolean>`${sql.ref(column[kind])} ? ${id}`;
  const rows = await db.selectFrom('topology_racks').select('rack').where(condition).orderBy('rack').execute();
  return rows.map((row: any) => row.rack);
}

/** The nodes a component serves (the blast radius of its failure). */
export async function nodesFedBy(db: Kysely<TopologyTables>, kind: ComponentKind, id: string): Promise<string[]> {
  const racks = await racksFedBy(db, kind, id);
  if (racks.length === 0) return [];
  const rows = await db.selectFrom('topology_nodes').select('node_id').where('rack', 'in', racks).orderBy('node_id').execute();
  return rows.map((row: any) => row.node_id);
}
