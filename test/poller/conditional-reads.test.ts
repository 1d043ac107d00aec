/**
 * Inventory and firmware reads are conditional: what they read changes only with the hardware or its firmware, so a
 * visit first asks each resource of the last full read with its ETag (`If-None-Match`); when every one answers 304
 * the visit is recorded as `not-modified` and nothing more is read (no JSON for the BMC to build). One changed
 * resource and the read is done in full, with new validators. Health (sensors, event logs) changes at every visit
 * and is always read in full.
 */
import { describe, expect, it } from 'vitest';
import type { PollOutcomeKind } from '../../events/index.js';
import { RedfishVisitor } from '../../src/poller/index.js';
import { pollOneBmc, withOneSimulatedBmc } from './support/one-bmc.js';
import { until } from './support/until.js';

describe('conditional inventory and firmware reads', () => {
  const fixture = withOneSimulatedBmc('conditional-reads');
  const options = { requestTimeoutMs: 5_000, firmwareTimeoutMs: 5_000, visitDeadlineMs: 20_000, sessionLimit: 2 };

  it('a read whose every resource answers 304 reads nothing more and observes nothing; one changed ETag and it is read in full', async () => {
    const bmc = fixture.sim.bmcs[0]!;
    const target = { nodeId: bmc.id, site: bmc.site, rack: bmc.rack, baseUrl: bmc.baseUrl, credentialRef: 'c', expectedIntervalS: 60 };
    const credential = { username: bmc.username, password: bmc.password, version: '1', endpoints: [new URL(bmc.baseUrl).origin] };
    const visitor = new RedfishVisitor();

    const first = fixture.sim.bmcStats(bmc.id)!;
    const full = await visitor.visit(target, credential, ['inventory', 'firmware'], options);
    expect(full.ok).toBe(true);
    const fullBytes = fixture.sim.bmcStats(bmc.id)!.bodyBytes - first.bodyBytes;
    expect(full.notModified).toBeUndefined();
    expect(full.observations.map((observation) => observation.type).sort()).toEqual(['FirmwareInventoryObserved', 'NodeInventoryObserved']);
    const validators = full.validators!;
    expect(validators.length).toBeGreaterThan(5);
    // What an inventory read fetches: no sensors (they change at every read and are the health lane's).
    expect(validators.filter(([path]) => /\/Sensors\/|\/Power$|\/Thermal$/.test(path))).toEqual([]);

    const before = fixture.sim.bmcStats(bmc.id)!;
    const unchanged = await visitor.visit(target, credential, ['inventory', 'firmware'], { ...options, validators });
    const after = fixture.sim.bmcStats(bmc.id)!;
    expect(unchanged).toMatchObject({ ok: true, notModified: true, observations: [] });
    expect(after.notModified - before.notModified).toBe(validators.length);
    // The BMC built and sent almost nothing (the service root, to find the session service): the bodies of the full
    // read it was spared.
    const sent = after.bodyBytes - before.bodyBytes;
    expect(sent).toBeLessThan(0.05 * fullBytes);
    expect(after.bodyBytesSpared - before.bodyBytesSpared).toBeGreaterThan(0.9 * fullBytes);
    process.stderr.write(`conditional reads, one ${bmc.vendor} BMC: full read ${fullBytes} body bytes; not-modified read ${sent} bytes, ${after.bodyBytesSpared - before.bodyBytesSpared} spared by ${validators.length} 304s\n`);

    // One resource changed (its ETag no longer matches): read in full again, with validators for next time.
    const changed = validators.map(([path, etag], index): [string, string] => [path, index === validators.length - 1 ? 'W/"an older one"' : etag]);
    const reread = await visitor.visit(target, credential, ['inventory', 'firmware'], { ...options, validators: changed });
    expect(reread.notModified).toBeUndefined();
    expect(reread.changedResource).toBe(validators[validators.length - 1]![0]); // asked first next time
    expect(reread.observations).toHaveLength(2);
    const sorted = (list: readonly (readonly [string, string])[]) => [...list].sort(([a], [b]) => a.localeCompare(b));
    expect(sorted(reread.validators!)).toEqual(sorted(validators));
  });

  it('the poller records an unchanged inventory as not-modified, appends nothing for it, and still reads health in full', async () => {
    const bmc = fixture.sim.bmcs[0]!;
    const outcomes: Record<'health' | 'inventory', PollOutcomeKind[]> = { health: [], inventory: [] };
    const poller = pollOneBmc(fixture, {
      intervals: { health: 0.9, inventory: 0.4, firmware: 3600 },
      expectedIntervalS: 60,
      onOutcome: (_nodeId, work, outcome) => {
        if (work === 'health' || work === 'inventory') outcomes[work].push(outcome);
      },
    });
    await until(() => outcomes.inventory.filter((outcome) => outcome === 'not-modified').length >= 3 && outcomes.health.length >= 2, 20_000, 'three not-modified inventory reads');
    await poller.stop();
    // The first read (with everything due) and the first inventory-alone read are full; after that, 304s.
    expect(outcomes.inventory.slice(0, 2)).toEqual(['success', 'success']);
    expect(outcomes.health.every((outcome) => outcome === 'success')).toBe(true);
    const inventories = (await fixture.store.readStream(`node-${bmc.id}`)).filter((event) => event.type === 'NodeInventoryObserved');
    expect(inventories).toHaveLength(1);
  });
});

describe('conditional reads and an observation the ledger could not take', () => {
  const fixture = withOneSimulatedBmc('conditional-reads-unstored');

  it('an inventory read in full but not stored is read in full again, not hidden behind a 304', async () => {
    const bmc = fixture.sim.bmcs[0]!;
    const store = fixture.store;
    // The first visit (every lane) cannot read back what the log holds of the node, and the second (inventory
    // alone, read in full for its validators) cannot append: the inventory is in neither.
    let recallsRefused = 0;
    let appendsRefused = 0;
    const pool = new Proxy(store.pool, {
      get: (target, key) =>
        key === 'query'
          ? (text: unknown, ...rest: unknown[]) => {
              if (typeof text === 'string' && text.includes('DISTINCT ON (type)') && recallsRefused++ === 0) return Promise.reject(new Error('connection reset'));
              return (target.query as (...args: unknown[]) => unknown).call(target, text, ...rest);
            }
          : Reflect.get(target, key, target),
    });
    const failing = new Proxy(store, {
      get: (target, key) => {
        if (key === 'pool') return pool;
        if (key === 'append') {
          return (stream: string, ...rest: unknown[]) =>
            stream.startsWith('node-') && appendsRefused++ === 0 ? Promise.reject(new Error('ledger unavailable')) : (target.append as (...args: unknown[]) => unknown).call(target, stream, ...rest);
        }
        const value = Reflect.get(target, key, target) as unknown;
        return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
      },
    });
    const inventory: PollOutcomeKind[] = [];
    const poller = pollOneBmc({ sim: fixture.sim, store: failing }, {
      intervals: { health: 3600, inventory: 0.4, firmware: 3600 },
      expectedIntervalS: 60,
      onOutcome: (_nodeId, work, outcome) => {
        if (work === 'inventory') inventory.push(outcome);
      },
    });
    await until(() => inventory.length >= 4, 20_000, 'four inventory reads');
    await poller.stop();
    expect(recallsRefused).toBeGreaterThanOrEqual(1);
    expect(appendsRefused).toBeGreaterThanOrEqual(1);
    const recorded = (await store.readStream(`node-${bmc.id}`)).filter((event) => event.type === 'NodeInventoryObserved');
    expect(recorded).toHaveLength(1);
  });
});
