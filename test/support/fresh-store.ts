import { afterAll, beforeAll } from 'vitest';
import { EventStore } from '../../src/ledger/index.js';
import { backends, freshDatabase } from './backends.js';

/**
 * An event store on a fresh database of the first backend, for the enclosing `describe`: opened before its tests, closed
 * and its database dropped after them. Call it in the `describe`'s body; read the store inside a test (`store()`).
 */
export function useFreshStore(): () => EventStore {
  let store: EventStore | undefined;
  let drop: (() => Promise<void>) | undefined;
  beforeAll(async () => {
    const db = await freshDatabase(backends()[0]!.adminUrl!);
    drop = db.drop;
    store = await EventStore.open({ connectionString: db.url });
  });
  afterAll(async () => {
    await store?.close();
    await drop?.();
  });
  return () => {
    if (!store) throw new Error('the fresh store is opened in beforeAll: read it inside a test');
    return store;
  };
}
