/**
 * A read-model table described once: its columns and key. The same description creates the table and
 * writes batches into it with one statement per batch (`INSERT ... SELECT FROM json_to_recordset(...) ON
 * CONFLICT DO UPDATE`: one parameter whatever the number of rows), which is what keeps a rebuild fast.
 * Every statement goes through kysely builders, so the schema the runner binds (`withSchema`) applies.
 *
 * Every projection reads and writes its tables only through `loadRows`, `upsertRows` and `deleteRows`. That is what
 * lets time travel answer without copying a snapshot (`replay/as-of/materialize.ts`): inside `withTableOverlay`, the
 * tables the apply writes start empty, a load reads the overlay's rows and, through them, a read-only base's (the
 * snapshot's), and the key of every row written or deleted is claimed, so the base's row is never seen again beside
 * the overlay's. Inside `withTablesInMemory`, the tables named (a projection's working state, which no query reads) are
 * neither read again nor written once a row of them is in memory: a tail applied for one question does not pay for
 * writing state nobody will read.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { sql, type Kysely, type Transaction } from 'kysely';

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
}

export type Row = Record<string, unknown>;

type Db = Kysely<any> | Transaction<any>;

export async function createTable(db: Kysely<any>, spec: TableSpec): Promise<void> {
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
  const columns = Object.keys(spec.columns);
  const types = columns.map((column) => spec.columns[column]!.type);
  const records = rows.map((row) => {
    const record: Record<string, unknown> = {};
    for (let i = 0; i < columns.length; i += 1) record[columns[i]!] = columnValue(types[i]!, row[columns[i]!]);
    return record;
  });
  const held = heldInMemory(spec);
  if (held) {
    for (const record of records) held.rows.set(keyOf(spec, record), asLoaded(spec, record));
    return;
  }
  const definitions = sql.join(
    columns.map((column, i) => sql`${sql.id(column)} ${sql.raw(types[i]!)}`),
    sql`, `,
  );
  const others = columns.filter((column) => !spec.primaryKey.includes(column));
  // Inside an overlay, the base's version of every row written here is superseded, whatever is done with it later.
  await claimWritten(db, spec, records);
  await db
    .insertInto(spec.name)
    .columns(columns)
    .expression(sql`SELECT ${sql.join(columns.map((column) => sql.ref(`r.${column}`)))} FROM json_to_recordset(${JSON.stringify(records)}::json) AS r(${definitions})`)
    .onConflict((oc) => {
      const target = oc.columns(spec.primaryKey as string[]);
      return others.length === 0
        ? target.doNothing()
        : target.doUpdateSet(Object.fromEntries(others.map((column) => [column, sql.ref(`excluded.${column}`)])));
    })
    .execute();
}

/**
 * Copy on write: where the overlay is, `schema.<table>` holds only the rows written so far and `base.<table>` the rest
 * (read only). `claimedTable(table)` in `schema` holds the primary key of every row the overlay wrote or deleted: the
 * base's row of such a key is superseded by the overlay's version, or was deleted there, and is never read again.
 */
export interface TableOverlay {
  schema: string;
  base: string;
  /** The tables that have a base (the others start empty and stay plain tables). */
  tables: ReadonlySet<string>;
}

/** An overlay at work, with the keys it claimed (the claimed tables' rows, kept here to spare statements). */
interface ActiveOverlay extends TableOverlay {
  claimed: Map<string, Set<string>>;
}

const overlays = new AsyncLocalStorage<ActiveOverlay>();

/** Runs `work` with the loads of `overlay.tables` reading through to `overlay.base`, and its writes and deletes claiming keys. */
export function withTableOverlay<T>(overlay: TableOverlay, work: () => Promise<T>): Promise<T> {
  return overlays.run({ ...overlay, claimed: new Map([...overlay.tables].map((table) => [table, new Set<string>()])) }, work);
}

/**
 * Tables held in memory: the latest version of every row written or read (null: deleted), and the filters of the
 * deletes (`column` = any of `values`) that the rows still in the database are subject to.
 */
interface HeldTable {
  rows: Map<string, Row | null>;
  deletes: Array<{ column: string; values: Set<string> }>;
}

const inMemory = new AsyncLocalStorage<{ names: ReadonlySet<string>; tables: Map<string, HeldTable> }>();

/**
 * Runs `work` with the tables named held in memory: a write goes to memory only, a load reads memory first and the
 * database (through any overlay) for what memory does not hold, a delete hides the matching rows of both. What was
 * held is dropped when `work` ends: only for a one-off apply whose result nobody reads from those tables (time travel's
 * tail, for a projection's `workingTables`). The rows held are the projection's own objects, not copies: an apply
 * either completes or the whole question fails.
 */
export function withTablesInMemory<T>(names: ReadonlySet<string>, work: () => Promise<T>): Promise<T> {
  return names.size === 0 ? work() : inMemory.run({ names, tables: new Map() }, work);
}

function heldInMemory(spec: TableSpec): HeldTable | null {
  const store = inMemory.getStore();
  if (!store?.names.has(spec.name)) return null;
  let table = store.tables.get(spec.name);
  if (!table) store.tables.set(spec.name, (table = { rows: new Map(), deletes: [] }));
  return table;
}

/** A row as a load from the database would give it back (timestamps as Dates, bigints as numbers). */
function asLoaded(spec: TableSpec, record: Record<string, unknown>): Row {
  const row: Row = {};
  for (const [column, { type }] of Object.entries(spec.columns)) {
    const value = record[column];
    row[column] = value === null || value === undefined ? null : type === 'timestamptz' ? new Date(value as string) : type === 'bigint' ? Number(value) : value;
  }
  return row;
}

/** The table of an overlay that lists the primary keys of the base rows it superseded (wrote or deleted). */
export function claimedTable(table: string): string {
  return `${table}__claimed`;
}

function keyOf(spec: TableSpec, row: Row): string {
  return spec.primaryKey.length === 1 ? String(row[spec.primaryKey[0]!]) : JSON.stringify(spec.primaryKey.map((key) => String(row[key])));
}

/** Claims the keys of rows written into the overlay that it had not claimed yet (rows written without a load). */
async function claimWritten(db: Db, spec: TableSpec, records: ReadonlyArray<Record<string, unknown>>): Promise<void> {
  const overlay = overlays.getStore();
  const claimed = overlay?.claimed.get(spec.name);
  if (!overlay || !claimed) return;
  const fresh = records.filter((record) => !claimed.has(keyOf(spec, record)));
  if (fresh.length === 0) return;
  const keys = sql.join(spec.primaryKey.map((key) => sql.id(key)));
  const definitions = sql.join(spec.primaryKey.map((key) => sql`${sql.id(key)} ${sql.raw(spec.columns[key]!.type)}`));
  const rows = fresh.map((record) => Object.fromEntries(spec.primaryKey.map((key) => [key, record[key]])));
  await sql`INSERT INTO ${sql.id(overlay.schema, claimedTable(spec.name))} (${keys})
    SELECT ${keys} FROM json_to_recordset(${JSON.stringify(rows)}::json) AS r(${definitions}) ON CONFLICT DO NOTHING`.execute(db);
  for (const record of fresh) claimed.add(keyOf(spec, record));
}

/** The overlay at work on `spec`'s table, if any. */
function overlayOf(spec: TableSpec): { overlay: ActiveOverlay; claimed: Set<string> } | null {
  const overlay = overlays.getStore();
  const claimed = overlay?.claimed.get(spec.name);
  if (!overlay || !claimed) return null;
  return { overlay, claimed };
}

/** `NOT EXISTS` a claim of base row `b`'s key. */
function unclaimedBy(overlay: ActiveOverlay, spec: TableSpec) {
  const claimedRef = sql.id(overlay.schema, claimedTable(spec.name));
  const same = sql.join(spec.primaryKey.map((key) => sql`c.${sql.id(key)} = b.${sql.id(key)}`), sql` AND `);
  return sql`NOT EXISTS (SELECT 1 FROM ${claimedRef} c WHERE ${same})`;
}

/**
 * Every row whose `column` is one of `values`. Inside an overlay: the overlay's rows and the base's rows whose key it
 * has not claimed, read through without copying them (a row only read stays the base's; one written is claimed then).
 */
export async function loadRows(db: Db, spec: TableSpec, column: string, values: readonly unknown[]): Promise<Row[]> {
  if (values.length === 0) return [];
  if (!(column in spec.columns)) throw new Error(`${spec.name} has no column ${column}`);
  const held = heldInMemory(spec);
  if (held) return loadHeld(db, spec, held, column, values);
  return loadStored(db, spec, column, values);
}

/** A load of a table held in memory: its rows in memory, and the stored rows memory neither holds nor deleted. */
async function loadHeld(db: Db, spec: TableSpec, held: HeldTable, column: string, values: readonly unknown[]): Promise<Row[]> {
  const wanted = new Set(values.map(String));
  const byKey = spec.primaryKey.length === 1 && spec.primaryKey[0] === column;
  const found: Row[] = [];
  let missing: unknown[] = values as unknown[];
  if (byKey) {
    missing = [];
    for (const value of values) {
      const row = held.rows.get(String(value));
      if (row === undefined) missing.push(value);
      else if (row !== null) found.push(row);
    }
  } else {
    for (const row of held.rows.values()) if (row !== null && wanted.has(String(row[column]))) found.push(row);
  }
  if (missing.length === 0) return found;
  for (const row of await loadStored(db, spec, column, missing)) {
    const key = keyOf(spec, row);
    if (held.rows.has(key) || held.deletes.some((filter) => filter.values.has(String(row[filter.column])))) continue;
    held.rows.set(key, row);
    found.push(row);
  }
  return found;
}

async function loadStored(db: Db, spec: TableSpec, column: string, values: readonly unknown[]): Promise<Row[]> {
  const active = overlayOf(spec);
  if (!active) {
    return (await db
      .selectFrom(spec.name)
      .selectAll()
      .where(sql<boolean>`${sql.ref(column)} = any(${[...values]})`)
      .execute()) as Row[];
  }
  const { overlay } = active;
  const columns = Object.keys(spec.columns);
  const rows = await sql<Row>`
    SELECT ${sql.join(columns.map((c) => sql.id(c)))} FROM ${sql.id(overlay.schema, spec.name)} WHERE ${sql.id(column)} = any(${[...values]})
    UNION ALL
    SELECT ${sql.join(columns.map((c) => sql`b.${sql.id(c)}`))} FROM ${sql.id(overlay.base, spec.name)} b
     WHERE b.${sql.id(column)} = any(${[...values]}) AND ${unclaimedBy(overlay, spec)}`.execute(db);
  return rows.rows;
}

/** Deletes every row whose `column` is one of `values`. Inside an overlay, the base's rows among them are claimed. */
export async function deleteRows(db: Db, spec: TableSpec, column: string, values: readonly unknown[]): Promise<void> {
  if (values.length === 0) return;
  if (!(column in spec.columns)) throw new Error(`${spec.name} has no column ${column}`);
  const held = heldInMemory(spec);
  if (held) {
    const doomed = new Set(values.map(String));
    for (const [key, row] of held.rows) if (row !== null && doomed.has(String(row[column]))) held.rows.set(key, null);
    held.deletes.push({ column, values: doomed });
    return;
  }
  const active = overlayOf(spec);
  if (active) {
    const { overlay, claimed } = active;
    const keys = sql.join(spec.primaryKey.map((key) => sql.id(key)));
    const claims = await sql<Row>`
      INSERT INTO ${sql.id(overlay.schema, claimedTable(spec.name))} (${keys})
      SELECT ${sql.join(spec.primaryKey.map((key) => sql`b.${sql.id(key)}`))} FROM ${sql.id(overlay.base, spec.name)} b
       WHERE b.${sql.id(column)} = any(${[...values]}) AND ${unclaimedBy(overlay, spec)}
      ON CONFLICT DO NOTHING RETURNING ${keys}`.execute(db);
    for (const row of claims.rows) claimed.add(keyOf(spec, row));
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
