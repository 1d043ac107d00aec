/**
 * Time travel: every versioned read model as of a log position or an instant.
 *
 * Design: versioned read models (SQL:2011 style). Each projection that time travel serves keeps, beside its
 * present-tense tables, one row version per change of the columns that matter, with the positions and instants
 * between which it was current (`projections/support/versions.ts`), written in the same transaction as the present
 * rows. A question as of position P reads the `as_of` views (one per versioned table, named as the table), which show
 * the versions whose validity contains P: one indexed read per table, no copy, no replay, and the present-tense query
 * functions run unchanged on them. The engine only sets P for the reading transaction (a setting local to it), in a
 * READ ONLY transaction whose search path holds the as-of views alone: nothing asked through time travel can write,
 * or read a live table by accident; a question that needs what history does not keep (a per-poll column, a read model
 * without versions) is refused (`ASOF_NOT_KEPT`), never answered from the present.
 *
 * An instant resolves to the last position recorded at or before it (the ledger clock never runs backwards along the
 * log) by a binary search over the primary key run inside PostgreSQL; every answer states the position and the
 * `recorded_at` it reflects. Rollouts are saga streams, folded up to the point (`rollouts-as-of.ts`).
 *
 * Why not the alternatives (measured, `docs/benchmarks.md`): periodic snapshots plus a replayed tail (what this
 * replaced) cost 3 to 12 times the log in copies and up to ~90,000 events replayed per question (p99 2.8 s at 2M
 * events); replaying from position 1 per question costs minutes.
 */
import { sql, Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import { asOfViewSchema, ensureAsOfViews, setAsOfPosition, versionedReadModels } from '../../projections/index.js';
import type { EventStore, DynamicDatabase } from '../../src/ledger/index.js';
import { AsOfError } from './as-of-error.js';
import { parsePoint, positionAtOrBefore, recordedAtOf, type AsOfPoint, type PointQuestion } from './as-of-point.js';
import { rolloutAsOf, rolloutsAsOf, stepAsOf } from './rollouts-as-of.js';
import { dropSnapshotRemnants } from './snapshot-remnants.js';

export interface AsOfOptions {
  /** Connections of the engine's own pool: questions never take the live ledger's (default 4). */
  connections?: number;
  /** The ledger clock, for refusing instants in the future (default: now). */
  clock?: () => Date;
  /** Problems worth an operator's attention. */
  log?: (message: string, fields?: Record<string, unknown>) => void;
}

/** PostgreSQL's codes for a relation or a column that does not exist: what the as-of views do not carry. */
const notKept = new Set(['42P01', '42703']);

/**
 * The as-of engine of one process: resolves points and answers questions from the versioned read models. Construct
 * it with the store; `start` once the projections have created their tables.
 */
export class AsOfEngine {
  readonly #store: EventStore;
  readonly #options: Required<AsOfOptions>;
  readonly #pool: pg.Pool;
  readonly #db: Kysely<DynamicDatabase>;
  #views: Promise<void> | null = null;
  #stopped = false;

  constructor(store: EventStore, options: AsOfOptions = {}) {
    this.#store = store;
    this.#options = { connections: options.connections ?? 4, clock: options.clock ?? (() => new Date()), log: options.log ?? (() => undefined) };
    if (!Number.isSafeInteger(this.#options.connections) || this.#options.connections < 1) {
      throw new RangeError(`as-of option connections must be a whole number, 1 or more, got ${this.#options.connections}`);
    }
    this.#pool = new pg.Pool({ connectionString: store.connectionString, max: this.#options.connections });
    // As the store's pool: a lost connection fails the statement in flight, never the process.
    this.#pool.on('error', () => undefined);
    this.#pool.on('connect', (client) => client.on('error', () => undefined));
    this.#db = new Kysely<DynamicDatabase>({ dialect: new PostgresDialect({ pool: this.#pool }) });
  }

  /** The projections this engine can answer about, by name (those that keep history). */
  get projectionNames(): string[] {
    return Object.keys(versionedReadModels);
  }

  /** Makes the as-of views, and drops what snapshot-based time travel left in the database. */
  async start(): Promise<void> {
    const dropped = await dropSnapshotRemnants(this.#db);
    if (dropped.length > 0) this.#options.log('dropped the read-model snapshots of snapshot-based time travel (versioned read models replace them)', { schemas: dropped.length });
    // The versions tables may not be there yet (a projection rebuilding after an upgrade): the first question makes the views then.
    await this.#ensureViews().catch((error: unknown) => this.#options.log('as-of views not made yet (made at the first question)', { error: String(error) }));
  }

  /** Closes the engine's connections once the questions in flight are answered. */
  async stop(): Promise<void> {
    if (this.#stopped) return;
    this.#stopped = true;
    await this.#db.destroy();
  }

  /** The as-of views, made once (again after a failure, or after they went with a table they read). */
  #ensureViews(): Promise<void> {
    this.#views ??= ensureAsOfViews(this.#db).catch((error: unknown) => {
      this.#views = null;
      throw error;
    });
    return this.#views;
  }

  /** An asOf value (`1234` or an RFC 3339 instant) as the point it stands for. */
  async resolve(asOf: string): Promise<AsOfPoint> {
    return this.resolvePoint(parsePoint(asOf));
  }

  /**
   * A position or an instant as the point it stands for. Refused (typed): a position past the head, an instant later
   * than the ledger clock, an instant before the first event, any point of an empty log.
   */
  async resolvePoint(question: PointQuestion): Promise<AsOfPoint> {
    const head = await this.#store.head();
    const value = 'position' in question ? String(question.position) : question.instant.toISOString();
    if ('position' in question) {
      if (!Number.isSafeInteger(question.position) || question.position < 1) {
        throw new AsOfError('ASOF_INVALID_POINT', { value, reason: 'a position is a whole number, 1 or more' }, `asOf position must be a whole number, 1 or more, got ${value}`);
      }
      if (question.position > head.position) {
        throw new AsOfError('ASOF_BEYOND_HEAD', { value, position: question.position, headPosition: head.position }, `position ${question.position} is beyond the head of the log (${head.position})`);
      }
      const recordedAt = (await recordedAtOf(this.#store.db.withTables<DynamicDatabase>(), question.position))!;
      return { position: question.position, recordedAt, instant: recordedAt };
    }
    const now = this.#options.clock();
    if (question.instant.getTime() > now.getTime()) {
      throw new AsOfError('ASOF_IN_FUTURE', { value, now: now.toISOString(), headPosition: head.position }, `${value} is in the future (the ledger clock reads ${now.toISOString()})`);
    }
    const db = this.#store.db.withTables<DynamicDatabase>();
    const position = await positionAtOrBefore(db, question.instant, head);
    if (position === 0) {
      const first = head.position === 0 ? null : await recordedAtOf(db, 1);
      throw new AsOfError(
        'ASOF_BEFORE_LOG',
        { value, firstRecordedAt: first?.toISOString() ?? null },
        first ? `${value} is before the first event of the log (recorded ${first.toISOString()})` : `the log is empty: nothing to show as of ${value}`,
      );
    }
    return { position, recordedAt: (await recordedAtOf(db, position))!, instant: question.instant };
  }

  /**
   * Runs `query` against the read models of `projections` as of `point`, in a READ ONLY transaction bound to the
   * as-of views (the query functions of `projections/` take it as their `db`). A question that reads a table or a
   * column the views do not carry is refused with `ASOF_NOT_KEPT`.
   */
  async read<T>(point: AsOfPoint, projections: readonly string[], query: (db: Kysely<DynamicDatabase>) => Promise<T>): Promise<T> {
    if (this.#stopped) throw new AsOfError('ASOF_STOPPED', {}, 'the as-of engine is stopped');
    const known = this.projectionNames;
    for (const name of projections) {
      if (!known.includes(name)) {
        throw new AsOfError('ASOF_NOT_KEPT', { projections: [...projections], reason: `the ${name} read model keeps no history` }, `the ${name} read model keeps no history: it cannot be asked as of a point`);
      }
    }
    await this.#ensureViews();
    const ask = (): Promise<T> =>
      this.#db
        .transaction()
        .setAccessMode('read only')
        .execute(async (trx) => {
          await setAsOfPosition(trx, point.position);
          // Only the as-of views are on the search path: raw SQL in a query function that names a table without a
          // schema reads the view, and one naming a table history does not keep fails instead of reading live data.
          await sql`SET LOCAL search_path TO ${sql.id(asOfViewSchema)}`.execute(trx);
          return query(trx.withSchema(asOfViewSchema));
        });
    try {
      return await ask();
    } catch (error) {
      const code = (error as { code?: unknown }).code;
      if (typeof code !== 'string' || !notKept.has(code)) throw error;
      // A view may have gone with the table it reads (a rebuild's swap that could not restore it): make them again once.
      this.#views = null;
      await this.#ensureViews();
      try {
        return await ask();
      } catch (again) {
        const code = (again as { code?: unknown }).code;
        if (typeof code !== 'string' || !notKept.has(code)) throw again;
        const reason = again instanceof Error ? again.message : String(again);
        throw new AsOfError('ASOF_NOT_KEPT', { projections: [...projections], reason }, `this question needs what history does not keep (${reason})`);
      }
    }
  }

  /** Rollouts planned by `point`, each folded up to it. */
  rollouts(point: AsOfPoint) {
    return rolloutsAsOf(this.#store, point.position);
  }

  /** One rollout as of `point` (null: not planned by then). */
  rollout(point: AsOfPoint, rolloutId: string) {
    return rolloutAsOf(this.#store, rolloutId, point.position);
  }

  /** One node's firmware step of a rollout as of `point`. */
  rolloutStep(point: AsOfPoint, rolloutId: string, nodeId: string) {
    return stepAsOf(this.#store, rolloutId, nodeId, point.position);
  }
}
