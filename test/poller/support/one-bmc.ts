import { afterAll, beforeAll } from 'vitest';
import { EventStore } from '../../../src/ledger/index.js';
import { parseScenario, startSimulator, type Simulator } from '../../../src/sim/index.js';
import { backends, freshDatabase } from '../../support/backends.js';

/**
 * One simulated Dell BMC answering at once, and a store on a fresh database, for the enclosing `describe`: started
 * before its tests, closed and dropped after them. Read `sim` and `store` inside the tests.
 */
export function withOneSimulatedBmc(name: string): { readonly sim: Simulator; readonly store: EventStore } {
  const held = {} as { sim: Simulator; store: EventStore; drop: () => Promise<void> };
  beforeAll(async () => {
    held.sim = await startSimulator({ scenario: parseScenario({ name, fleet: { bmcs: 1, mix: [{ fixture: 'dell' }] }, behaviour: { latencyScale: 0.01 } }), clockFactor: 1 });
    const db = await freshDatabase(backends()[0]!.adminUrl!);
    held.drop = db.drop;
    held.store = await EventStore.open({ connectionString: db.url });
  });
  afterAll(async () => {
    await held.sim?.close();
    await held.store?.close();
    await held.drop?.();
  });
  return {
    get sim() {
      return held.sim;
    },
    get store() {
      return held.store;
    },
  };
}
