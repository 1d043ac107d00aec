/**
 * Row versions of a read-model table, in the style of SQL:2011 system-versioned tables: beside a table whose spec names
 * `versioned` columns, `<table>_versions` keeps one row per change of those columns, with the log positions
 * (`valid_from` included, `valid_to` excluded; null while current) and the recording instants (`valid_from_at`,
 * `valid_to_at`) between which it was the row's state. A row whose versioned columns did not change makes no version,
 * however often its other (volatile) columns do.
 *
 * Guarantees:
 * - Per event, not per batch: a projection folds a batch in memory and writes each row once, but reports every key whose
 *   versioned columns an event changed (`VersionRecorder.observe`), so a row that changes twice in one batch has two
 *   versions with the positions of the two events. A key observed twice at one position keeps the last; a change undone
 *   within one event makes no version (a version valid for zero positions does not exist).
 * - Same transaction: live, a batch's versions are written by one statement per table (the open versions they follow
 *   are closed by the same statement) in the projection's transaction, with its rows and its checkpoint; a crash leaves
 *   all of a batch or none of it.
 * - A rebuild accumulates versions in memory (`HeldBuffer`, beside the rows it holds) and writes them with plain
 *   set-based inserts, 10,000 rows a statement, at its flushes: a version goes out once it is closed, the current ones
 *   at the last flush, so nothing is ever updated during a rebuild.
 * - The version valid at position P of a key is exactly its row after folding the log from position 1 to P
 *   (`test/replay/versioned-as-of.test.ts` holds that for random logs).
 */
import { sql, type Kysely, type RawBuilder } from 'kysely';
import type { RecordedEvent } from '../../events/index.js';
import { canonicalJson, type DynamicDatabase } from '../../src/ledger/index.js';
import { createTable, heldBuffer, type ColumnSpec, type ColumnType, type Db, type HeldBuffer, type Row, type TableSpec } from './table.js';

/** A table spec that keeps history. */
export type VersionedTableSpec = TableSpec & { versioned: readonly string[] };

/** A version's validity: positions (from included, to excluded; null while current) and their recording instants. */
export interface Validity {
  valid_from: number;
  valid_to: number | null;
  valid_from_at: Date;
  valid_to_at: Date | null;
}

/** The name of the table that holds `spec`'s row versions. */
export function versionsTableName(spec: TableSpec): string {
  return `${spec.name}_versions`;
}

const validity = {
  valid_from: { type: 'bigint' },
  valid_to: { type: 'bigint', nullable: true },
  valid_from_at: { type: 'timestamptz' },
  valid_to_at: { type: 'timestamptz', nullable: true },
} as const satisfies Record<string, ColumnSpec>;

/** The columns a version carries: the key, then the versioned columns. */
export function versionColumns(spec: VersionedTableSpec): string[] {
  return [...spec.primaryKey, ...spec.versioned.filter((column) => !spec.primaryKey.includes(column))];
}

/** The spec of `<table>_versions`: key and versioned columns, then the validity; keyed by (key, valid_from). */
export function versionsTableSpec(spec: VersionedTableSpec): TableSpec {
  const columns: Record<string, ColumnSpec> = {};
  for (const column of versionColumns(spec)) columns[column] = spec.columns[column]!;
  return { name: versionsTableName(spec), primaryKey: [...spec.primaryKey, 'valid_from'], columns: { ...columns, ...validity } };
}

/**
 * Creates `<table>_versions` in the schema `db` is bound to, with the index that makes "the versions whose validity
 * contains P" one indexed read (GiST over the position range; an open range while current) and the one that finds a
 * key's current version when the next one closes it.
 */
export async function createVersionsTable(db: Kysely<DynamicDatabase>, spec: VersionedTableSpec): Promise<void> {
  const versions = versionsTableSpec(spec);
  await createTable(db, versions);
  const name = versions.name;
  await db.schema
    .createIndex(`${name}_validity_idx`)
    .ifNotExists()
    .on(name)
    .using('gist')
    .expression(sql`int8range(valid_from, valid_to)`)
    .execute();
  await db.schema
    .createIndex(`${name}_current_idx`)
    .ifNotExists()
    .on(name)
    .columns([...spec.primaryKey])
    .where(sql.ref('valid_to'), 'is', null)
    .execute();
}

/** One version as recorded: from which position (and instant) the key's versioned columns held `values` (null: no row). */
export interface VersionRecord {
  key: string;
  from: number;
  fromAt: number;
  /** The version's columns (`versionColumns`): times as epoch milliseconds, JSON as its text. Null: the row is gone. */
  values: unknown[] | null;
  /** What the key held before this record (for undoing a second observation at the same position). */
  before: unknown[] | null | undefined;
}

/** The columns of a version and their types (computed once per spec), and which of them hold JSON. */
interface Layout {
  columns: string[];
  types: ColumnType[];
  /** Indexes of the columns compared with `===` (all but the JSON ones), then of the JSON ones. */
  plain: number[];
  json: number[];
}
const layouts = new WeakMap<VersionedTableSpec, Layout>();
function layoutOf(spec: VersionedTableSpec): Layout {
  let layout = layouts.get(spec);
  if (!layout) {
    const columns = versionColumns(spec);
    const types = columns.map((column) => spec.columns[column]!.type);
    const isJson = (type: ColumnType): boolean => type === 'json' || type === 'jsonb';
    const indexes = types.map((_, i) => i);
    layouts.set(spec, (layout = { columns, types, plain: indexes.filter((i) => !isJson(types[i]!)), json: indexes.filter((i) => isJson(types[i]!)) }));
  }
  return layout;
}

/** The key of a row, as the table layer spells it. */
export function versionKeyOf(spec: TableSpec, row: Row): string {
  return spec.primaryKey.length === 1 ? String(row[spec.primaryKey[0]!]) : JSON.stringify(spec.primaryKey.map((key) => String(row[key])));
}

function stored(type: ColumnType, value: unknown): unknown {
  if (value === null || value === undefined) return null;
  switch (type) {
    case 'timestamptz':
      return value instanceof Date ? value.getTime() : typeof value === 'number' ? value : Date.parse(String(value));
    case 'bigint':
      return Number(value);
    case 'json':
    case 'jsonb':
      // Kept as the value: compared (canonically) only when every other column is equal, written as text.
    case 'text':
    case 'integer':
    case 'boolean':
    case 'double precision':
      return value;
    default: {
      const unknown: never = type;
      throw new Error(`unknown column type ${String(unknown)}`);
    }
  }
}

/** A row's version values: its key and versioned columns, as stored. */
export function versionValues(spec: VersionedTableSpec, row: Row): unknown[] {
  const { columns, types } = layoutOf(spec);
  const values = new Array<unknown>(columns.length);
  for (let i = 0; i < columns.length; i += 1) values[i] = stored(types[i]!, row[columns[i]!]);
  return values;
}

/**
 * Whether two versions hold the same values: the plain columns with `===`, then, only if they all agree, the JSON ones
 * by their canonical text (keys sorted: a value read back from jsonb equals the one the projection built). Most changes
 * show in a plain column (a time, a state), so the JSON is rarely serialized.
 */
function sameValues(layout: Layout, a: readonly unknown[] | null | undefined, b: readonly unknown[] | null): boolean {
  if (a === undefined) return false;
  if (a === null || b === null) return a === b;
  for (const i of layout.plain) if (a[i] !== b[i]) return false;
  for (const i of layout.json) {
    if (a[i] === b[i]) continue;
    if (a[i] === null || b[i] === null || canonicalJson(a[i]) !== canonicalJson(b[i])) return false;
  }
  return true;
}

/**
 * The versions one apply of a projection makes for one table. Tell it what the stored rows of the keys the batch
 * touches hold (`known`), then, after each event, the row of every key the event touched (`observe`); it keeps a
 * version only where the versioned columns changed. `write` stores them with the batch.
 */
export class VersionRecorder {
  readonly spec: VersionedTableSpec;
  readonly #current = new Map<string, unknown[] | null>();
  /** Per key, its versions of this batch in position order (a key's next version closes the one before). */
  readonly #byKey = new Map<string, VersionRecord[]>();
  readonly #layout: Layout;

  constructor(spec: VersionedTableSpec) {
    this.spec = spec;
    this.#layout = layoutOf(spec);
  }

  /** The stored row of a key before the batch (its current version). A key never made known starts with no row. */
  known(row: Row): void {
    this.#current.set(versionKeyOf(this.spec, row), versionValues(this.spec, row));
  }

  /** `known` with the version values already made (`versionValues`). */
  knownValues(key: string, values: unknown[]): void {
    this.#current.set(key, values);
  }

  /** The row of a key after the event at `event.position` (null: deleted). */
  observe(row: Row, event: Pick<RecordedEvent, 'position' | 'recordedAt'>): void {
    this.observeValues(versionKeyOf(this.spec, row), versionValues(this.spec, row), event);
  }

  /** The key has no row after the event at `event.position`. */
  observeGone(key: string, event: Pick<RecordedEvent, 'position' | 'recordedAt'>): void {
    this.observeValues(key, null, event);
  }

  /**
   * `observeValues` for a projection that can tell cheaply that nothing versioned changed: `unchanged(current)` is asked
   * first (with the key's current version values, when it has any), and `values()` made only when it says no. The
   * liveness projection looks after every poll of every node, and most polls change nothing of a version.
   */
  observeUnlessUnchanged<T>(key: string, subject: T, unchanged: (subject: T, current: readonly unknown[]) => boolean, values: (subject: T) => unknown[], event: Pick<RecordedEvent, 'position' | 'recordedAt'>): void {
    // The current values are those of the key's last version (of this batch or stored): unchanged, there is nothing to note.
    const current = this.#current.get(key);
    if (current && unchanged(subject, current)) return;
    this.observeValues(key, values(subject), event);
  }

  /** `observe` with the version values already made (`versionValues`), for a projection that builds them itself. */
  observeValues(key: string, values: unknown[] | null, event: Pick<RecordedEvent, 'position' | 'recordedAt'>): void {
    let versions = this.#byKey.get(key);
    const last = versions?.[versions.length - 1];
    if (last !== undefined && last.from === event.position) {
      // A second look at the same position: the later one stands, and if it is what the key held before, no version.
      if (sameValues(this.#layout, this.#current.get(key), values)) return;
      versions!.pop();
      this.#current.set(key, last.before === undefined ? null : last.before);
    }
    const current = this.#current.has(key) ? this.#current.get(key)! : null;
    if (sameValues(this.#layout, current, values)) return;
    // What is stored is the JSON's text as of now: the values the projection holds may change after this event.
    const record: VersionRecord = { key, from: event.position, fromAt: event.recordedAt.getTime(), values: values && asText(this.#layout, values), before: current };
    if (!versions) this.#byKey.set(key, (versions = []));
    versions.push(record);
    this.#current.set(key, values);
  }

  /** The versions recorded, each key's in position order. */
  get records(): VersionRecord[] {
    const records: VersionRecord[] = [];
    for (const versions of this.#byKey.values()) for (const record of versions) records.push(record);
    return records;
  }

  /** Stores the versions with the batch (in a rebuild: into its memory, written at its flushes). */
  async write(db: Db): Promise<void> {
    await writeVersions(db, this.spec, this.records);
  }
}

/** The values with their JSON columns as text (a copy, when there are any). */
function asText(layout: Layout, values: unknown[]): unknown[] {
  if (layout.json.length === 0) return values;
  const copy = values.slice();
  for (const i of layout.json) if (copy[i] !== null) copy[i] = JSON.stringify(copy[i]);
  return copy;
}

/** Stores versions: into a rebuild's memory when it holds the versions table, else one statement per 10,000. */
export async function writeVersions(db: Db, spec: VersionedTableSpec, records: readonly VersionRecord[]): Promise<void> {
  if (records.length === 0) return;
  const held = heldBuffer(versionsTableName(spec), () => new HeldVersions(spec));
  if (held) {
    held.add(records);
    return;
  }
  const rows = chain(spec, records);
  for (let i = 0; i < rows.length; i += 10_000) await writeChained(db, spec, rows.slice(i, i + 10_000), { closeOpen: true });
}

/** A version ready to store: its validity known as far as the records tell (`to` null: current). */
interface ChainedVersion {
  record: VersionRecord;
  to: number | null;
  toAt: number | null;
  /** The first record of its key in this write: it closes the key's stored current version. */
  closes: boolean;
}

/** Each record with the validity the next record of its key gives it (records of one key are in position order). */
function chain(spec: VersionedTableSpec, records: readonly VersionRecord[]): ChainedVersion[] {
  void spec;
  const chained: ChainedVersion[] = [];
  const lastOf = new Map<string, ChainedVersion>();
  for (const record of records) {
    const previous = lastOf.get(record.key);
    if (previous) {
      previous.to = record.from;
      previous.toAt = record.fromAt;
    }
    const version: ChainedVersion = { record, to: null, toAt: null, closes: previous === undefined };
    lastOf.set(record.key, version);
    chained.push(version);
  }
  return chained;
}

/** The table as `db` names it (with the schema it is bound to), for the statements kysely's builders cannot say. */
function qualified(db: Db, table: string): RawBuilder<unknown> {
  const compiled = db.selectFrom(table).selectAll().compile().sql;
  return sql.raw(compiled.slice(compiled.indexOf(' from ') + ' from '.length));
}

/**
 * Writes versions in one statement: the stored current versions of the keys whose first record this is are closed at
 * that record's position (`closeOpen`), and every record that is not a deletion is inserted with its validity.
 */
async function writeChained(db: Db, spec: VersionedTableSpec, versions: readonly ChainedVersion[], options: { closeOpen: boolean }): Promise<void> {
  const { columns, types } = layoutOf(spec);
  const table = qualified(db, versionsTableName(spec));
  // Times travel as epoch milliseconds and become timestamptz in the statement (exact: integer milliseconds), which
  // spares formatting two to eight ISO strings per version here.
  const records = versions.map(({ record, to, toAt, closes }) => {
    const out: Record<string, unknown> = {};
    const values = record.values;
    if (values) {
      for (let i = 0; i < columns.length; i += 1) out[columns[i]!] = values[i];
    } else {
      const key = keyColumns(spec, record.key);
      for (const column of spec.primaryKey) out[column] = key[column];
    }
    out.valid_from = record.from;
    out.valid_from_at = record.fromAt;
    out.valid_to = to;
    out.valid_to_at = toAt;
    out.opens = values !== null;
    out.closes = closes;
    return out;
  });
  const carried = (type: ColumnType): string => (type === 'json' || type === 'jsonb' ? 'text' : type === 'timestamptz' ? 'bigint' : type);
  const definitions = sql.join([
    ...columns.map((column, i) => sql`${sql.id(column)} ${sql.raw(carried(types[i]!))}`),
    sql`valid_from bigint, valid_from_at bigint, valid_to bigint, valid_to_at bigint, opens boolean, closes boolean`,
  ]);
  const instant = (ref: string) => sql`'epoch'::timestamptz + ${sql.ref(ref)} * interval '1 millisecond'`;
  const selected = sql.join([
    ...columns.map((column, i) => {
      const type = types[i]!;
      if (type === 'json' || type === 'jsonb') return sql`${sql.ref(`r.${column}`)}::${sql.raw(type)}`;
      return type === 'timestamptz' ? instant(`r.${column}`) : sql.ref(`r.${column}`);
    }),
    sql`r.valid_from, r.valid_to, ${instant('r.valid_from_at')}, ${instant('r.valid_to_at')}`,
  ]);
  const names = sql.join([...columns.map((column) => sql.id(column)), sql`valid_from, valid_to, valid_from_at, valid_to_at`]);
  const json = JSON.stringify(records);
  if (!options.closeOpen) {
    await sql`INSERT INTO ${table} (${names}) SELECT ${selected} FROM json_to_recordset(${json}::json) AS r(${definitions}) WHERE r.opens`.execute(db);
    return;
  }
  const sameKey = sql.join(spec.primaryKey.map((key) => sql`v.${sql.id(key)} = r.${sql.id(key)}`), sql` AND `);
  // The UPDATE and the INSERT see the same snapshot: the versions inserted here are never the ones closed.
  await sql`
    WITH r AS MATERIALIZED (SELECT * FROM json_to_recordset(${json}::json) AS r(${definitions})),
    closed AS (
      UPDATE ${table} v SET valid_to = r.valid_from, valid_to_at = ${instant('r.valid_from_at')}
        FROM r WHERE r.closes AND v.valid_to IS NULL AND ${sameKey}
      RETURNING 1
    )
    INSERT INTO ${table} (${names}) SELECT ${selected} FROM r WHERE r.opens`.execute(db);
}

function keyColumns(spec: TableSpec, key: string): Row {
  if (spec.primaryKey.length === 1) return { [spec.primaryKey[0]!]: key };
  const parts = JSON.parse(key) as string[];
  return Object.fromEntries(spec.primaryKey.map((column, i) => [column, parts[i]]));
}

/**
 * A rebuild's versions of one table, in memory: the closed ones wait for the next flush, the current one of each key
 * stays until a later version closes it or the last flush writes it. Every write is a plain insert (the rebuild's
 * scratch table holds no version that could still be open).
 */
class HeldVersions implements HeldBuffer {
  readonly #spec: VersionedTableSpec;
  #closed: ChainedVersion[] = [];
  readonly #open = new Map<string, ChainedVersion>();
  #undo: Array<() => void> | null = null;

  constructor(spec: VersionedTableSpec) {
    this.#spec = spec;
  }

  get size(): number {
    return this.#closed.length;
  }

  add(records: readonly VersionRecord[]): void {
    for (const record of records) {
      const previous = this.#open.get(record.key);
      if (previous) {
        previous.to = record.from;
        previous.toAt = record.fromAt;
        this.#closed.push(previous);
      }
      const version: ChainedVersion = { record, to: null, toAt: null, closes: false };
      if (record.values === null) this.#open.delete(record.key);
      else this.#open.set(record.key, version);
      this.#undo?.push(() => {
        if (previous) {
          previous.to = null;
          previous.toAt = null;
          this.#closed.pop();
          this.#open.set(record.key, previous);
        } else {
          this.#open.delete(record.key);
        }
      });
    }
  }

  begin(): void {
    this.#undo = [];
  }

  commit(): void {
    this.#undo = null;
  }

  rollback(): void {
    const undo = this.#undo ?? [];
    this.#undo = null;
    for (let i = undo.length - 1; i >= 0; i -= 1) undo[i]!();
  }

  async flush(db: Db, options: { complete: boolean }): Promise<void> {
    const versions = options.complete ? [...this.#closed, ...this.#open.values()] : this.#closed;
    for (let i = 0; i < versions.length; i += 10_000) await writeChained(db, this.#spec, versions.slice(i, i + 10_000), { closeOpen: false });
    this.#closed = [];
    if (options.complete) this.#open.clear();
  }
}
