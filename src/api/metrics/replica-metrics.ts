import { Gauge } from 'prom-client';
import type { ReplicaStatus } from '../read-replica.js';
import type { MetricsContext, Registers } from './metrics-context.js';

/** The read replica's state and lag; returns the `refresh` that samples it before each scrape. */
export function registerReplicaMetrics(ctx: MetricsContext, registers: Registers): () => Promise<void> {
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
  return async () => {
    if (ctx.replica) replicaSample = await ctx.replica.status(ctx.db);
  };
}
