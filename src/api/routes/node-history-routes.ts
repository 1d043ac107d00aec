/**
 * One node's history as intervals: `GET /v1/nodes/{nodeId}/history?from=&to=` answers its liveness states, its
 * observed inventory and its alarms, each with the instants between which it held (and, for liveness and inventory,
 * the log positions of the row versions behind it), limited to those overlapping [from, to]. Read from the versioned
 * read models' history views: one indexed read each, whatever the length of the log.
 */
import { z } from 'zod';
import { instantSchema, nodeIdSchema } from '../../../events/index.js';
import { nodeHasHistory, nodeHistory, type NodeHistory } from '../../../projections/index.js';
import { ApiError } from '../api-error.js';
import { queryRoles, type ApiContext, type ZodApp } from '../api-context.js';

const access = { access: { roles: queryRoles } };
const instant = z.string().describe('RFC 3339, UTC');
const interval = {
  from: instant.describe('when it began (the recording instant of the event that made it)'),
  to: instant.nullable().describe('when it ended (null: it still holds)'),
  fromPosition: z.number().int().describe('the log position from which it held'),
  toPosition: z.number().int().nullable().describe('the log position from which it no longer held (null: it still holds)'),
};

const historyResponse = z.object({
  nodeId: z.string(),
  from: instant,
  to: instant,
  liveness: z.array(
    z.object({
      ...interval,
      state: z.enum(['never-contacted', 'healthy', 'late', 'dark', 'maintenance', 'decommissioned']),
      site: z.string().nullable(),
      rack: z.string().nullable(),
      darkSince: instant.nullable(),
    }),
  ),
  inventory: z.array(
    z.object({
      ...interval,
      manufacturer: z.string().nullable(),
      model: z.string().nullable(),
      serial: z.string().nullable(),
      bmcFirmware: z.string().nullable(),
      biosVersion: z.string().nullable(),
      gpuModel: z.string().nullable(),
      gpuCount: z.number().int().nullable(),
    }),
  ),
  alarms: z.array(
    z.object({
      ...interval,
      alarmId: z.string(),
      kind: z.string(),
      severity: z.string(),
      summary: z.string(),
      openedAt: instant.describe("the alarm's own time of opening (the fact's)"),
      closedAt: instant.nullable().describe("the alarm's own time of closing (null while open)"),
      acknowledgedBy: z.string().nullable(),
    }),
  ),
});

type Answer = z.infer<typeof historyResponse>;

/** The history with its instants as RFC 3339 text (the response schema's), every field named. */
function answerOf(history: NodeHistory, from: Date, to: Date): Answer {
  const iso = (at: Date | null): string | null => (at === null ? null : new Date(at).toISOString());
  const span = (i: { from: Date; to: Date | null; fromPosition: number; toPosition: number | null }) => ({ from: iso(i.from)!, to: iso(i.to), fromPosition: i.fromPosition, toPosition: i.toPosition });
  return {
    nodeId: history.nodeId,
    from: from.toISOString(),
    to: to.toISOString(),
    liveness: history.liveness.map((i) => ({ ...span(i), state: i.state, site: i.site, rack: i.rack, darkSince: iso(i.darkSince) })),
    inventory: history.inventory.map((i) => ({
      ...span(i),
      manufacturer: i.manufacturer,
      model: i.model,
      serial: i.serial,
      bmcFirmware: i.bmcFirmware,
      biosVersion: i.biosVersion,
      gpuModel: i.gpuModel,
      gpuCount: i.gpuCount,
    })),
    alarms: history.alarms.map((a) => ({ ...a, ...span(a), openedAt: iso(a.openedAt)!, closedAt: iso(a.closedAt) })),
  };
}

export function nodeHistoryRoutes(app: ZodApp, ctx: ApiContext): void {
  app.get('/v1/nodes/:nodeId/history', {
    config: access,
    schema: {
      tags: ['queries'],
      summary: "one node's liveness states, observed inventory and alarms as intervals overlapping [from, to]",
      params: z.object({ nodeId: nodeIdSchema }),
      querystring: z.object({
        from: instantSchema.optional().describe('start of the window, RFC 3339 (default: the beginning)'),
        to: instantSchema.optional().describe('end of the window, RFC 3339 (default: now)'),
      }),
      response: { 200: historyResponse },
    },
    handler: async (request) => {
      const { nodeId } = request.params;
      const to = request.query.to ? new Date(request.query.to) : ctx.now();
      const from = request.query.from ? new Date(request.query.from) : new Date(0);
      if (from.getTime() > to.getTime()) {
        throw new ApiError('API_INVALID_REQUEST', { field: 'querystring.from', reason: `from (${from.toISOString()}) is after to (${to.toISOString()})` }, `querystring.from is after querystring.to`);
      }
      const db = ctx.db as never;
      if (!(await nodeHasHistory(db, nodeId))) throw new ApiError('API_NOT_FOUND', { resource: 'node', id: nodeId }, `no history of node ${nodeId} in the read models`);
      return answerOf(await nodeHistory(db, nodeId, { from, to }), from, to);
    },
  });
}
