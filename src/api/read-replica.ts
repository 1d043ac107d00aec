/**
 * A PostgreSQL streaming replica that answers the analysts' read-model queries (`DATABASE_READ_URL`), and how far it
 * trails the primary.
 *
 * Guarantees:
 * - An answer read from a copy (the replica, or the primary when it stands in) runs in one REPEATABLE READ, READ ONLY
 *   transaction, and the position it states is read in that same snapshot: a projection's read-model writes and its
 *   checkpoint commit together on the primary, and a hot standby makes commits visible in the primary's order, so
 *   every event up to the stated position is in the answer (the smallest checkpoint of the projections the route
 *   reads; a projection may be further on, never behind).
 * - Nothing is written through it: the transactions are read only, and a standby refuses writes in any case.
 * - A caller who needs its own write (`minPosition`, the position an intent answered) is never answered from a
 *   replica that has not reached it: the primary answers instead, and says so.
 * - A replica that cannot answer (unreachable, restarting, a query cancelled by a recovery conflict) costs the caller
 *   nothing but latency: the primary answers, says so, and the reason goes to the log.
 *
 * The lag is stated three ways, each true of something different: milliseconds since the replica replayed the
 * primary's last commit (0 when it has replayed everything it received: an idle primary is no lag), log positions
 * between the primary's head and the replica's, and WAL bytes between the primary's write position and the
 * replica's replay position (the last two need the primary to answer, else they are null).
 */
import type { FastifyBaseLogger, FastifyReply } from 'fastify';
import { Kysely, PostgresDialect, sql } from 'kysely';
import pg from 'pg';
import { boundedConnection, redactConnectionString, type ConnectionBounds, type DynamicDatabase } from '../ledger/index.js';
import { ApiError } from './api-error.js';
import { within } from '../within.js';

/** Which copy answered, and what it reflects: the `readFrom` field of a read-model answer when a replica is configured. */
export interface ReadOrigin {
  source: 'replica' | 'primary';
  /** Every event up to this position of the log is reflected in the answer. */
  position: number;
  /** The log's head on the copy that answered (the read models may trail it by their own lag). */
  head: number;
  /** On the replica's answers: how far the replica trails the primary. */
  lag?: ReplicaLag;
  /** On the primary's answers: why the replica did not answer (`min-position`: it had not reached it). */
  reason?: 'min-position' | 'replica-unavailable';
}

export interface ReplicaLag {
  /** Since the replica replayed the primary's last commit; 0 when it has replayed all it received; null before any. */
  ms: number | null;
  /** The primary's head minus the replica's; null when the primary did not answer. */
  positions: number | null;
  /** WAL bytes between the primary's write position and the replica's replay position; null when the primary did not answer. */
  bytes: number | null;
}

/** The replica as `/readyz` and `/metrics` report it. */
export interface ReplicaStatus {
  /** Where reads go, without the password. */
  location: string;
  reachable: boolean;
  /** True on a standby; false means DATABASE_READ_URL points at a primary (it still answers, with no lag). */
  inRecovery: boolean | null;
  replayPaused: boolean | null;
  /** The log's head as replayed on the replica. */
  head: number | null;
  primaryHead: number | null;
  lag: ReplicaLag;
  /** The replica's error code when it did not answer (its text goes to the log: it can name hosts and roles). */
  error?: string;
}

/** What a copy shows in the snapshot an answer is read in. */
interface SnapshotPosition {
  position: number;
  head: number;
  replayLsn: string | null;
  lagMs: number | null;
}

/** The LSN `X/Y` as a number of bytes (exact below 2^53, which is 8 PiB of WAL). */
export function lsnBytes(lsn: string): number {
  const [high, low] = lsn.split('/');
  return parseInt(high!, 16) * 2 ** 32 + parseInt(low!, 16);
}

/**
 * Milliseconds since the last replayed commit, or 0 when everything received is replayed. Computed with
 * clock_timestamp(): inside a transaction now() is the transaction's start.
 */
const replayLagMs = sql<number | null>`CASE
  WHEN NOT pg_is_in_recovery() THEN 0
  WHEN pg_last_wal_receive_lsn() IS NOT DISTINCT FROM pg_last_wal_replay_lsn() THEN 0
  ELSE greatest(0, extract(epoch FROM clock_timestamp() - pg_last_xact_replay_timestamp()) * 1000)::float8 END`;

/** The smallest checkpoint of `projections` and the log's head, in the current snapshot of `db`. */
async function snapshotPosition(db: Kysely<DynamicDatabase>, projections: readonly string[]): Promise<SnapshotPosition> {
  const { rows } = await sql<{ position: number | null; head: number | null; replay_lsn: string | null; lag_ms: number | null }>`
    SELECT (SELECT min(position) FROM projection_checkpoints WHERE name = ANY(${[...projections]}::text[]))::bigint AS position,
           (SELECT position FROM ledger_head)::bigint AS head,
           CASE WHEN pg_is_in_recovery() THEN pg_last_wal_replay_lsn()::text END AS replay_lsn,
           ${replayLagMs} AS lag_ms`.execute(db);
  const row = rows[0]!;
  return { position: Number(row.position ?? 0), head: Number(row.head ?? 0), replayLsn: row.replay_lsn, lagMs: row.lag_ms === null ? null : Math.round(Number(row.lag_ms)) };
}

/** The primary's head and WAL write position. */
async function primaryPosition(db: Kysely<DynamicDatabase>): Promise<{ head: number; lsn: string }> {
  const { rows } = await sql<{ head: number; lsn: string }>`SELECT (SELECT position FROM ledger_head)::bigint AS head, pg_current_wal_lsn()::text AS lsn`.execute(db);
  return { head: Number(rows[0]!.head), lsn: rows[0]!.lsn };
}

/**
 * How long a replica answer waits for the primary's head: a primary that is slow or gone leaves the two lag figures
 * that need it null instead of holding the answer (connecting alone may take the connect timeout, 10 s).
 */
const primaryWaitMs = 500;


function lagAgainst(primary: { head: number; lsn: string } | null, replica: { head: number; replayLsn: string | null; lagMs: number | null }): ReplicaLag {
  return {
    ms: replica.lagMs,
    positions: primary ? Math.max(0, primary.head - replica.head) : null,
    bytes: primary && replica.replayLsn ? Math.max(0, lsnBytes(primary.lsn) - lsnBytes(replica.replayLsn)) : primary ? 0 : null,
  };
}

function errorCode(error: unknown): string {
  const code = (error as { code?: unknown })?.code;
  return typeof code === 'string' ? code : 'no answer';
}

/** Marks a reply with where it was read and what it reflects (the headers; the body gets `readFrom`). */
function stateOrigin(reply: FastifyReply, origin: ReadOrigin): ReadOrigin {
  reply.header('fleet-ledger-read-from', origin.source);
  reply.header('fleet-ledger-position', String(origin.position));
  if (origin.lag) {
    reply.header('fleet-ledger-replica-head', String(origin.head));
    if (origin.lag.ms !== null) reply.header('fleet-ledger-replica-lag-ms', String(origin.lag.ms));
    if (origin.lag.positions !== null) reply.header('fleet-ledger-replica-lag-positions', String(origin.lag.positions));
    if (origin.lag.bytes !== null) reply.header('fleet-ledger-replica-lag-bytes', String(origin.lag.bytes));
  }
  if (origin.reason) reply.header('fleet-ledger-primary-reason', origin.reason);
  return origin;
}

export interface ReadReplicaOptions {
  /** Connections to the replica (default 8). */
  poolSize?: number;
  connectionBounds?: Partial<ConnectionBounds>;
}

/** The replica's own pool and Kysely instance, and the reads routed to it. */
export class ReadReplica {
  readonly db: Kysely<DynamicDatabase>;
  /** Where reads go, without the password. */
  readonly location: string;
  readonly #pool: pg.Pool;

  constructor(connectionString: string, options: ReadReplicaOptions = {}) {
    this.location = redactConnectionString(connectionString);
    this.#pool = new pg.Pool({ ...boundedConnection(connectionString, options.connectionBounds), max: options.poolSize ?? 8 });
    // An idle connection the replica drops (it restarted) must not take the process down; the next read reconnects.
    this.#pool.on('error', () => undefined);
    this.db = new Kysely<DynamicDatabase>({ dialect: new PostgresDialect({ pool: this.#pool }) });
  }

  /**
   * Answers `query` from the replica, or from `primary` when the replica has not reached `minPosition` or cannot
   * answer; marks `reply` with the origin and returns the answer with its `readFrom` field.
   */
  async answer<T extends object>(
    reply: FastifyReply,
    primary: Kysely<DynamicDatabase>,
    projections: readonly string[],
    minPosition: number | undefined,
    query: (db: Kysely<DynamicDatabase>) => Promise<T>,
    log?: FastifyBaseLogger,
  ): Promise<T & { readFrom: ReadOrigin }> {
    let reason: ReadOrigin['reason'] = 'min-position';
    try {
      // The primary's head is asked alongside, not before: the replica's answer does not wait for it, and a primary
      // that does not answer leaves only the two lag figures that need it empty.
      const primaryNow = within(primaryPosition(primary), primaryWaitMs);
      const read = await this.db
        .transaction()
        .setIsolationLevel('repeatable read')
        .setAccessMode('read only')
        .execute(async (trx) => {
          const seen = await snapshotPosition(trx, projections);
          if (minPosition !== undefined && seen.position < minPosition) return { behind: true as const };
          const origin = stateOrigin(reply, { source: 'replica', position: seen.position, head: seen.head, lag: lagAgainst(await primaryNow, seen) });
          return { behind: false as const, result: await query(trx), origin };
        });
      if (!read.behind) return { ...read.result, readFrom: read.origin };
    } catch (error) {
      // The caller's own refusals (404, 400) are answers, not failures of the replica.
      if (error instanceof ApiError) throw error;
      reason = 'replica-unavailable';
      log?.warn({ replica: this.location, code: errorCode(error), error: error instanceof Error ? error.message : String(error) }, 'a read from the replica failed: the primary answers');
    }
    return fromPrimary(reply, primary, projections, query, reason);
  }

  /** The replica's state and lag, for readiness and metrics. */
  async status(primary: Kysely<DynamicDatabase>): Promise<ReplicaStatus> {
    const primaryNow = within(primaryPosition(primary), primaryWaitMs);
    try {
      const { rows } = await sql<{ in_recovery: boolean; paused: boolean | null; head: number | null; replay_lsn: string | null; lag_ms: number | null }>`
        SELECT pg_is_in_recovery() AS in_recovery,
               CASE WHEN pg_is_in_recovery() THEN pg_is_wal_replay_paused() END AS paused,
               (SELECT position FROM ledger_head)::bigint AS head,
               CASE WHEN pg_is_in_recovery() THEN pg_last_wal_replay_lsn()::text END AS replay_lsn,
               ${replayLagMs} AS lag_ms`.execute(this.db);
      const row = rows[0]!;
      const head = Number(row.head ?? 0);
      const lagMs = row.lag_ms === null ? null : Math.round(Number(row.lag_ms));
      const primaryAt = await primaryNow;
      return {
        location: this.location,
        reachable: true,
        inRecovery: row.in_recovery,
        replayPaused: row.paused,
        head,
        primaryHead: primaryAt?.head ?? null,
        lag: lagAgainst(primaryAt, { head, replayLsn: row.replay_lsn, lagMs }),
      };
    } catch (error) {
      const primaryAt = await primaryNow;
      return { location: this.location, reachable: false, inRecovery: null, replayPaused: null, head: null, primaryHead: primaryAt?.head ?? null, lag: { ms: null, positions: null, bytes: null }, error: errorCode(error) };
    }
  }

  async close(): Promise<void> {
    await this.db.destroy();
  }
}

/** The primary answers in the same kind of snapshot, stating the position it reflects. */
async function fromPrimary<T extends object>(reply: FastifyReply, primary: Kysely<DynamicDatabase>, projections: readonly string[], query: (db: Kysely<DynamicDatabase>) => Promise<T>, reason: NonNullable<ReadOrigin['reason']>): Promise<T & { readFrom: ReadOrigin }> {
  return primary
    .transaction()
    .setIsolationLevel('repeatable read')
    .setAccessMode('read only')
    .execute(async (trx) => {
      const seen = await snapshotPosition(trx, projections);
      const origin = stateOrigin(reply, { source: 'primary', position: seen.position, head: seen.head, reason });
      return { ...(await query(trx)), readFrom: origin };
    });
}
