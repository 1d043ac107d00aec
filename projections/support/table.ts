/**
 * A read-model table described once: its columns and key. The same description creates the table and
 * writes batches into it with one statement per batch (`INSERT ... SELECT FROM json_to_recordset(...) ON
 * CONFLICT DO UPDATE`: one parameter whatever the number of rows), which is what keeps a rebuild fast.
 * Every statement goes through kysely builders, so the schema the runner binds (`withSchema`) applies.
 */
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
  const definitions = sql.join(
    columns.map((column, i) => sql`${sql.id(column)} ${sql.raw(types[i]!)}`),
    sql`, `,
  );
  const others = columns.filter((column) => !spec.primaryKey.includes(column));
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

/** Every row whose `column` is one of `values`. */
export async function loadRows(db: Db, spec: TableSpec, column: string, values: readonly unknown[]): Promise<Row[]> {
  if (values.length === 0) return [];
  return (await db
    .selectFrom(spec.name)
    .selectAll()
    .where(sql<boolean>`${sql.ref(column)} = any(${[...values]})`)
    .execute()) as Row[];
}

export async function deleteRows(db: Db, spec: TableSpec, column: string, values: readonly unknown[]): Promise<void> {
  if (values.length === 0) return;
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
