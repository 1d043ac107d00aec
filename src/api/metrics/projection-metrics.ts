import { Gauge } from 'prom-client';
import type { MetricsContext, Registers } from './metrics-context.js';

/** Projections: lag, failure and events set aside, from the runner's status. */
export function registerProjectionMetrics(ctx: MetricsContext, registers: Registers): void {
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
}
