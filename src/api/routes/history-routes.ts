/**
 * The fleet's history for auditors and analysts: one node's timeline with its silences as intervals, and what changed
 * between two instants or positions (joined, left, firmware, dark and recovered, drift, alarms, rollout steps, and
 * every intent with who asked).
 */
import { z } from 'zod';
import { nodeIdSchema } from '../../../events/index.js';
import { AsOfError, type AsOfEngine, type AsOfPoint } from '../../../replay/as-of/index.js';
import { fleetDiff, nodeTimeline } from '../../../replay/history/index.js';
import { ApiError } from '../api-error.js';
import type { ApiContext, ZodApp } from '../api-context.js';

const access = { access: { roles: ['analyst', 'auditor', 'operator'] as const } };
const tags = ['history'];
const point = z.string().min(1).max(64);

function engineOf(ctx: ApiContext): AsOfEngine {
  if (!ctx.asOf) throw new ApiError('API_NOT_FOUND', { resource: 'as-of engine' }, 'this ledger runs without time travel');
  return ctx.asOf;
}

async function resolve(engine: AsOfEngine, value: string | undefined, field: string): Promise<AsOfPoint | undefined> {
  if (value === undefined) return undefined;
  try {
    return await engine.resolve(value);
  } catch (error) {
    if (error instanceof AsOfError) throw new ApiError('API_INVALID_REQUEST', { field: `querystring.${field}`, reason: error.message }, error.message);
    throw error;
  }
}

function ordered(from: AsOfPoint | undefined, to: AsOfPoint | undefined): void {
  if (from && to && from.position > to.position) {
    throw new ApiError('API_INVALID_REQUEST', { field: 'querystring.from', reason: `from (position ${from.position}) is after to (position ${to.position})` }, 'the window is reversed: from must not be after to');
  }
}

export function historyRoutes(app: ZodApp, ctx: ApiContext): void {
  app.get('/v1/history/nodes/:nodeId/timeline', {
    config: access,
    schema: {
      tags,
      summary: "one node's history in log order, its silences as intervals (from/to: RFC 3339 instants or positions)",
      params: z.object({ nodeId: nodeIdSchema }),
      querystring: z.object({ from: point.optional(), to: point.optional() }),
    },
    handler: async (request) => {
      const engine = engineOf(ctx);
      const from = await resolve(engine, request.query.from, 'from');
      const to = await resolve(engine, request.query.to, 'to');
      ordered(from, to);
      const timeline = await nodeTimeline(ctx.store, engine, request.params.nodeId, { ...(from ? { from } : {}), ...(to ? { to } : {}) });
      if (timeline.entries.length === 0 && timeline.silences.length === 0 && !from) throw new ApiError('API_NOT_FOUND', { resource: 'node', id: request.params.nodeId }, `no events about node ${request.params.nodeId}`);
      return { ...timeline, through: { position: timeline.through.position, recordedAt: timeline.through.recordedAt.toISOString() } };
    },
  });

  app.get('/v1/history/diff', {
    config: access,
    schema: {
      tags,
      summary: 'what changed between two points of the log: nodes, firmware, dark and recovered, drift, alarms, rollout steps, intents with who asked',
      querystring: z.object({ from: point, to: point.optional() }),
    },
    handler: async (request) => {
      const engine = engineOf(ctx);
      const from = (await resolve(engine, request.query.from, 'from'))!;
      const head = await ctx.store.head();
      const to = (await resolve(engine, request.query.to, 'to')) ?? { position: head.position, recordedAt: head.recordedAt };
      ordered(from, to);
      const diff = await fleetDiff(ctx.store, engine, from, to);
      return { ...diff, from: { position: from.position, recordedAt: from.recordedAt.toISOString() }, to: { position: to.position, recordedAt: to.recordedAt.toISOString() } };
    },
  });
}
