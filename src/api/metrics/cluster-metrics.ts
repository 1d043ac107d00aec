import { Counter, Gauge } from 'prom-client';
import { readClusterStatus, shardStates, type ClusterStatus } from '../cluster-status.js';
import type { MetricsContext, Registers } from './metrics-context.js';
import { mirror } from './mirror.js';

/** Per-shard cluster series exported at most (the first by shard name): shards are sites and hash ranges of sites. */
export const maxShardSeries = 256;

/** The cluster of pollers on this database: processes, shards and their leases, hand-overs, and appends fenced off. */
export function registerClusterMetrics(ctx: MetricsContext, registers: Registers): void {
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
}
