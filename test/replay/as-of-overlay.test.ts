/**
 * The rule time travel's views rest on: a read model built over a snapshot by copy on read (an empty overlay, rows
 * pulled from the snapshot when a load or a delete selects them, the snapshot's other rows read through a SQL view)
 * holds exactly what the same writes give on a full copy of the snapshot. Checked for random snapshots and random
 * sequences of the three operations projections use (`loadRows`, `upsertRows`, `deleteRows`), by the primary key and
 * by another column, including writes to rows never loaded and deletes of rows the overlay already holds.
 */
import fc from 'fast-check';
import { sql, type Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTable, deleteRows, loadRows, upsertRows, withTableOverlay, withTablesInMemory, type Row, type TableSpec } from '../../projections/support/table.js';
import { createClaimedTable, createReadView } from '../../replay/as-of/materialize.js';
import { freshKysely } from '../support/backends.js';

const spec: TableSpec = {
  name: 'parts',
  primaryKey: ['node', 'slot'],
  columns: { node: { type: 'text' }, slot: { type: 'integer' }, rack: { type: 'text' }, version: { type: 'integer', nullable: true } },
  indexes: [['rack']],
};

type Op =
  | { kind: 'upsert'; rows: Row[] }
  | { kind: 'load' | 'delete'; column: 'node' | 'rack' | 'slot'; values: Array<string | number> };

const node = fc.constantFrom('n1', 'n2', 'n3', 'n4', 'n5');
const rack = fc.constantFrom('r1', 'r2', 'r3');
const slot = fc.integer({ min: 1, max: 4 });
const row = fc.record({ node, slot, rack, version: fc.option(fc.integer({ min: 0, max: 9 }), { nil: null }) });
const rows = fc.uniqueArray(row, { selector: (r) => `${r.node}/${r.slot}`, maxLength: 14 });
const op: fc.Arbitrary<Op> = fc.oneof(
  rows.map((r) => ({ kind: 'upsert' as const, rows: r })),
  fc.record({ kind: fc.constantFrom('load' as const, 'delete' as const), column: fc.constant('node' as const), values: fc.uniqueArray(node, { minLength: 1, maxLength: 3 }) }),
  fc.record({ kind: fc.constantFrom('load' as const, 'delete' as const), column: fc.constant('rack' as const), values: fc.uniqueArray(rack, { minLength: 1, maxLength: 2 }) }),
  fc.record({ kind: fc.constantFrom('load' as const, 'delete' as const), column: fc.constant('slot' as const), values: fc.uniqueArray(slot, { minLength: 1, maxLength: 2 }) }),
);

const sorted = (list: Row[]): Row[] => [...list].sort((a, b) => `${a.node}/${a.slot}`.localeCompare(`${b.node}/${b.slot}`));

/** Runs the operations against `target`; what each load answered, in order. */
async function run(target: Kysely<any>, ops: readonly Op[]): Promise<Row[][]> {
  const loaded: Row[][] = [];
  for (const step of ops) {
    if (step.kind === 'upsert') await upsertRows(target, spec, step.rows);
    else if (step.kind === 'delete') await deleteRows(target, spec, step.column, step.values);
    else loaded.push(sorted(await loadRows(target, spec, step.column, step.values)));
  }
  return loaded;
}

describe('time travel reads a snapshot through a copy-on-read overlay', () => {
  let db: Kysely<any>;
  let close: () => Promise<void>;

  beforeAll(async () => {
    ({ db, close } = await freshKysely());
  });

  afterAll(async () => {
    await close?.();
  });

  it('for all snapshots and all sequences of loads, upserts and deletes, the overlay answers every load and ends as a full copy would', async () => {
    await fc.assert(
      fc.asyncProperty(rows, fc.array(op, { minLength: 1, maxLength: 12 }), async (snapshot, ops) => {
        await sql`DROP SCHEMA IF EXISTS full_copy, base, work, answer CASCADE`.execute(db);
        for (const schema of ['full_copy', 'base', 'work', 'answer']) await sql`CREATE SCHEMA ${sql.id(schema)}`.execute(db);
        for (const schema of ['full_copy', 'base', 'work']) await createTable(db.withSchema(schema), spec);
        await upsertRows(db.withSchema('full_copy'), spec, snapshot);
        await upsertRows(db.withSchema('base'), spec, snapshot);
        await createClaimedTable(db, 'work', 'base', spec.name);
        const expected = await run(db.withSchema('full_copy'), ops);
        const loaded = await withTableOverlay({ schema: 'work', base: 'base', tables: new Set([spec.name]) }, () => run(db.withSchema('work'), ops));
        expect(loaded).toEqual(expected);
        await createReadView(db, 'answer', 'work', 'base', spec.name);
        const whole = sorted(await db.withSchema('answer').selectFrom(spec.name).selectAll().execute());
        expect(whole).toEqual(sorted(await db.withSchema('full_copy').selectFrom(spec.name).selectAll().execute()));
        // The snapshot itself is never written.
        expect(sorted(await db.withSchema('base').selectFrom(spec.name).selectAll().execute())).toEqual(sorted(snapshot));
      }),
      { numRuns: 60 },
    );
  });

  it('a table held in memory over an overlay answers every load as a full copy would, and writes nothing', async () => {
    await fc.assert(
      fc.asyncProperty(rows, fc.array(op, { minLength: 1, maxLength: 12 }), async (snapshot, ops) => {
        await sql`DROP SCHEMA IF EXISTS full_copy, base, work CASCADE`.execute(db);
        for (const schema of ['full_copy', 'base', 'work']) await sql`CREATE SCHEMA ${sql.id(schema)}`.execute(db);
        for (const schema of ['full_copy', 'base', 'work']) await createTable(db.withSchema(schema), spec);
        await upsertRows(db.withSchema('full_copy'), spec, snapshot);
        await upsertRows(db.withSchema('base'), spec, snapshot);
        await createClaimedTable(db, 'work', 'base', spec.name);
        const expected = await run(db.withSchema('full_copy'), ops);
        const loaded = await withTableOverlay({ schema: 'work', base: 'base', tables: new Set([spec.name]) }, () =>
          withTablesInMemory(new Set([spec.name]), () => run(db.withSchema('work'), ops)),
        );
        expect(loaded).toEqual(expected);
        expect(await db.withSchema('work').selectFrom(spec.name).selectAll().execute()).toEqual([]);
        expect(sorted(await db.withSchema('base').selectFrom(spec.name).selectAll().execute())).toEqual(sorted(snapshot));
      }),
      { numRuns: 60 },
    );
  });

  it('outside an overlay, the three operations read and write the table they are bound to, and nothing else', async () => {
    await sql`DROP SCHEMA IF EXISTS work, base CASCADE`.execute(db);
    await sql`CREATE SCHEMA work`.execute(db);
    await sql`CREATE SCHEMA base`.execute(db);
    await createTable(db.withSchema('work'), spec);
    await createTable(db.withSchema('base'), spec);
    await upsertRows(db.withSchema('base'), spec, [{ node: 'n1', slot: 1, rack: 'r1', version: 1 }]);
    expect(await loadRows(db.withSchema('work'), spec, 'node', ['n1'])).toEqual([]);
  });
});
