/**
 * The cluster of poller processes sharing this database: who is alive, which shards each polls under which lease
 * epoch, and the hand-overs. Answered from the tables on the primary (never a replica: a lease's expiry is only
 * meaningful against the clock of the database that grants it), so any process answers for all of them.
 */
import { z } from 'zod';
import { auditRoles, intentRoles, queryRoles, type ApiContext, type ZodApp } from '../api-context.js';
import { clusterStatusSchema, readClusterStatus } from '../cluster-status.js';

export function clusterRoutes(app: ZodApp, ctx: ApiContext): void {
  app.get('/v1/cluster', {
    // Every person's role (and the dashboard's `?token=`); not an agent's, which may only report observations.
    config: { access: { roles: [...queryRoles, ...intentRoles, ...auditRoles], queryToken: true } },
    schema: {
      tags: ['cluster'],
      summary: 'the processes sharing this database, the shards each polls, lease epochs and expiries, hand-overs',
      querystring: z.object({}),
      response: { 200: clusterStatusSchema },
    },
    handler: async () => readClusterStatus(ctx.db, { cluster: ctx.cluster ?? null, poller: ctx.poller }),
  });
}
