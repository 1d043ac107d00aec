/**
 * The rule a rebuild's speed rests on: a projection's tables held in memory (`holdTablesForRebuild`) answer every load
 * as the database would, undo a failed apply as a rolled-back transaction does, and once flushed leave the tables
 * exactly as the same writes made straight to the database. Checked for random sequences of applies (loads, upserts
 * and deletes by the key and by other columns), some rolled back, with flushes (some emptying memory) in between.
 */
import fc from 'fast-check';
import { sql, type Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTable, deleteRows, holdTablesForRebuild, loadRows, upsertRows, type Row, type TableSpec } from '../../projections/support/table.js';
import { freshKysely } from '../support/backends.js';
// The ledger reads int8 as a JS number (set where the store is defined), as the projections see it in the product.
import '../../src/ledger/index.js';

const parts: TableSpec = {
  name: 'parts',
  primaryKey: ['node', 'slot'],
  columns: {
    node: { type: 'text' },
    slot: { type: 'integer' },
    rack: { type: 'text' },
    tags: { type: 'jsonb', nullable: true },
    seen: { type: 'timestamptz', nullable: true },
  },
  indexes: [['rack']],
};
const nodes: TableSpec = {
  name: 'nodes',
  primaryKey: ['node'],
  columns: { node: { type: 'text' }, rack: { type: 'text' }, count: { type: 'bigint' }, state: { type: 'json', nullable: true } },
};

type Op =
  | { kind: 'upsert'; table: 'parts' | 'nodes'; rows: Row[] }
  | { kind: 'load' | 'delete'; table: 'parts' | 'nodes'; column: string; values: Array<string | number> };

interface Segment {
  ops: Op[];
  /** The apply throws after its operations: everything it did is undone. */
  fails: boolean;
  /** What happens after the apply: nothing, a flush, or a flush that empties memory. */
  then: 'none' | 'flush' | 'evict';
}

const node = fc.constantFrom('n1', 'n2', 'n3', 'n4');
const rack = fc.constantFrom('r1', 'r2');
const slot = fc.integer({ min: 1, max: 3 });
const seen = fc.option(fc.integer({ min: 0, max: 3 }).map((minute) => new Date(Date.UTC(2026, 11, 1, 3, minute))), { nil: null });
const partRows = fc.uniqueArray(
  fc.record({ node, slot, rack, tags: fc.option(fc.array(fc.constantFrom('a', 'b'), { maxLength: 2 }), { nil: null }), seen }),
  { selector: (r) => `${r.node}/${r.slot}`, maxLength: 6 },
);
const nodeRows = fc.uniqueArray(
  fc.record({ node, rack, count: fc.integer({ min: 0, max: 5 }), state: fc.option(fc.record({ misses: fc.integer({ min: 0, max: 3 }) }), { nil: null }) }),
  { selector: (r) => r.node, maxLength: 4 },
);
const op: fc.Arbitrary<Op> = fc.oneof(
  partRows.map((rows) => ({ kind: 'upsert' as const, table: 'parts' as const, rows })),
  nodeRows.map((rows) => ({ kind: 'upsert' as const, table: 'nodes' as const, rows })),
  fc.record({ kind: fc.constantFrom('load' as const, 'delete' as const), table: fc.constant('parts' as const), column: fc.constant('node'), values: fc.uniqueArray(node, { minLength: 1, maxLength: 2 }) }),
  fc.record({ kind: fc.constantFrom('load' as const, 'delete' as const), table: fc.constant('parts' as const), column: fc.constant('rack'), values: fc.uniqueArray(rack, { minLength: 1, maxLength: 2 }) }),
  fc.record({ kind: fc.constant('load' as const), table: fc.constant('parts' as const), column: fc.constant('slot'), values: fc.uniqueArray(slot, { minLength: 1, maxLength: 2 }) }),
  fc.record({ kind: fc.constantFrom('load' as const, 'delete' as const), table: fc.constant('nodes' as const), column: fc.constant('node'), values: fc.array(node, { minLength: 1, maxLength: 3 }) }),
  fc.record({ kind: fc.constantFrom('load' as const, 'delete' as const), table: fc.constant('nodes' as const), column: fc.constant('rack'), values: fc.uniqueArray(rack, { minLength: 1, maxLength: 2 }) }),
);
const segment: fc.Arbitrary<Segment> = fc.record({
  ops: fc.array(op, { minLength: 1, maxLength: 5 }),
  fails: fc.boolean(),
  then: fc.constantFrom('none' as const, 'none' as const, 'flush' as const, 'evict' as const),
});

const keyOf = (row: Row): string => `${row.node}/${row.slot ?? ''}`;
const sorted = (list: Row[]): Row[] => [...list].sort((a, b) => keyOf(a).localeCompare(keyOf(b)));
const specOf = (table: 'parts' | 'nodes'): TableSpec => (table === 'parts' ? parts : nodes);
class Undo extends Error {}

/** Runs the operations against `target`; what each load answered, in order. A caller's change to a loaded row is its own. */
async function run(target: Kysely<any>, ops: readonly Op[], answers: Row[][]): Promise<void> {
  for (const step of ops) {
    const spec = specOf(step.table);
    if (step.kind === 'upsert') {
      // Written from copies the caller then changes: what is held (and later written) must not change with them.
      const rows = step.rows.map((row) => ({ ...row, ...(Array.isArray(row.tags) ? { tags: [...row.tags] } : {}), ...(row.state ? { state: { ...(row.state as object) } } : {}) }));
      await upsertRows(target, spec, rows);
      for (const row of rows) {
        if (Array.isArray(row.tags)) row.tags.push('changed after the write');
        if (row.state && typeof row.state === 'object') (row.state as { misses: number }).misses = 77;
      }
    } else if (step.kind === 'delete') await deleteRows(target, spec, step.column, step.values);
    else {
      const loaded = await loadRows(target, spec, step.column, step.values);
      answers.push(sorted(loaded.map((row) => ({ ...row }))));
      // A projection may change the rows it loaded: what is held must not change with them.
      for (const row of loaded) {
        if (Array.isArray(row.tags)) row.tags.push('changed');
        if (row.state && typeof row.state === 'object') (row.state as { misses: number }).misses = 99;
        if (row.seen instanceof Date) row.seen.setTime(0);
      }
    }
  }
}

describe('a rebuild holds its tables in memory', () => {
  let db: Kysely<any>;
  let close: () => Promise<void>;

  beforeAll(async () => {
    ({ db, close } = await freshKysely());
  });

  afterAll(async () => {
    await close?.();
  });

  it('for all sequences of applies, rolled back or not, with flushes between, every load answers as the database does and the flushed tables equal it', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(segment, { minLength: 1, maxLength: 8 }), async (segments) => {
        await sql`DROP SCHEMA IF EXISTS direct, held CASCADE`.execute(db);
        for (const schema of ['direct', 'held']) {
          await sql`CREATE SCHEMA ${sql.id(schema)}`.execute(db);
          await createTable(db.withSchema(schema), parts);
          await createTable(db.withSchema(schema), nodes);
        }
        const expected: Row[][] = [];
        const answered: Row[][] = [];
        const memory = holdTablesForRebuild(['parts', 'nodes']);
        for (const { ops, fails, then } of segments) {
          // Straight to the database, in a transaction that a failing apply rolls back.
          await db
            .transaction()
            .execute(async (trx) => {
              await run(trx.withSchema('direct'), ops, expected);
              if (fails) throw new Undo();
            })
            .catch((error: unknown) => {
              if (!(error instanceof Undo)) throw error;
            });
          // Held in memory, bracketed as the runner brackets an apply.
          memory.begin();
          try {
            await memory.run(async () => {
              await run(db.withSchema('held'), ops, answered);
              if (fails) throw new Undo();
            });
            memory.commit();
          } catch (error) {
            if (!(error instanceof Undo)) throw error;
            memory.rollback();
          }
          if (then !== 'none') await memory.flush(db.withSchema('held'), { evict: then === 'evict' });
        }
        expect(answered).toEqual(expected);
        await memory.flush(db.withSchema('held'), { evict: true });
        for (const table of ['parts', 'nodes']) {
          const direct = sorted(await db.withSchema('direct').selectFrom(table).selectAll().execute());
          expect(sorted(await db.withSchema('held').selectFrom(table).selectAll().execute())).toEqual(direct);
        }
      }),
      { numRuns: 120 },
    );
  }, 120_000);

  it('refuses to select held rows by a time or JSON column, naming it (held as milliseconds and objects, they would match loosely)', async () => {
    await sql`DROP SCHEMA IF EXISTS held CASCADE`.execute(db);
    await sql`CREATE SCHEMA held`.execute(db);
    await createTable(db.withSchema('held'), parts);
    const memory = holdTablesForRebuild(['parts']);
    const seenAt = new Date(Date.UTC(2026, 11, 1, 3, 0));
    await memory.run(() => upsertRows(db.withSchema('held'), parts, [{ node: 'n1', slot: 1, rack: 'r1', tags: null, seen: seenAt }]));
    await expect(memory.run(() => loadRows(db.withSchema('held'), parts, 'seen', [seenAt]))).rejects.toThrow('parts: rows held in memory cannot be selected by timestamptz column seen');
    await expect(memory.run(() => loadRows(db.withSchema('held'), parts, 'tags', [['a']]))).rejects.toThrow('jsonb column tags');
    expect(await memory.run(() => loadRows(db.withSchema('held'), parts, 'rack', ['r1']))).toEqual([{ node: 'n1', slot: 1, rack: 'r1', tags: null, seen: seenAt }]);
  });

  it('writes nothing to the database until flushed', async () => {
    await sql`DROP SCHEMA IF EXISTS held CASCADE`.execute(db);
    await sql`CREATE SCHEMA held`.execute(db);
    await createTable(db.withSchema('held'), nodes);
    const memory = holdTablesForRebuild(['nodes']);
    await memory.run(() => upsertRows(db.withSchema('held'), nodes, [{ node: 'n1', rack: 'r1', count: 1, state: null }]));
    expect(memory.rows).toBe(1);
    expect(await db.withSchema('held').selectFrom('nodes').selectAll().execute()).toEqual([]);
    await memory.flush(db.withSchema('held'), { evict: true });
    expect(memory.rows).toBe(0);
    expect(await db.withSchema('held').selectFrom('nodes').selectAll().execute()).toEqual([{ node: 'n1', rack: 'r1', count: 1, state: null }]);
  });
});
