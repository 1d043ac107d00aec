/**
 * The ledger clock (`recorded_at`) is the database server's, shared by every writer. It never runs backwards along
 * the log, so one writer whose own clock ran ahead would otherwise pin every later event's `recorded_at` to its
 * future, and time travel by instant would find nothing after it.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { EventStore } from '../../src/ledger/index.js';
import { backends, freshDatabase } from '../support/backends.js';
import { cordon } from '../support/ledger-fixtures.js';

const backend = backends()[0]!;

describe('the ledger clock', () => {
  let database: { url: string; drop: () => Promise<void> };
  let store: EventStore;

  beforeAll(async () => {
    database = await freshDatabase(backend.adminUrl!);
    store = await EventStore.open({ connectionString: database.url, poolSize: 2 });
  });

  afterAll(async () => {
    vi.useRealTimers();
    await store?.close();
    await database?.drop();
  });

  it('a writer whose own clock says 2099 records the server time, so it cannot pin recorded_at for later events', async () => {
    const observedAt = new Date().toISOString();
    // This store wrote the head last, so its next append is guessed in one round trip, with recorded_at from its own
    // estimate of the server's clock: the guard refuses one that far from the server's, and the append takes the long way.
    await store.append('node-n0', [{ ...cordon('n0'), observedAt }]);
    const misses = store.stats.speculationMisses;
    vi.useFakeTimers({ toFake: ['Date'], now: new Date('2099-06-01T00:00:00Z') });
    let skewed;
    try {
      skewed = await store.append('node-n1', [{ ...cordon('n1'), observedAt }]);
    } finally {
      vi.useRealTimers();
    }
    expect(store.stats.speculationMisses).toBe(misses + 1);
    const after = await store.append('node-n2', [{ ...cordon('n2'), observedAt }]);
    const [first, second] = await store.readAll({ fromPosition: skewed.positions[0]!, limit: 2 });
    const tomorrow = Date.now() + 86_400_000;
    expect(first!.recordedAt.getTime()).toBeLessThan(tomorrow);
    expect(second!.position).toBe(after.positions[0]);
    expect(second!.recordedAt.getTime()).toBeLessThan(tomorrow);
    expect(second!.recordedAt.getTime()).toBeGreaterThanOrEqual(first!.recordedAt.getTime());
  });
});
