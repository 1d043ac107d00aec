import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EventStore, isLedgerError } from '../../src/ledger/index.js';
import { SagaOwnership, type SagaLease } from '../../sagas/engine/saga-ownership.js';
import { backends, freshDatabase } from '../support/backends.js';

/**
 * The saga fence in one process: two `SagaOwnership`s stand for two processes on one database. What several OS
 * processes do (SIGKILL, a lock session ended under a live process) is in `rollout-across-processes.test.ts`.
 */
describe('saga leases are fenced by an epoch', () => {
  let store: EventStore;
  let drop: () => Promise<void>;
  let observer: pg.Client;
  const owners: SagaOwnership[] = [];
  beforeAll(async () => {
    const db = await freshDatabase(backends()[0]!.adminUrl!);
    drop = db.drop;
    store = await EventStore.open({ connectionString: db.url });
    observer = new pg.Client({ connectionString: db.url });
    await observer.connect();
  });
  afterAll(async () => {
    for (const owner of owners) await owner.close();
    await observer?.end();
    await store?.close();
    await drop?.();
  });

  const ownership = (): SagaOwnership => {
    const owner = new SagaOwnership(store.connectionString);
    owners.push(owner);
    return owner;
  };
  const released = (lease: Pick<SagaLease, 'stamp'>, slot: string) => ({
    type: 'SlotReleased',
    data: { site: 'ams1', slotId: slot, sagaId: 'r1', nodeId: 'n1', why: 'test' },
    actor: { kind: 'saga' as const, id: 'rollout:r1', lease: lease.stamp },
  });
  /** Ends the session holding the saga's lock, as an administrator or an idle_session_timeout would. */
  const cut = async (key: string): Promise<void> => {
    const { rows } = await observer.query<{ pid: number }>(
      `SELECT l.pid FROM pg_locks l WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 1
          AND ((l.classid::bigint << 32) | l.objid::bigint) = (hashtext($1)::bigint & x'ffffffffffffffff'::bigint)`,
      [key],
    );
    expect(rows).toHaveLength(1);
    await observer.query('SELECT pg_terminate_backend($1)', [rows[0]!.pid]);
  };

  it('a take raises the epoch; an append under the superseded epoch is refused with LEDGER_STALE_EPOCH and writes nothing', async () => {
    const key = 'fleet-ledger:rollout:fence-1';
    const a = ownership();
    const first = (await a.tryTake(key))!;
    expect(first.epoch).toBe(1);
    await store.append('capacity-fence-1', [released(first, 's1')]);
    // `a` loses its lock session but has not noticed; `b` takes the saga over.
    await cut(key);
    const b = ownership();
    let second: SagaLease | undefined;
    for (let i = 0; i < 50 && !second; i++) second = await b.tryTake(key);
    expect(second!.epoch).toBe(2);

    const head = (await store.head()).position;
    const refused = await store.append('capacity-fence-1', [released(first, 's2')]).catch((error: unknown) => error);
    expect(isLedgerError(refused) && refused.code).toBe('LEDGER_STALE_EPOCH');
    expect(isLedgerError(refused) && refused.details).toMatchObject({ saga: key, epoch: 1, currentEpoch: 2 });
    expect((await store.head()).position).toBe(head);

    await store.append('capacity-fence-1', [released(second!, 's3')]);
    const stored = await store.readStream('capacity-fence-1');
    expect(stored.map((event) => (event.actor.kind === 'saga' ? event.actor.lease?.epoch : undefined))).toEqual([1, 2]);
    await second!.release();
  });

  it('a saga key nobody ever took is refused the same way', async () => {
    const refused = await store.append('capacity-fence-2', [released({ stamp: { saga: 'fleet-ledger:rollout:never-taken', epoch: 1 } }, 's1')]).catch((error: unknown) => error);
    expect(isLedgerError(refused) && refused.code).toBe('LEDGER_STALE_EPOCH');
  });

  it('a take-over waits for an append under the old epoch still in its transaction, so the new owner reads what it wrote', async () => {
    const key = 'fleet-ledger:rollout:fence-3';
    const a = ownership();
    const first = (await a.tryTake(key))!;
    // What an append transaction of `a` does: read its saga's lease row FOR SHARE, and not commit yet.
    const inFlight = new pg.Client({ connectionString: store.connectionString });
    await inFlight.connect();
    await inFlight.query('BEGIN');
    expect(Number((await inFlight.query(`SELECT epoch FROM saga_leases WHERE saga = $1 FOR SHARE`, [key])).rows[0].epoch)).toBe(first.epoch);
    await cut(key);
    const b = ownership();
    let taken: SagaLease | undefined;
    const taking = (async () => {
      for (let i = 0; i < 50 && !taken; i++) taken = await b.tryTake(key);
      return taken;
    })();
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(taken).toBeUndefined(); // the raise waits on the row the append holds
    await inFlight.query('COMMIT');
    await inFlight.end();
    expect((await taking)!.epoch).toBe(first.epoch + 1);
    await taken!.release();
  });

  it('a released saga taken again by the same process gets a new epoch', async () => {
    const key = 'fleet-ledger:rollout:fence-4';
    const a = ownership();
    const first = (await a.tryTake(key))!;
    await first.release();
    const again = (await a.tryTake(key))!;
    expect(again.epoch).toBe(first.epoch + 1);
    const refused = await store.append('capacity-fence-4', [released(first, 's1')]).catch((error: unknown) => error);
    expect(isLedgerError(refused) && refused.code).toBe('LEDGER_STALE_EPOCH');
    await again.release();
  });
});
