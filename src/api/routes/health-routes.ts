/** Liveness of the process, readiness of the ledger behind it, and the metrics scrape. */
import { z } from 'zod';
import type { ApiContext, ZodApp } from '../api-context.js';
import type { ApiMetrics } from '../metrics.js';

export function healthRoutes(app: ZodApp, ctx: ApiContext, metrics: ApiMetrics): void {
  const tags = ['health'];

  app.get('/healthz', { schema: { tags, summary: 'the process is up' } }, async () => ({ status: 'ok' }));

  app.get('/readyz', {
    schema: { tags, summary: 'the store answers, and every projection runs within its lag (503 otherwise); with a read replica, its state and lag' },
    handler: async (request, reply) => {
      const reasons: string[] = [];
      let headPosition: number | null = null;
      try {
        headPosition = (await ctx.store.head()).position;
      } catch (error) {
        // The route is public: the reason is named, the database's own error text (hosts, users) goes to the log only.
        request.log.warn({ error: error instanceof Error ? error.message : String(error) }, 'readiness: store unreachable');
        reasons.push(`store unreachable (${(error as { code?: unknown })?.code ?? 'no answer'})`);
      }
      const projections = headPosition === null ? [] : ((await ctx.runner?.status().catch(() => null)) ?? []);
      for (const status of projections) {
        if (status.state === 'failed') reasons.push(`projection ${status.name} stopped at position ${status.error?.position} (the reason is in its status and the log)`);
        else if (status.lagPositions > ctx.maxLagPositions) reasons.push(`projection ${status.name} lags ${status.lagPositions} positions (limit ${ctx.maxLagPositions})`);
      }
      // The log disagrees with its Merkle tree or a published checkpoint (tampering found online): not ready until an
      // operator resolves it, with the finding's code for whoever watches the probe.
      const integrity = ctx.audit?.integrity.status.alarm ?? null;
      if (integrity) reasons.push(`ledger integrity ${integrity.code}: ${integrity.summary}`);
      // With a read replica: where the query routes read and how far behind it is. A replica that does not answer is
      // reported, not a reason: its reads fall back to the primary, and every process sharing that replica turning
      // unready at once would take the whole API out of a load balancer (`fleet_ledger_replica_up` is there to alert).
      const replica = ctx.replica ? await ctx.replica.status(ctx.db) : null;
      const body = {
        status: reasons.length === 0 ? 'ready' : 'not-ready',
        reasons,
        headPosition,
        projections: projections.map((p) => ({ name: p.name, state: p.state, lagPositions: p.lagPositions, lagSeconds: p.lagSeconds })),
        ...(replica ? { replica } : {}),
        ...(integrity ? { integrity: { code: integrity.code, summary: integrity.summary, detectedAt: integrity.detectedAt } } : {}),
      };
      if (reasons.length > 0) {
        reply.code(503);
        return { ...body, error: { code: 'API_NOT_READY', message: reasons.join('; '), details: { reasons, ...(integrity ? { integrity: integrity.code } : {}) } } };
      }
      return body;
    },
  });

  app.get('/metrics', {
    schema: { tags, summary: 'Prometheus exposition format', querystring: z.object({}) },
    handler: async (_request, reply) => {
      reply.header('content-type', metrics.registry.contentType);
      await metrics.refresh();
      return metrics.registry.metrics();
    },
  });
}
