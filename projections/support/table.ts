/**
 * A read-model table described once: its columns and key. The same description creates the table and
 * writes batches into it with one statement per batch (`INSERT ... SELECT FROM json_to_recordset(...) ON
 * CONFLICT DO UPDATE`: one parameter whatever the number of rows), which is what keeps a rebuild fast.
 * Every statement goes through kysely builders, so the schema the runner binds (`withSchema`) applies.
 *
 * Every projection reads and writes its tables only through `loadRows`, `upsertRows` and `deleteRows`. That is what
 * lets a rebuild hold all of a projection's tables in memory (`holdTablesForRebuild`) and write them once, before the
 * swap.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { sql, type Kysely, type Transaction } from 'kysely';
import type { DynamicDatabase } from '../../src/ledger/index.js';
import { jsonCopy } from './json-copy.js';

export type ColumnType = 'text' | 'integer' | 'bigint' | 'boolean' | 'timestamptz' | 'json' | 'jsonb' | 'double precision';

export interface ColumnSpec {
  type: ColumnType;
  nullable?: boolean;
}

export interface TableSpec {
  name: string;
  primaryKey: readonly string[];
  columns: Readonly<Record<string, ColumnSpec>>;
  /** Secondary indexes: each a list of columns. */
  indexes?: ReadonlyArray<readonly string[]>;
  /**
   * The columns (besides the key) whose every change is kept as a row version with its validity (`versions.ts`): the
   * table's history, and what time travel answers from. Absent: the table keeps no history.
   */
  versioned?: readonly string[];
}

export type Row = Record<string, unknown>;

/** What pg hands back for each column type (the ledger parses int8 to a number and timestamptz to a Date). */
export interface ColumnValue {
  text: string;
  integer: number;
  bigint: number;
  boolean: boolean;
  timestamptz: Date;
  json: unknown;
  jsonb: unknown;
  'double precision': number;
}

/**
 * The row type of a table spec, for kysely's table interfaces: each column's value, or `null` where it is nullable. A
 * spec declared with `satisfies TableSpec` keeps its column literals, so the read model's type follows its definition.
 */
export type TableRow<S extends TableSpec> = {
  -readonly [C in keyof S['columns']]: ColumnValue[S['columns'][C]['type']] | (S['columns'][C] extends { nullable: true } ? null : never);
};

export type Db = Kysely<DynamicDatabase> | Transaction<DynamicDatabase>;

export async function createTable(db: Kysely<DynamicDatabase>, spec: TableSpec): Promise<void> {
  let builder = db.schema.createTable(spec.name).ifNotExists();
  for (const [column, { type, nullable }] of Object.entries(spec.columns)) {
    builder = builder.addColumn(column, sql.raw(type), (c) => (nullable ? c : c.notNull()));
  }
  await builder.addPrimaryKeyConstraint(`${spec.name}_pk`, spec.primaryKey as never).execute();
  for (const columns of spec.indexes ?? []) {
    await db.schema
      .createIndex(`${spec.name}_${columns.join('_')}_idx`)
      .ifNotExists()
      .on(spec.name)
      .columns([...columns])
      .execute();
  }
}

function columnValue(type: ColumnType, value: unknown): unknown {
  if (value === undefined || value === null) return null;
  if (type === 'timestamptz') return value instanceof Date ? value.toISOString() : new Date(value as number | string).toISOString();
  return value;
}

/**
 * Inserts or replaces rows by primary key, in one statement whatever their number: the rows travel as one JSON
 * parameter expanded by `json_to_recordset` (cheaper to build and to parse than one array per column, and JSON
 * columns need no escaping inside an array literal). Rows carry every column of the table.
 */
export async function upsertRows(db: Db, spec: TableSpec, rows: readonly Row[]): Promise<void> {
  if (rows.length === 0) return;
  const memory = heldInMemory(spec);
  if (memory) {
    // Every row is converted before any is held: a row the database would refuse (an invalid time) leaves memory as it was.
    const held = rows.map((row) => heldRow(spec, row));
    for (const row of held) memory.held.write(memory.table, keyOf(spec, row), row);
    return;
  }
  const columns = Object.keys(spec.columns);
  const types = columns.map((column) => spec.columns[column]!.type);
  const records = rows.map((row) => {
    const record: Record<string, unknown> = {};
    for (let i = 0; i < columns.length; i += 1) record[columns[i]!] = columnValue(types[i]!, row[columns[i]!]);
    return record;
  });
  await writeRecords(db, spec, records, { jsonAsText: false });
}

/** Inserts or replaces records by primary key, one statement (`jsonAsText`: JSON columns hold JSON text, cast here). */
async function writeRecords(db: Db, spec: TableSpec, records: ReadonlyArray<Record<string, unknown>>, options: { jsonAsText: boolean }): Promise<void> {
  const columns = Object.keys(spec.columns);
  const types = columns.map((column) => spec.columns[column]!.type);
  const asText = (type: ColumnType): boolean => options.jsonAsText && (type === 'json' || type === 'jsonb');
  const definitions = sql.join(
    columns.map((column, i) => sql`${sql.id(column)} ${sql.raw(asText(types[i]!) ? 'text' : types[i]!)}`),
    sql`, `,
  );
  const selected = columns.map((column, i) => (asText(types[i]!) ? sql`${sql.ref(`r.${column}`)}::${sql.raw(types[i]!)}` : sql.ref(`r.${column}`)));
  const others = columns.filter((column) => !spec.primaryKey.includes(column));
  await db
    .insertInto(spec.name)
    .columns(columns)
    .expression(sql`SELECT ${sql.join(selected)} FROM json_to_recordset(${JSON.stringify(records)}::json) AS r(${definitions})`)
    .onConflict((oc) => {
      const target = oc.columns(spec.primaryKey as string[]);
      return others.length === 0
        ? target.doNothing()
        : target.doUpdateSet(Object.fromEntries(others.map((column) => [column, sql.ref(`excluded.${column}`)])));
    })
    .execute();
}

/**
 * One table held in memory: the latest version of every row written or read, as `heldRow` keeps it (timestamps as
 * epoch milliseconds, JSON columns as copies of their own, so a load hands out fresh objects a caller may change freely);
 * null: deleted while the database may still hold it. `deletes` are the filters (`column` = any of `values`) the rows
 * still in the database are subject to; `dirty` the keys written or deleted since the last flush (unless `complete`:
 * then every row is written at the flush); `indexes` a map per
 * column loaded or deleted by (other than the key) from each value to the keys of the rows holding it.
 */
interface HeldTable {
  spec: TableSpec;
  rows: Map<string, Row | null>;
  deletes: Array<{ column: string; values: Set<string> }>;
  dirty: Set<string>;
  indexes: Map<string, Map<string, Set<string>>>;
  /** The database's table holds none of this table's rows (a rebuild's scratch table before its first flush). */
  complete: boolean;
}

/** What a write inside `begin()` .. `commit()` replaced: restored by `rollback()`. */
interface Journal {
  rows: Map<HeldTable, Map<string, Row | null | undefined>>;
  deletes: Map<HeldTable, number>;
}

/**
 * Something else a rebuild accumulates in memory beside its tables' rows (a table's row versions): bracketed by the same
 * `begin` / `commit` / `rollback` as the rows, written at `flush` (`complete`: the rebuild's last flush, before the swap).
 */
export interface HeldBuffer {
  /** Entries held that the next flush will write (counted against the rebuild's memory allowance). */
  readonly size: number;
  begin(): void;
  commit(): void;
  rollback(): void;
  flush(db: Db, options: { complete: boolean }): Promise<void>;
}

const inMemory = new AsyncLocalStorage<HeldTables>();

/**
 * Tables held in memory across several applies: inside `run`, a write goes to memory only, a load reads memory first
 * and the database for what memory does not hold, a delete hides the matching rows of both.
 *
 * - A rebuild (`holdTablesForRebuild`) holds all of a projection's tables from an empty scratch schema, so no load
 *   reaches the database, and writes them with one set-based statement per 10,000 rows at `flush`: at the end, or when
 *   more rows are held than the rebuild allows (then memory is emptied, and later loads read what was flushed).
 * - `begin` / `commit` / `rollback` bracket one apply: an apply that throws leaves memory as it found it, as a
 *   rolled-back transaction leaves the database.
 */
export class HeldTables {
  readonly #names: ReadonlySet<string>;
  readonly #complete: boolean;
  readonly #tables = new Map<string, HeldTable>();
  readonly #buffers = new Map<string, HeldBuffer>();
  #journal: Journal | null = null;

  constructor(names: Iterable<string>, options: { complete?: boolean } = {}) {
    this.#names = new Set(names);
    this.#complete = options.complete ?? false;
  }

  run<T>(work: () => Promise<T>): Promise<T> {
    return this.#names.size === 0 ? work() : inMemory.run(this, work);
  }

  /** How many rows are held (deleted ones included). */
  get rows(): number {
    let rows = 0;
    for (const table of this.#tables.values()) rows += table.rows.size;
    return rows;
  }

  /** How many entries the buffers hold that only wait to be written. */
  get pending(): number {
    let pending = 0;
    for (const buffer of this.#buffers.values()) pending += buffer.size;
    return pending;
  }

  /** Writes the buffers' waiting entries, keeping the tables' rows in memory (loads keep reading memory). Never inside an apply. */
  async flushPending(db: Db): Promise<void> {
    if (this.#journal) throw new Error('flush inside an apply');
    for (const buffer of this.#buffers.values()) await buffer.flush(db, { complete: false });
  }

  /** The buffer held under `name` (one of the names held; made by `make` on first use), or null when `name` is not held. */
  buffer<B extends HeldBuffer>(name: string, make: () => B): B | null {
    if (!this.#names.has(name)) return null;
    let buffer = this.#buffers.get(name);
    if (!buffer) {
      this.#buffers.set(name, (buffer = make()));
      if (this.#journal) buffer.begin();
    }
    return buffer as B;
  }

  begin(): void {
    this.#journal = { rows: new Map(), deletes: new Map() };
    for (const buffer of this.#buffers.values()) buffer.begin();
  }

  commit(): void {
    this.#journal = null;
    for (const buffer of this.#buffers.values()) buffer.commit();
  }

  rollback(): void {
    const journal = this.#journal;
    this.#journal = null;
    for (const buffer of this.#buffers.values()) buffer.rollback();
    if (!journal) return;
    for (const [table, previous] of journal.rows) for (const [key, row] of previous) setHeld(table, key, row);
    for (const [table, length] of journal.deletes) table.deletes.length = length;
  }

  /**
   * Writes what changed since the last flush into the tables `db` is bound to (deletes first, then the rows, 10,000
   * per statement), then the buffers; with `evict`, memory is emptied after (`complete`: the last flush of a rebuild,
   * before its swap). Never inside `begin` .. `commit`.
   */
  async flush(db: Db, options: { evict?: boolean; complete?: boolean } = {}): Promise<void> {
    if (this.#journal) throw new Error('flush inside an apply');
    for (const table of this.#tables.values()) {
      const { spec } = table;
      for (const filter of table.deletes) {
        await db.deleteFrom(spec.name).where(sql<boolean>`${sql.ref(filter.column)} = any(${[...filter.values]})`).execute();
      }
      const gone: Row[] = [];
      const written: Row[] = [];
      // A table the database holds nothing of is written whole; otherwise what changed since the last flush.
      for (const key of table.complete ? table.rows.keys() : table.dirty) {
        const row = table.rows.get(key);
        if (row === null) gone.push(keyRecord(spec, key));
        else if (row !== undefined) written.push(heldToRecord(spec, row));
      }
      for (let i = 0; i < gone.length; i += 10_000) await deleteByKey(db, spec, gone.slice(i, i + 10_000));
      for (let i = 0; i < written.length; i += 10_000) await writeRecords(db, spec, written.slice(i, i + 10_000), { jsonAsText: true });
      table.deletes = [];
      table.dirty.clear();
      // The database holds rows of the table from now on: a load must look there for what memory does not hold.
      if (written.length > 0) table.complete = false;
      if (options.evict) {
        table.rows.clear();
        table.indexes.clear();
      }
    }
    for (const buffer of this.#buffers.values()) await buffer.flush(db, { complete: options.complete ?? false });
  }

  /** The held table of `spec`, if `spec` is one of the tables named (created on first use). */
  table(spec: TableSpec): HeldTable | null {
    if (!this.#names.has(spec.name)) return null;
    let table = this.#tables.get(spec.name);
    if (!table) this.#tables.set(spec.name, (table = { spec, rows: new Map(), deletes: [], dirty: new Set(), indexes: new Map(), complete: this.#complete }));
    return table;
  }

  /** Sets a row (undefined: forgets it), remembering what it replaced while an apply is open. */
  write(table: HeldTable, key: string, row: Row | null | undefined): void {
    const journal = this.#journal;
    if (journal) {
      let previous = journal.rows.get(table);
      if (!previous) journal.rows.set(table, (previous = new Map()));
      if (!previous.has(key)) previous.set(key, table.rows.get(key));
    }
    setHeld(table, key, row);
    if (!table.complete) table.dirty.add(key);
  }

  addDelete(table: HeldTable, filter: { column: string; values: Set<string> }): void {
    const journal = this.#journal;
    if (journal && !journal.deletes.has(table)) journal.deletes.set(table, table.deletes.length);
    table.deletes.push(filter);
  }
}

/** A rebuild's tables held in memory from its empty scratch schema until `flush` (see `HeldTables`). */
export function holdTablesForRebuild(names: Iterable<string>): HeldTables {
  return new HeldTables(names, { complete: true });
}

/** The buffer `name` of the tables held in memory around the caller (see `HeldTables.buffer`), or null. */
export function heldBuffer<B extends HeldBuffer>(name: string, make: () => B): B | null {
  return inMemory.getStore()?.buffer(name, make) ?? null;
}

function heldInMemory(spec: TableSpec): { held: HeldTables; table: HeldTable } | null {
  const held = inMemory.getStore();
  const table = held?.table(spec);
  return held && table ? { held, table } : null;
}

/** Sets or forgets a held row, keeping the column indexes in step. */
function setHeld(table: HeldTable, key: string, row: Row | null | undefined): void {
  const before = table.rows.get(key);
  if (table.indexes.size > 0) {
    for (const [column, index] of table.indexes) {
      if (before) index.get(String(before[column]))?.delete(key);
      if (row) {
        const value = String(row[column]);
        let keys = index.get(value);
        if (!keys) index.set(value, (keys = new Set()));
        keys.add(key);
      }
    }
  }
  if (row === undefined) table.rows.delete(key);
  else table.rows.set(key, row);
}

/** The keys of the held rows whose `column` is one of `values` (through an index built on first use). */
function heldKeys(table: HeldTable, column: string, values: Iterable<string>): string[] {
  const { spec } = table;
  // Held rows keep times as milliseconds and JSON as objects: matching them against values given as a caller gives them
  // would be wrong, so such a column is refused rather than matched loosely (no projection selects by one).
  const type = spec.columns[column]!.type;
  if (type === 'timestamptz' || type === 'json' || type === 'jsonb') throw new Error(`${spec.name}: rows held in memory cannot be selected by ${type} column ${column}`);
  if (spec.primaryKey.length === 1 && spec.primaryKey[0] === column) return [...new Set(values)].filter((key) => table.rows.get(key));
  let index = table.indexes.get(column);
  if (!index) {
    table.indexes.set(column, (index = new Map()));
    for (const [key, row] of table.rows) {
      if (!row) continue;
      const value = String(row[column]);
      let keys = index.get(value);
      if (!keys) index.set(value, (keys = new Set()));
      keys.add(key);
    }
  }
  const keys: string[] = [];
  for (const value of values) for (const key of index.get(value) ?? []) keys.push(key);
  return keys;
}

/** The columns of a table and their types, in order (computed once per table). */
const columnLists = new WeakMap<TableSpec, { columns: string[]; types: ColumnType[] }>();
function columnList(spec: TableSpec): { columns: string[]; types: ColumnType[] } {
  let list = columnLists.get(spec);
  if (!list) {
    const columns = Object.keys(spec.columns);
    columnLists.set(spec, (list = { columns, types: columns.map((column) => spec.columns[column]!.type) }));
  }
  return list;
}

/** Epoch milliseconds of a time as a projection or the database gives it; an invalid time is refused as the database refuses it. */
function epochMs(value: unknown): number {
  const ms = value instanceof Date ? value.getTime() : typeof value === 'number' ? value : Date.parse(String(value));
  if (!Number.isFinite(ms) || Math.abs(ms) > 8.64e15) throw new RangeError(`Invalid time value: ${String(value)}`);
  return ms;
}

export { jsonCopy } from './json-copy.js';

/**
 * A row as held in memory: timestamps as epoch milliseconds, JSON columns as copies owned by memory (`jsonCopy`: a
 * caller's later change to what it wrote does not reach them, every load hands out a copy of its own, and a rollback
 * restores what was written), the rest as given.
 */
function heldRow(spec: TableSpec, row: Row): Row {
  const { columns, types } = columnList(spec);
  const held: Row = {};
  for (let i = 0; i < columns.length; i += 1) {
    const value = row[columns[i]!];
    const type = types[i]!;
    held[columns[i]!] =
      value === null || value === undefined ? null : type === 'timestamptz' ? epochMs(value) : type === 'json' || type === 'jsonb' ? jsonCopy(value) : value;
  }
  return held;
}

/** A held row as a load from the database would give it back (timestamps as Dates, bigints as numbers, JSON parsed). */
function asLoaded(spec: TableSpec, held: Row): Row {
  const { columns, types } = columnList(spec);
  const row: Row = {};
  for (let i = 0; i < columns.length; i += 1) {
    const value = held[columns[i]!];
    const type = types[i]!;
    row[columns[i]!] =
      value === null || value === undefined
        ? null
        : type === 'timestamptz'
          ? new Date(value as number)
          : type === 'bigint'
            ? Number(value)
            : type === 'json' || type === 'jsonb'
              ? jsonCopy(value)
              : value;
  }
  return row;
}

/** A held row as `writeRecords` takes it (timestamps as ISO text; JSON columns as JSON text). */
function heldToRecord(spec: TableSpec, held: Row): Row {
  const { columns, types } = columnList(spec);
  const record: Row = {};
  for (let i = 0; i < columns.length; i += 1) {
    const value = held[columns[i]!];
    const type = types[i]!;
    record[columns[i]!] =
      value === null || value === undefined ? value : type === 'timestamptz' ? new Date(value as number).toISOString() : type === 'json' || type === 'jsonb' ? JSON.stringify(value) : value;
  }
  return record;
}

/** The primary-key columns of a held key. */
function keyRecord(spec: TableSpec, key: string): Row {
  if (spec.primaryKey.length === 1) return { [spec.primaryKey[0]!]: key };
  const parts = JSON.parse(key) as string[];
  return Object.fromEntries(spec.primaryKey.map((column, i) => [column, parts[i]]));
}

/** Deletes rows by primary key, one statement. */
async function deleteByKey(db: Db, spec: TableSpec, keys: readonly Row[]): Promise<void> {
  if (keys.length === 0) return;
  const definitions = sql.join(spec.primaryKey.map((key) => sql`${sql.id(key)} ${sql.raw(spec.columns[key]!.type)}`));
  const columns = sql.join(spec.primaryKey.map((key) => sql.ref(key)));
  const values = sql.join(spec.primaryKey.map((key) => sql.ref(`r.${key}`)));
  await db
    .deleteFrom(spec.name)
    .where(sql<boolean>`(${columns}) IN (SELECT ${values} FROM json_to_recordset(${JSON.stringify(keys)}::json) AS r(${definitions}))`)
    .execute();
}

function keyOf(spec: TableSpec, row: Row): string {
  return spec.primaryKey.length === 1 ? String(row[spec.primaryKey[0]!]) : JSON.stringify(spec.primaryKey.map((key) => String(row[key])));
}

/** Every row whose `column` is one of `values`. */
export async function loadRows(db: Db, spec: TableSpec, column: string, values: readonly unknown[]): Promise<Row[]> {
  if (values.length === 0) return [];
  if (!(column in spec.columns)) throw new Error(`${spec.name} has no column ${column}`);
  const memory = heldInMemory(spec);
  if (memory) return loadHeld(db, spec, memory.table, column, values);
  return loadStored(db, spec, column, values);
}

/**
 * A load of a table held in memory: its rows in memory, and (unless the database holds none of the table) the stored
 * rows memory neither holds nor deleted, which memory keeps from then on.
 */
async function loadHeld(db: Db, spec: TableSpec, table: HeldTable, column: string, values: readonly unknown[]): Promise<Row[]> {
  const wanted = new Set(values.map(String));
  const found: Row[] = heldKeys(table, column, wanted).map((key) => asLoaded(spec, table.rows.get(key)!));
  if (table.complete) return found;
  const byKey = spec.primaryKey.length === 1 && spec.primaryKey[0] === column;
  const missing = byKey ? values.filter((value) => !table.rows.has(String(value))) : (values as unknown[]);
  if (missing.length === 0) return found;
  for (const row of await loadStored(db, spec, column, missing)) {
    const key = keyOf(spec, row);
    if (table.rows.has(key) || table.deletes.some((filter) => filter.values.has(String(row[filter.column])))) continue;
    setHeld(table, key, heldRow(spec, row));
    found.push(row);
  }
  return found;
}

async function loadStored(db: Db, spec: TableSpec, column: string, values: readonly unknown[]): Promise<Row[]> {
  return (await db
    .selectFrom(spec.name)
    .selectAll()
    .where(sql<boolean>`${sql.ref(column)} = any(${[...values]})`)
    .execute()) as Row[];
}

/** Deletes every row whose `column` is one of `values`. */
export async function deleteRows(db: Db, spec: TableSpec, column: string, values: readonly unknown[]): Promise<void> {
  if (values.length === 0) return;
  if (!(column in spec.columns)) throw new Error(`${spec.name} has no column ${column}`);
  const memory = heldInMemory(spec);
  if (memory) {
    const { held, table } = memory;
    const doomed = new Set(values.map(String));
    for (const key of heldKeys(table, column, doomed)) held.write(table, key, table.complete ? undefined : null);
    if (!table.complete) held.addDelete(table, { column, values: doomed });
    return;
  }
  await db.deleteFrom(spec.name).where(sql<boolean>`${sql.ref(column)} = any(${[...values]})`).execute();
}

/** Milliseconds, or null, from a timestamptz column value. */
export function toMillis(value: unknown): number | null {
  if (value === null || value === undefined) return null;
  return value instanceof Date ? value.getTime() : Date.parse(String(value));
}

/** The node id of a `node-<id>` stream, or null for any other stream. */
export function nodeIdOfStream(stream: string): string | null {
  return stream.startsWith('node-') ? stream.slice('node-'.length) : null;
}
