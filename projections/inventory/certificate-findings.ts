/**
 * BMC certificates that expire soon or have expired: a finding of the inventory read model, asked at a given instant
 * (a certificate observed a year ago is judged by today's date, not by the day it was read). Like firmware
 * compliance, a query: it owns no table and raises nothing by itself.
 */
import { sql, type Kysely } from 'kysely';
import type { InventoryTables } from './inventory-tables.js';

export type CertificateFindingStatus = 'expired' | 'expiring';

export interface CertificateFinding {
  nodeId: string;
  site: string | null;
  rack: string | null;
  fingerprint: string;
  notAfter: string;
  selfSigned: boolean | null;
  status: CertificateFindingStatus;
  /** Days left (negative once expired), rounded down. */
  daysLeft: number;
}

/** Nodes whose BMC certificate expires within `withinDays` of `now`, or has expired; soonest first. */
export async function certificateFindings(db: Kysely<InventoryTables>, now: Date, withinDays: number): Promise<CertificateFinding[]> {
  const horizon = new Date(now.getTime() + withinDays * 86_400_000);
  const rows = await db
    .selectFrom('inventory_nodes')
    .select(['node_id', 'site', 'rack', 'certificate_fingerprint', 'certificate_not_after', 'certificate_self_signed'])
    .where('certificate_not_after', 'is not', null)
    .where(sql<boolean>`certificate_not_after <= ${horizon.toISOString()}::timestamptz`)
    .orderBy('certificate_not_after')
    .orderBy('node_id')
    .execute();
  return rows.map((row) => {
    const notAfter = new Date(row.certificate_not_after as unknown as string | Date);
    const left = (notAfter.getTime() - now.getTime()) / 86_400_000;
    return {
      nodeId: row.node_id as string,
      site: (row.site as string | null) ?? null,
      rack: (row.rack as string | null) ?? null,
      fingerprint: (row.certificate_fingerprint as string | null) ?? '',
      notAfter: notAfter.toISOString(),
      selfSigned: (row.certificate_self_signed as boolean | null) ?? null,
      status: left <= 0 ? 'expired' : 'expiring',
      daysLeft: Math.floor(left),
    };
  });
}
