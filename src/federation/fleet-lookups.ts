/**
 * Which site holds a node or an alarm, from the read models the centre applied of each site's log. A node registered
 * on a site moments ago may not be here yet (the read models follow the replicated log): the caller can name the
 * site itself (`?site=`).
 */
import type { Kysely } from 'kysely';
import { alarmById, nodeLiveness, type AlarmsTables, type LivenessTables } from '../../projections/index.js';
import type { DynamicDatabase } from '../ledger/index.js';
import { siteSchema } from './site-names.js';

const liveness = (db: Kysely<DynamicDatabase>, site: string): Kysely<LivenessTables> => db.withSchema(siteSchema(site)) as unknown as Kysely<LivenessTables>;
const alarms = (db: Kysely<DynamicDatabase>, site: string): Kysely<AlarmsTables> => db.withSchema(siteSchema(site)) as unknown as Kysely<AlarmsTables>;

/** The site whose log registered the node, or null. */
export async function siteOfNode(db: Kysely<DynamicDatabase>, sites: readonly string[], nodeId: string): Promise<string | null> {
  for (const site of sites) if (await nodeLiveness(liveness(db, site), nodeId)) return site;
  return null;
}

/** The site whose log raised the alarm, or null. */
export async function siteOfAlarm(db: Kysely<DynamicDatabase>, sites: readonly string[], alarmId: string): Promise<string | null> {
  for (const site of sites) if (await alarmById(alarms(db, site), alarmId)) return site;
  return null;
}
