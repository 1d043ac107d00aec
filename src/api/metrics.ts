/**
 * Prometheus metrics of one API instance, in its own registry (several instances in one process do not
 * collide). Counters the store and the poller keep themselves are read at scrape time and exported as deltas.
 * Each group of series (ledger, audit, sagas, projections, poller, cluster, simulator, replica, read models) is
 * registered by its own function under `metrics/`.
 */
import { Counter, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { ApiContext } from './api-context.js';
import { registerAuditMetrics } from './metrics/audit-metrics.js';
import { registerClusterMetrics } from './metrics/cluster-metrics.js';
import { registerLedgerMetrics } from './metrics/ledger-metrics.js';
import { registerPollerMetrics } from './metrics/poller-metrics.js';
import { registerPushMetrics } from './metrics/push-metrics.js';
import { registerProjectionMetrics } from './metrics/projection-metrics.js';
import { registerReadModelMetrics } from './metrics/read-model-metrics.js';
import { registerReplicaMetrics } from './metrics/replica-metrics.js';
import { registerSagaMetrics } from './metrics/saga-metrics.js';
import { registerSimulatorMetrics } from './metrics/simulator-metrics.js';

export { maxShardSeries } from './metrics/cluster-metrics.js';

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

  // Registered in this order, which is the order of the scrape.
  registerLedgerMetrics(ctx, registers);
  registerAuditMetrics(ctx, registers);
  registerSagaMetrics(ctx, registers);
  registerProjectionMetrics(ctx, registers);
  registerPollerMetrics(ctx, registers);
  registerPushMetrics(ctx, registers);
  registerClusterMetrics(ctx, registers);
  registerSimulatorMetrics(ctx, registers);
  const refreshReplica = registerReplicaMetrics(ctx, registers);
  registerReadModelMetrics(ctx, registers);

  return {
    registry,
    httpRequests,
    httpDuration,
    appendDuration,
    refresh: refreshReplica,
  };
}
