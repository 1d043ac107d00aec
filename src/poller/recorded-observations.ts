/**
 * What the log already holds of a node's observations, in the form `changedObservations` keeps for it: per
 * observation type, the hash of the latest one recorded, and for the system event log, per log, the keys of the
 * entries recorded (newest first, at most `maxSelKeysPerLog` per log, the driver's own cap on one read).
 *
 * The poller reads it once per node, before it appends that node's first observations: a restarted process, or one
 * that took the node's shard over from another, then records what changed since the log last heard of the node, not
 * the whole fleet's inventory, firmware and event logs again (which made every restart append one observation of
 * each kind per node, and SEL entries already recorded a second time).
 */
import { isEventOf, type DriverObservation } from '../../events/index.js';
import { observationContentHash } from '../drivers/index.js';
import type { EventStore } from '../ledger/index.js';

/** Types whose latest recorded payload stands for the node's state (the SEL is a list that grows, read apart). */
const stateTypes = ['NodeInventoryObserved', 'FirmwareInventoryObserved', 'PowerStateObserved', 'HealthObserved', 'SensorsObserved', 'NetworkDeviceObserved'] as const;

/** SEL events read back: enough to hold the entries any log can still show at the driver's per-log cap. */
const selEventsRead = 100;

export async function recordedObservationHashes(store: EventStore, nodeId: string, maxSelKeysPerLog = 500): Promise<Map<string, string>> {
  const stream = `node-${nodeId}`;
  const { rows } = await store.pool.query<{ type: string; data: unknown }>(
    `SELECT type, data FROM (
       SELECT DISTINCT ON (type) type, data FROM ledger_events WHERE stream = $1 AND type = ANY($2::text[]) ORDER BY type, stream_version DESC
     ) latest
     UNION ALL
     (SELECT type, data FROM ledger_events WHERE stream = $1 AND type = 'SelEntriesObserved' ORDER BY stream_version DESC LIMIT ${selEventsRead})`,
    [stream, stateTypes],
  );
  const hashes = new Map<string, string>();
  const selKeys = new Map<string, string[]>();
  for (const row of rows) {
    if (!isEventOf(row, 'SelEntriesObserved')) {
      hashes.set(row.type, observationContentHash(nodeId, { type: row.type, data: row.data } as DriverObservation));
      continue;
    }
    const { logs = [], entries = [] } = row.data;
    for (const log of logs) if (!selKeys.has(log)) selKeys.set(log, []);
    for (const entry of entries) {
      const keys = selKeys.get(entry.log) ?? [];
      if (keys.length < maxSelKeysPerLog && !keys.includes(entry.key)) keys.push(entry.key);
      selKeys.set(entry.log, keys);
    }
  }
  if (selKeys.size > 0) hashes.set('SelEntriesObserved', [...selKeys].map(([log, keys]) => `${log}\t${keys.join(' ')}`).join('\n'));
  return hashes;
}
