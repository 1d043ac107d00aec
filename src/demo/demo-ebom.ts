import { NodeInventoryObserved } from '../../events/index.js';
import { importEbom } from '../ebom/index.js';
import type { EventStore } from '../ledger/index.js';
import type { SimBmcInfo } from '../sim/index.js';
import { withBoundedRetries } from './bounded-retry.js';

/**
 * The demo's bill of materials. A real EBOM comes from purchase records; the demo has none, so it writes
 * one as a procurement team would have: from each recorded unit's identity as first read, with a few
 * deliberate mistakes (a newer BMC baseline on every 40th node, one GPU too many on every 97th), and
 * nothing for the units nobody has a record of. It is imported through the same `importEbom` an operator
 * uses, in batches as units are first seen (every `flushEveryMs`), once per node however often the demo restarts.
 */
export async function declareDemoEbom(store: EventStore, bmcs: readonly SimBmcInfo[], signal: AbortSignal, flushEveryMs = 10_000): Promise<void> {
  const byId = new Map(bmcs.map((bmc, index) => [bmc.id, { bmc, index }]));
  const declared = new Set<string>();
  const pending = new Map<string, Record<string, unknown>>();
  // A restart reads the earlier runs' observations before their declarations (the log's order): rows queued then
  // are dropped as the declarations arrive, and nothing is imported before the log as it stood at start was read.
  // So a node is declared once, whatever the number of restarts.
  const headAtStart = (await withBoundedRetries('reading the head of the log', () => store.head())).position;
  let caughtUp = headAtStart === 0;
  const flush = async (): Promise<void> => {
    if (!caughtUp || pending.size === 0) return;
    const rows = [...pending.values()];
    pending.clear();
    let result: Awaited<ReturnType<typeof importEbom>>;
    try {
      result = await importEbom(store, { text: JSON.stringify(rows, null, 1), format: 'json', source: 'demo: procurement records', operatorId: 'demo-procurement' });
    } catch (error) {
      // The ledger away (a database restart): the rows wait for the next flush instead of being lost for good.
      for (const row of rows) pending.set(String(row.nodeId), row);
      throw error;
    }
    if (!result.ok) for (const row of rows) declared.delete(String(row.nodeId));
  };
  const timer = setInterval(() => void flush().catch(() => undefined), flushEveryMs);
  try {
    await store.follow(
      { fromPosition: 1, types: ['NodeInventoryObserved', 'NodeDeclared'], reportEmptyBatches: true },
      (batch) => {
        if (batch.checkpoint >= headAtStart) caughtUp = true;
        for (const event of batch.events) {
          const nodeId = event.stream.replace(/^node-/, '');
          if (event.type === 'NodeDeclared') {
            declared.add(nodeId);
            pending.delete(nodeId);
            continue;
          }
          const known = byId.get(nodeId);
          if (!known || !known.bmc.recorded || declared.has(nodeId)) continue;
          const parsed = NodeInventoryObserved.schema.safeParse(event.data);
          if (!parsed.success) continue;
          const data = parsed.data;
          if (!data.system.serialNumber || !data.system.manufacturer || !data.system.model) continue;
          declared.add(nodeId);
          const { bmc, index } = known;
          const gpuCount = data.gpus?.count;
          pending.set(nodeId, {
            nodeId,
            site: bmc.site,
            rack: bmc.rack,
            manufacturer: data.system.manufacturer,
            model: data.system.model,
            serial: data.system.serialNumber,
            ...(gpuCount !== undefined ? { gpuCount: index % 97 === 5 ? gpuCount + 1 : gpuCount } : {}),
            ...(data.gpus?.models[0] ? { gpuModel: data.gpus.models[0] } : {}),
            ...(data.memory?.totalGiB ? { memoryGiB: Math.round(data.memory.totalGiB) } : {}),
            firmwareBaseline: data.bmc.firmwareVersion ? { BMC: index % 40 === 7 ? `${data.bmc.firmwareVersion}.1` : data.bmc.firmwareVersion } : {},
            powerFeed: bmc.pdu,
            networkPort: `${bmc.tor}:${(index % 48) + 1}`,
          });
        }
      },
      signal,
    );
  } finally {
    clearInterval(timer);
    await flush().catch(() => undefined);
  }
}
