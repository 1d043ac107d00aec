/**
 * The cluster of poller processes as the database sees it: the members (`cluster_members`), the poll leases
 * (`cluster_leases`) and the sagas' leases (`saga_leases`, with who holds each saga's lock now), read in one read-only
 * transaction so every row and every "alive" or "expires in" is judged against
 * the same database instant (`at`). Any process answers for the whole cluster; only `targets` (BMCs polled under a
 * shard) is known by the process that polls it, and appears only on the shards the answering process polls.
 */
import { sql, type Kysely } from 'kysely';
import { z } from 'zod';
import type { ClusterMembership } from '../cluster/index.js';
import type { PollerStatusSource } from '../poller/index.js';
import type { DynamicDatabase } from '../ledger/index.js';

/** A lease's state at `at`: held (owner renewing it), expired (owner stopped renewing), released (handed over), unheld (never leased). */
export const shardStates = ['held', 'expired', 'released', 'unheld'] as const;
export type ShardState = (typeof shardStates)[number];

/** Members that stopped heartbeating this long ago and hold no lease are left out of the answer. */
export const departedShownForS = 3600;

const instant = z.string().nullable();

export const clusterShardSchema = z.object({
  shard: z.string(),
  site: z.string(),
  owner: z.string().nullable(),
  epoch: z.number().int(),
  acquiredAt: instant,
  renewedAt: instant,
  expiresAt: instant,
  /** Seconds from `at` to `expiresAt` (negative once expired), by the database's clock. */
  expiresInS: z.number().nullable(),
  pollAfter: instant,
  released: z.boolean(),
  previousOwner: z.string().nullable(),
  handovers: z.number().int(),
  state: z.enum(shardStates),
  /** BMCs polled under this lease in the answering process (only on the shards it polls). */
  targets: z.number().int().optional(),
});

export const heldShardSchema = clusterShardSchema.pick({ shard: true, site: true, epoch: true, expiresAt: true, expiresInS: true, pollAfter: true, state: true, targets: true });

export const clusterProcessSchema = z.object({
  processId: z.string(),
  host: z.string(),
  pid: z.number().int(),
  apiUrl: z.string().nullable(),
  /** Shards or sites this process polls, and only these (`--shards`); null: any not pinned elsewhere. */
  pinned: z.array(z.string()).nullable(),
  startedAt: z.string(),
  heartbeatAt: z.string(),
  expiresAt: z.string(),
  expiresInS: z.number(),
  alive: z.boolean(),
  /** The leases this process owns and has not released: `held`, or `expired` when it stopped renewing them. */
  shards: z.array(heldShardSchema),
});

/** A rollout or provisioning saga: the epoch its appends are fenced with, who took it last, and whether a session drives it now. */
export const sagaLeaseSchema = z.object({
  saga: z.string(),
  epoch: z.number().int(),
  /** The process that raised this epoch (`host:pid`). */
  owner: z.string(),
  takenAt: z.string(),
  /** A database session holds the saga's lock now: some process drives it (a finished saga is released). */
  held: z.boolean(),
  /** That session's `application_name` (which process), when the database shows it. */
  heldBy: z.string().nullable(),
});

export const clusterStatusSchema = z.object({
  /** The database's clock when the answer was read. */
  at: z.string(),
  /** The process that answered (null: it takes no part in the cluster, e.g. started without a poller). */
  answeredBy: z.string().nullable(),
  processes: z.array(clusterProcessSchema),
  shards: z.array(clusterShardSchema),
  sagas: z.array(sagaLeaseSchema),
});

export type ClusterShard = z.infer<typeof clusterShardSchema>;
export type ClusterProcess = z.infer<typeof clusterProcessSchema>;
export type ClusterStatus = z.infer<typeof clusterStatusSchema>;
export type SagaLeaseView = z.infer<typeof sagaLeaseSchema>;

interface MemberRow {
  process_id: string;
  host: string;
  pid: number;
  api_url: string | null;
  pinned_shards: string[] | null;
  started_at: Date;
  heartbeat_at: Date;
  expires_at: Date;
  expires_in_s: number;
  alive: boolean;
}

interface LeaseRow {
  shard: string;
  site: string;
  owner: string | null;
  epoch: string;
  acquired_at: Date | null;
  renewed_at: Date | null;
  expires_at: Date | null;
  expires_in_s: number | null;
  poll_after: Date | null;
  released: boolean;
  previous_owner: string | null;
  handovers: string;
  state: ShardState;
}

const iso = (at: Date | null): string | null => (at === null ? null : new Date(at).toISOString());
const seconds = (value: number | null): number | null => (value === null ? null : Math.round(value * 1000) / 1000);

/** Reads the members and the leases (the tables of migration 0006) as of one database instant. */
export async function readClusterStatus(db: Kysely<DynamicDatabase>, here: { cluster?: ClusterMembership | null; poller?: PollerStatusSource | null } = {}): Promise<ClusterStatus> {
  const { at, members, leases, sagas } = await db
    .transaction()
    .setIsolationLevel('repeatable read')
    .setAccessMode('read only')
    .execute(async (trx) => {
      // now() is the transaction's start: one instant for every comparison below.
      const clock = await sql<{ at: Date }>`SELECT now() AS at`.execute(trx);
      const memberRows = await sql<MemberRow>`
        SELECT process_id, host, pid, api_url, pinned_shards, started_at, heartbeat_at, expires_at,
               extract(epoch FROM (expires_at - now()))::float8 AS expires_in_s, expires_at > now() AS alive
          FROM cluster_members m
         WHERE expires_at > now() - make_interval(secs => ${departedShownForS})
            OR EXISTS (SELECT 1 FROM cluster_leases l WHERE l.owner = m.process_id AND NOT l.released)
         ORDER BY process_id`.execute(trx);
      const leaseRows = await sql<LeaseRow>`
        SELECT shard, site, owner, epoch, acquired_at, renewed_at, expires_at, poll_after, released, previous_owner, handovers,
               extract(epoch FROM (expires_at - now()))::float8 AS expires_in_s,
               CASE WHEN owner IS NULL THEN 'unheld' WHEN released THEN 'released' WHEN expires_at > now() THEN 'held' ELSE 'expired' END AS state
          FROM cluster_leases ORDER BY shard`.execute(trx);
      // The lock is `pg_advisory_lock(hashtext(saga))` (sagas/engine/saga-ownership.ts): one bigint key, shown in
      // pg_locks as its high and low halves with objsubid 1.
      const sagaRows = await sql<{ saga: string; epoch: string; owner: string; taken_at: Date; held: boolean; held_by: string | null }>`
        SELECT s.saga, s.epoch, s.owner, s.taken_at, l.pid IS NOT NULL AS held, a.application_name AS held_by
          FROM saga_leases s
          LEFT JOIN LATERAL (
            SELECT pid FROM pg_locks
             WHERE locktype = 'advisory' AND objsubid = 1 AND granted
               AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
               AND ((classid::bigint << 32) | objid::bigint) = hashtext(s.saga)::bigint
             LIMIT 1) l ON true
          LEFT JOIN pg_stat_activity a ON a.pid = l.pid
         ORDER BY s.saga`.execute(trx);
      return { at: clock.rows[0]!.at, members: memberRows.rows, leases: leaseRows.rows, sagas: sagaRows.rows };
    });

  const answeredBy = here.cluster?.processId ?? null;
  // Targets are known only where the shard is polled: in this process, for the shards its poller has active.
  const polledHere = new Map<string, number>();
  if (answeredBy !== null) for (const active of here.poller?.activeShards() ?? []) polledHere.set(active.shard, active.targets);

  const shards: ClusterShard[] = leases.map((row) => {
    const targets = row.owner === answeredBy && row.state === 'held' ? polledHere.get(row.shard) : undefined;
    return {
      shard: row.shard,
      site: row.site,
      owner: row.owner,
      epoch: Number(row.epoch),
      acquiredAt: iso(row.acquired_at),
      renewedAt: iso(row.renewed_at),
      expiresAt: iso(row.expires_at),
      expiresInS: seconds(row.expires_in_s),
      pollAfter: iso(row.poll_after),
      released: row.released,
      previousOwner: row.previous_owner,
      handovers: Number(row.handovers),
      state: row.state,
      ...(targets !== undefined ? { targets } : {}),
    };
  });
  const processes: ClusterProcess[] = members.map((row) => ({
    processId: row.process_id,
    host: row.host,
    pid: row.pid,
    apiUrl: row.api_url,
    pinned: row.pinned_shards,
    startedAt: iso(row.started_at)!,
    heartbeatAt: iso(row.heartbeat_at)!,
    expiresAt: iso(row.expires_at)!,
    expiresInS: seconds(row.expires_in_s)!,
    alive: row.alive,
    shards: shards
      .filter((shard) => shard.owner === row.process_id && (shard.state === 'held' || shard.state === 'expired'))
      .map(({ shard, site, epoch, expiresAt, expiresInS, pollAfter, state, targets }) => ({ shard, site, epoch, expiresAt, expiresInS, pollAfter, state, ...(targets !== undefined ? { targets } : {}) })),
  }));
  const sagaLeases: SagaLeaseView[] = sagas.map((row) => ({
    saga: row.saga,
    epoch: Number(row.epoch),
    owner: row.owner,
    takenAt: iso(row.taken_at)!,
    held: row.held,
    heldBy: row.held_by || null,
  }));
  return { at: iso(at)!, answeredBy, processes, shards, sagas: sagaLeases };
}
