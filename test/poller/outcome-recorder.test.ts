/**
 * Poll outcomes across a ledger outage: a batch whose append failed is retried with the same event id and content,
 * so an append that did commit (its answer lost) is a replay on retry, never a duplicate (duplicated misses could mark
 * nodes dark); what waits for the ledger is bounded and the excess is counted, not kept.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PollOutcomesBatch } from '../../events/index.js';
import { EventStore, LedgerError } from '../../src/ledger/index.js';
import { OutcomeRecorder } from '../../src/poller/index.js';
import { backends, freshDatabase } from '../support/backends.js';

const backend = backends()[0]!;

describe(`poll outcomes across a ledger outage on ${backend.name} PostgreSQL`, () => {
  let store: EventStore;
  let drop: () => Promise<void>;
  beforeAll(async () => {
    const db = await freshDatabase(backend.adminUrl!);
    drop = db.drop;
    store = await EventStore.open({ connectionString: db.url });
  });
  afterAll(async () => {
    await store?.close();
    await drop?.();
  });

  it('an outcome batch whose commit answer was lost is retried as a replay: every outcome is in the log exactly once', async () => {
    let calls = 0;
    // The first append commits, then its caller hears only that the outcome is unknown (connection lost after COMMIT).
    const flaky = new Proxy(store, {
      get(target, property, receiver) {
        if (property !== 'append') return Reflect.get(target, property, receiver);
        return async (...args: Parameters<EventStore['append']>) => {
          calls += 1;
          const result = await target.append(...args);
          if (calls === 1) throw new LedgerError('LEDGER_COMMIT_UNKNOWN', { eventIds: [], cause: 'test' }, 'outcome unknown');
          return result;
        };
      },
    });
    const recorder = new OutcomeRecorder(flaky);
    const t0 = Date.parse('2026-12-01T00:00:00Z');
    for (let i = 0; i < 5; i += 1) recorder.record('fra1', `n-${i}`, 'liveness', 'timeout', 5000, t0 + i);
    await recorder.flush();
    expect(recorder.pendingOutcomes).toBe(5);
    for (let i = 5; i < 8; i += 1) recorder.record('fra1', `n-${i}`, 'liveness', 'success', 40, t0 + 60_000 + i);
    await recorder.flush();
    expect(recorder.pendingOutcomes).toBe(0);
    const batches = (await store.readStream('polls-fra1')).map((event) => event.data as PollOutcomesBatch);
    expect(batches.flatMap((batch) => batch.nodeIds)).toEqual(['n-0', 'n-1', 'n-2', 'n-3', 'n-4', 'n-5', 'n-6', 'n-7']);
    expect(recorder.outcomesRecorded).toBe(8);
  });

  it('while the ledger is unreachable, waiting outcomes stay within the budget; the oldest are dropped and counted', async () => {
    let up = false;
    const down = new Proxy(store, {
      get(target, property, receiver) {
        if (property !== 'append') return Reflect.get(target, property, receiver);
        return async (...args: Parameters<EventStore['append']>) => {
          if (up) return target.append(...args);
          throw new LedgerError('LEDGER_STORE_UNAVAILABLE', { operation: 'append', cause: 'test' }, 'down');
        };
      },
    });
    const recorder = new OutcomeRecorder(down, 20_000, 10);
    const t0 = Date.parse('2026-12-01T01:00:00Z');
    for (let round = 0; round < 4; round += 1) {
      for (let i = 0; i < 4; i += 1) recorder.record('ams1', `m-${round}-${i}`, 'liveness', 'timeout', 5000, t0 + round * 60_000 + i);
      await recorder.flush();
      expect(recorder.pendingOutcomes).toBeLessThanOrEqual(10);
    }
    expect(recorder.outcomesDropped).toBe(8);
    expect(recorder.pendingOutcomes).toBe(8);
    // Back up: what was kept goes out, oldest first.
    up = true;
    await recorder.flush();
    expect(recorder.pendingOutcomes).toBe(0);
    const kept = (await store.readStream('polls-ams1')).flatMap((event) => (event.data as PollOutcomesBatch).nodeIds);
    expect(kept).toEqual(['m-2-0', 'm-2-1', 'm-2-2', 'm-2-3', 'm-3-0', 'm-3-1', 'm-3-2', 'm-3-3']);
  });
});
