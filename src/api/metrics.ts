/**
 * Prometheus metrics of one API instance, in its own registry (several instances in one process do not
 * collide). Counters the store and the poller keep themselves are read at scrape time and exported as deltas.
 */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { sql } from 'kysely';
import { livenessStateCounts, openAlarmCountsByKind } from '../../projections/index.js';
import type { ApiContext } from './api-context.js';
import { readClusterStatus, shardStates, type ClusterStatus } from './cluster-status.js';

/** Per-shard cluster series exported at most (the first by shard name): shards are sites and hash ranges of sites. */
export const maxShardSeries = 256;
import type { ReplicaStatus } from './read-replica.js';

export interface ApiMetrics {
  registry: Registry;
  httpRequests: Counter<'method' | 'route' | 'status'>;
  httpDuration: Histogram<'method' | 'route'>;
  appendDuration: Histogram;
  /** Takes the samples the scrape's gauges read (the read replica's state); call before `registry.metrics()`. */
  refresh(): Promise<void>;
}

export function createMetrics(ctx: Omit<ApiContext, 'timeAppend'>, options: { processMetrics?: boolean } = {}): ApiMetrics {
  const registry = new Registry();
  if (options.processMetrics) collectDefaultMetrics({ register: registry, prefix: 'fleet_ledger_' });
  const registers = [registry];

  const httpRequests = new Counter({ name: 'fleet_ledger_http_requests_total', help: 'HTTP requests answered, by route and status', labelNames: ['method', 'route', 'status'] as const, registers });
  const httpDuration = new Histogram({ name: 'fleet_ledger_http_request_duration_seconds', help: 'HTTP request duration', labelNames: ['method', 'route'] as const, registers, buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5] });
  const appendDuration = new Histogram({ name: 'fleet_ledger_api_append_duration_seconds', help: 'Latency of appends made by the API (intents, EBOM, observations), until commit', registers, buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5] });

  // Counters owned by the store and the poller, mirrored at scrape time (each in its own collect, which
  // prom-client runs just before that metric is written).
  const appendsSeen = new Map<string, number>();
  const mirror = (counter: Counter<string>, seen: Map<string, number>, key: string, value: number, labels?: Record<string, string>) => {
    const delta = value - (seen.get(key) ?? 0);
    if (delta > 0) (labels ? counter.inc(labels, delta) : counter.inc(delta));
    seen.set(key, value);
  };
  new Counter({ name: 'fleet_ledger_appends_total', help: 'Append calls committed by this process (group commit members)', registers, collect() { mirror(this, appendsSeen, 'appends', ctx.store.stats.appends); } });
  new Counter({ name: 'fleet_ledger_events_appended_total', help: 'Events written by this process (idempotent replays excluded)', registers, collect() { mirror(this, appendsSeen, 'events', ctx.store.stats.events); } });
  new Counter({ name: 'fleet_ledger_group_commit_batches_total', help: 'Group-commit transactions committed by this process', registers, collect() { mirror(this, appendsSeen, 'batches', ctx.store.stats.batches); } });
  new Counter({ name: 'fleet_ledger_group_commit_one_round_trip_total', help: 'Group-commit transactions committed in one round trip (this process had written the head last)', registers, collect() { mirror(this, appendsSeen, 'oneRoundTrip', ctx.store.stats.oneRoundTripBatches); } });
  new Counter({ name: 'fleet_ledger_group_commit_guess_misses_total', help: 'One-round-trip attempts that found the log moved (nothing written; the batch then took two round trips)', registers, collect() { mirror(this, appendsSeen, 'misses', ctx.store.stats.speculationMisses); } });
  new Gauge({ name: 'fleet_ledger_group_commit_last_batch_appends', help: 'Append calls coalesced into the last group-commit transaction', registers, collect() { this.set(ctx.store.stats.lastBatchAppends); } });
  new Gauge({ name: 'fleet_ledger_group_commit_max_batch_appends', help: 'Most append calls coalesced into one group-commit transaction so far', registers, collect() { this.set(ctx.store.stats.maxBatchAppends); } });
  new Gauge({
    name: 'fleet_ledger_head_position',
    help: 'Global position of the last committed event',
    registers,
    async collect() {
      // While PostgreSQL is away the head is unknown (NaN), and the scrape still answers: every other figure, and
      // `fleet_ledger_store_up` 0, are what an operator needs most then.
      this.set(await ctx.store.head().then((head) => head.position, () => Number.NaN));
    },
  });
  new Gauge({
    name: 'fleet_ledger_store_up',
    help: '1 when the ledger\'s PostgreSQL answers this scrape; 0 while it is away (appends are refused as retryable, followers wait)',
    registers,
    async collect() {
      this.set(await ctx.store.head().then(() => 1, () => 0));
    },
  });

  // The transparency log: how far the Merkle tree trails the head, and the newest signed tree size.
  new Gauge({
    name: 'fleet_ledger_merkle_lag_positions',
    help: 'Events committed but not yet folded into the Merkle tree (the follower\'s lag); absent without the audit service',
    registers,
    collect() {
      if (ctx.audit) this.set(ctx.audit.follower.status.lagPositions);
    },
  });
  new Gauge({
    name: 'fleet_ledger_integrity_alarm',
    help: 'Critical: 1 while the log disagrees with its Merkle tree or a published checkpoint (signing stopped), by finding code; absent without the audit service',
    labelNames: ['code'] as const,
    registers,
    collect() {
      this.reset();
      const alarm = ctx.audit?.integrity.status.alarm;
      if (alarm) this.set({ code: alarm.code }, 1);
    },
  });
  new Gauge({
    name: 'fleet_ledger_checkpoint_tree_size',
    help: 'Tree size of the newest checkpoint this process signed',
    registers,
    collect() {
      if (ctx.audit) this.set(ctx.audit.checkpointer.status.lastSize);
    },
  });

  // Sagas, read from the log at scrape time (any instance can export them, whichever runs the engine).
  new Gauge({
    name: 'fleet_ledger_saga_slots_in_use',
    help: 'Disruption slots held now per site (capacity streams: acquired minus released)',
    labelNames: ['site'] as const,
    registers,
    async collect() {
      this.reset();
      const rows = await sql<{ stream: string; held: string }>`
        SELECT stream, sum(CASE WHEN type = 'SlotAcquired' THEN 1 WHEN type = 'SlotReleased' THEN -1 ELSE 0 END) AS held
          FROM ledger_events WHERE stream LIKE 'capacity-%' GROUP BY stream`.execute(ctx.db).catch(() => ({ rows: [] as Array<{ stream: string; held: string }> }));
      for (const row of rows.rows) this.set({ site: row.stream.slice('capacity-'.length) }, Number(row.held));
    },
  });
  new Gauge({
    name: 'fleet_ledger_rollout_nodes',
    help: 'Rollout nodes by state: outcomes recorded (updated, already-at-target, failed, quarantined, skipped), dispatched and in flight, and pending',
    labelNames: ['rollout', 'state'] as const,
    registers,
    async collect() {
      this.reset();
      const rows = await sql<{ rollout: string; state: string; n: string }>`
        SELECT stream AS rollout, coalesce(data->>'outcome', 'dispatched') AS state, count(*) AS n FROM ledger_events
         WHERE stream LIKE 'rollout-%' AND type IN ('NodeOutcomeRecorded', 'NodeDispatched') GROUP BY 1, 2`.execute(ctx.db).catch(() => ({ rows: [] as Array<{ rollout: string; state: string; n: string }> }));
      const dispatched = new Map<string, number>();
      for (const row of rows.rows) {
        const rollout = row.rollout.slice('rollout-'.length);
        if (row.state === 'dispatched') dispatched.set(rollout, (dispatched.get(rollout) ?? 0) + Number(row.n));
        else {
          this.set({ rollout, state: row.state }, Number(row.n));
          dispatched.set(rollout, (dispatched.get(rollout) ?? 0) - Number(row.n));
        }
      }
      for (const [rollout, n] of dispatched) this.set({ rollout, state: 'in-flight' }, Math.max(0, n));
    },
  });
  new Gauge({
    name: 'fleet_ledger_saga_holds',
    help: 'Node steps in a named hold now (deadline-exceeded: a state past its deadline; reconcile-required: outcome unknown)',
    labelNames: ['hold'] as const,
    registers,
    async collect() {
      this.reset();
      this.set({ hold: 'deadline-exceeded' }, 0);
      this.set({ hold: 'reconcile-required' }, 0);
      const rows = await sql<{ hold: string; n: string }>`
        SELECT e.data->>'hold' AS hold, count(*) AS n FROM ledger_streams s
          JOIN ledger_events e ON e.stream = s.stream AND e.stream_version = s.version
         WHERE s.stream LIKE 'fwstep-%' AND e.type = 'StepHeld' GROUP BY 1`.execute(ctx.db).catch(() => ({ rows: [] as Array<{ hold: string; n: string }> }));
      for (const row of rows.rows) this.set({ hold: row.hold }, Number(row.n));
    },
  });

  // Projection status reads the head: while PostgreSQL is away their series are absent from the scrape, which goes on.
  const projectionStatuses = async () => (await ctx.runner?.status().catch(() => null)) ?? [];
  new Gauge({
    name: 'fleet_ledger_projection_lag_positions',
    help: 'Events between the head and the projection checkpoint',
    labelNames: ['projection'] as const,
    registers,
    async collect() {
      this.reset();
      for (const status of await projectionStatuses()) this.set({ projection: status.name }, status.lagPositions);
    },
  });
  new Gauge({
    name: 'fleet_ledger_projection_lag_seconds',
    help: 'Recorded-time distance between the head and the last event the projection applied',
    labelNames: ['projection'] as const,
    registers,
    async collect() {
      this.reset();
      for (const status of await projectionStatuses()) this.set({ projection: status.name }, status.lagSeconds);
    },
  });
  new Gauge({
    name: 'fleet_ledger_projection_failed',
    help: '1 when the projection stopped on an event it could not apply',
    labelNames: ['projection'] as const,
    registers,
    async collect() {
      this.reset();
      for (const status of await projectionStatuses()) this.set({ projection: status.name }, status.state === 'failed' ? 1 : 0);
    },
  });

  new Gauge({
    name: 'fleet_ledger_projection_set_aside_events',
    help: 'Events the projection could not apply and set aside (projection_dead_letters) since its last rebuild',
    labelNames: ['projection'] as const,
    registers,
    async collect() {
      this.reset();
      for (const status of await projectionStatuses()) this.set({ projection: status.name }, status.setAside);
    },
  });

  const pollsSeen = new Map<string, number>();
  new Counter({
    name: 'fleet_ledger_polls_total',
    help: 'Poll outcomes recorded by the poller, by outcome',
    labelNames: ['outcome'] as const,
    registers,
    collect() {
      for (const [outcome, count] of Object.entries(ctx.poller?.stats().outcomes ?? {})) mirror(this, pollsSeen, outcome, count, { outcome });
    },
  });
  new Gauge({ name: 'fleet_ledger_poller_visits_in_flight', help: 'BMC visits in flight (each holds at most one session on its BMC)', registers, collect() { const s = ctx.poller?.stats(); if (s) this.set(s.visitsInFlight); } });
  new Gauge({ name: 'fleet_ledger_poller_targets', help: 'Nodes the poller schedules', registers, collect() { const s = ctx.poller?.stats(); if (s) this.set(s.targets); } });
  new Gauge({ name: 'fleet_ledger_poller_latched_targets', help: 'Targets whose logins are latched off after an authentication failure', registers, collect() { const s = ctx.poller?.stats(); if (s) this.set(s.latched); } });
  new Gauge({ name: 'fleet_ledger_poller_pending_outcomes', help: 'Poll outcomes waiting for the ledger (it was unreachable); bounded by the pending budget', registers, collect() { const s = ctx.poller?.stats(); if (s) this.set(s.pendingOutcomes); } });
  new Gauge({ name: 'fleet_ledger_poller_outcomes_dropped', help: 'Poll outcomes dropped because the ledger stayed unreachable past the pending budget', registers, collect() { const s = ctx.poller?.stats(); if (s) this.set(s.outcomesDropped); } });
  new Gauge({ name: 'fleet_ledger_poller_unrecorded_latches', help: 'Lockout latches taken but not yet in the log (the ledger unreachable); retried at every flush', registers, collect() { const s = ctx.poller?.stats(); if (s) this.set(s.unrecordedLatches); } });
  new Gauge({ name: 'fleet_ledger_poller_circuit_open_targets', help: 'Targets polled less often after consecutive failures', registers, collect() { const s = ctx.poller?.stats(); if (s) this.set(s.circuitOpen); } });
  // Per-BMC health in a bounded form: five buckets, two counts and at most five named targets, whatever the fleet's
  // size (one series per BMC would hand a metrics backend 25,000 series per metric).
  new Gauge({
    name: 'fleet_ledger_poller_targets_by_consecutive_failures',
    help: 'Targets by consecutive failed visits (0, 1, 2-3, 4-7, 8+)',
    labelNames: ['failures'] as const,
    registers,
    collect() {
      const s = ctx.poller?.stats();
      if (s) for (const [failures, targets] of Object.entries(s.failureBuckets)) this.set({ failures }, targets);
    },
  });
  new Gauge({ name: 'fleet_ledger_poller_session_limited_targets', help: 'Targets whose last visits met a full session table (each such visit doubles their wait)', registers, collect() { const s = ctx.poller?.stats(); if (s) this.set(s.sessionLimitedTargets); } });
  new Gauge({ name: 'fleet_ledger_poller_credential_refused_targets', help: 'Targets whose credential is not sent: their address is not one it is bound to, or plain http on a site that does not allow it', registers, collect() { const s = ctx.poller?.stats(); if (s) this.set(s.credentialRefusedTargets); } });
  new Gauge({
    name: 'fleet_ledger_poller_worst_target_consecutive_failures',
    help: 'The few targets failing longest (at most 5 series), by node and site',
    labelNames: ['node', 'site'] as const,
    registers,
    collect() {
      this.reset();
      for (const worst of ctx.poller?.stats().worstTargets ?? []) this.set({ node: worst.nodeId, site: worst.site }, worst.consecutiveFailures);
    },
  });

  // The cluster of pollers on this database, read from its tables at scrape time (any process exports the whole
  // cluster), once per scrape for all of these series. Per-shard series are bounded by `maxShardSeries`.
  let clusterRead: { at: number; status: Promise<ClusterStatus | null> } | null = null;
  const clusterStatus = (): Promise<ClusterStatus | null> => {
    if (!clusterRead || Date.now() - clusterRead.at > 1000) clusterRead = { at: Date.now(), status: readClusterStatus(ctx.db).catch(() => null) };
    return clusterRead.status;
  };
  const shardSeries = (status: ClusterStatus) => status.shards.slice(0, maxShardSeries);
  new Gauge({
    name: 'fleet_ledger_cluster_processes',
    help: 'Poller processes alive on this database (heartbeat not expired)',
    registers,
    async collect() {
      const status = await clusterStatus();
      if (status) this.set(status.processes.filter((p) => p.alive).length);
    },
  });
  new Gauge({
    name: 'fleet_ledger_cluster_shards',
    help: 'Shards by lease state: held, expired (owner stopped renewing), released (handed over), unheld',
    labelNames: ['state'] as const,
    registers,
    async collect() {
      const status = await clusterStatus();
      if (!status) return;
      for (const state of shardStates) this.set({ state }, status.shards.filter((shard) => shard.state === state).length);
    },
  });
  new Gauge({
    name: 'fleet_ledger_cluster_lease_epoch',
    help: `Fencing epoch of each shard's poll lease (grows at every acquisition; at most ${maxShardSeries} shards)`,
    labelNames: ['shard'] as const,
    registers,
    async collect() {
      this.reset();
      const status = await clusterStatus();
      for (const shard of status ? shardSeries(status) : []) this.set({ shard: shard.shard }, shard.epoch);
    },
  });
  const handoversSeen = new Map<string, number>();
  new Counter({
    name: 'fleet_ledger_cluster_handovers_total',
    help: `Times each shard's poll lease passed from one process to another, released or taken over (at most ${maxShardSeries} shards)`,
    labelNames: ['shard'] as const,
    registers,
    async collect() {
      const status = await clusterStatus();
      for (const shard of status ? shardSeries(status) : []) {
        if (!handoversSeen.has(shard.shard)) this.inc({ shard: shard.shard }, 0);
        mirror(this, handoversSeen, shard.shard, shard.handovers, { shard: shard.shard });
      }
    },
  });
  new Gauge({ name: 'fleet_ledger_cluster_shards_held', help: 'Poll leases this process holds', registers, collect() { if (ctx.cluster) this.set(ctx.cluster.held().length); } });
  const abandonedSeen = new Map<string, number>();
  new Counter({
    name: 'fleet_ledger_cluster_drains_abandoned_total',
    help: "Hand-overs by this process whose shard did not drain within the lease's TTL: their leases were left to run out",
    registers,
    collect() {
      const stats = ctx.cluster?.stats;
      if (stats) mirror(this, abandonedSeen, 'abandoned', stats.drainsAbandoned);
    },
  });
  const fencedSeen = new Map<string, number>();
  new Counter({
    name: 'fleet_ledger_poll_appends_fenced_total',
    help: 'Poll outcome batches and observations the ledger refused from this process because their lease epoch was superseded',
    registers,
    collect() {
      const s = ctx.poller?.stats();
      if (s) mirror(this, fencedSeen, 'fenced', s.appendsFenced);
    },
  });
  const stuckSeen = new Map<string, number>();
  new Counter({
    name: 'fleet_ledger_poller_visits_abandoned_total',
    help: 'Visits still unsettled well past every deadline they were given: each recorded as a timeout, its slot given back (a defect to report)',
    registers,
    collect() {
      const s = ctx.poller?.stats();
      if (s) mirror(this, stuckSeen, 'abandoned', s.visitsAbandoned);
    },
  });

  if (ctx.simulator) {
    const simulator = ctx.simulator;
    new Gauge({ name: 'fleet_ledger_sim_bmc_sessions_open', help: 'Sessions open on the simulated BMCs, all BMCs together', registers, collect() { this.set(simulator.stats().sessionsNow); } });
    new Gauge({ name: 'fleet_ledger_sim_bmc_sessions_peak_max', help: 'The most sessions any one simulated BMC has served at once', registers, collect() { this.set(simulator.stats().sessionsPeakMax); } });
  }

  // The replica is sampled once per scrape, before the registry is written (`refresh`), and its gauges read that
  // sample: one round trip to each copy per scrape, and no figure older than the scrape. A figure the replica (or, for
  // the lag in positions and bytes, the primary) did not give is NaN: unknown, not zero.
  let replicaSample: ReplicaStatus | null = null;
  if (ctx.replica) {
    const sampled = (read: (status: ReplicaStatus) => number | null) =>
      function collect(this: Gauge) {
        const value = replicaSample ? read(replicaSample) : null;
        this.set(value ?? Number.NaN);
      };
    new Gauge({ name: 'fleet_ledger_replica_up', help: '1 when the read replica (DATABASE_READ_URL) answers; 0: the query routes read the primary', registers, collect: sampled((status) => (status.reachable ? 1 : 0)) });
    new Gauge({ name: 'fleet_ledger_replica_lag_seconds', help: "Seconds since the read replica replayed the primary's last commit (0 when it has replayed all it received)", registers, collect: sampled((status) => (status.lag.ms === null ? null : status.lag.ms / 1000)) });
    new Gauge({ name: 'fleet_ledger_replica_lag_positions', help: "Log positions between the primary's head and the read replica's", registers, collect: sampled((status) => status.lag.positions) });
    new Gauge({ name: 'fleet_ledger_replica_lag_bytes', help: "WAL bytes between the primary's write position and the read replica's replay position", registers, collect: sampled((status) => status.lag.bytes) });
    new Gauge({ name: 'fleet_ledger_replica_head_position', help: "The log's head as replayed on the read replica", registers, collect: sampled((status) => status.head) });
  }

  new Gauge({
    name: 'fleet_ledger_dark_nodes',
    help: 'Nodes in the dark liveness state',
    registers,
    async collect() {
      const states = await livenessStateCounts(ctx.db).catch(() => null);
      this.set(states?.dark ?? 0);
    },
  });
  new Gauge({
    name: 'fleet_ledger_open_alarms',
    help: 'Open top-level alarms by kind (node alarms folded under a root cause are not counted)',
    labelNames: ['kind'] as const,
    registers,
    async collect() {
      this.reset();
      const rows = await openAlarmCountsByKind(ctx.db).catch(() => null);
      for (const row of rows ?? []) this.set({ kind: row.kind }, row.n);
    },
  });

  return {
    registry,
    httpRequests,
    httpDuration,
    appendDuration,
    async refresh() {
      if (ctx.replica) replicaSample = await ctx.replica.status(ctx.db);
    },
  };
}
