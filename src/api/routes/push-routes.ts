/**
 * One node's push: `GET /v1/nodes/{nodeId}/push` answers whether its BMC's stream is held or the node is polled
 * after a gap, since when, the heartbeat announced, the events pushed, and every push gap with since when
 * (`docs/push.md`). Read from the node's own stream, its push events folded in log order.
 */
import { z } from 'zod';
import { isEventOf, nodeIdSchema } from '../../../events/index.js';
import { nodePushState, type NodePushEvent } from '../../../projections/index.js';
import { ApiError } from '../api-error.js';
import { queryRoles, type ApiContext, type ZodApp } from '../api-context.js';

const pushResponse = z.object({
  nodeId: z.string(),
  status: z.enum(['never', 'streaming', 'polled']),
  since: z.string().nullable(),
  heartbeatMs: z.number().nullable(),
  streamsOpened: z.number().int(),
  eventsPushed: z.number().int(),
  gaps: z.array(z.object({ kind: z.string(), since: z.string(), detectedAt: z.string(), detail: z.string() })),
});

export function pushRoutes(app: ZodApp, ctx: ApiContext): void {
  app.get('/v1/nodes/:nodeId/push', {
    config: { access: { roles: queryRoles } },
    schema: {
      tags: ['queries'],
      summary: "a node's push: stream held or polled after a gap, since when, and its push gaps",
      params: z.object({ nodeId: nodeIdSchema }),
      response: { 200: pushResponse },
    },
    handler: async (request) => {
      const { nodeId } = request.params;
      const recorded = await ctx.store.readStreamToEnd(`node-${nodeId}`);
      if (recorded.length === 0) throw new ApiError('API_NOT_FOUND', { resource: 'node', id: nodeId }, `no events of node ${nodeId}`);
      const push: NodePushEvent[] = recorded.filter((event) => isEventOf(event, ['PushStreamOpened', 'PushGapOpened', 'RedfishEventObserved']));
      return { nodeId, ...nodePushState(push) };
    },
  });
}
