/**
 * Alarm queries: open alarms (critical first, root causes with what they fold), one alarm with its children.
 */
import { z } from 'zod';
import { alarmById, childAlarms, openAlarms } from '../../../projections/index.js';
import { ApiError } from '../api-error.js';
import type { ApiContext, ZodApp } from '../api-context.js';
import { pageOf, pageQuery } from '../paging.js';
import { access, queryAnswerer, readParameters, reads } from './query-support.js';

export function alarmQueryRoutes(app: ZodApp, ctx: ApiContext): void {
  const tags = ['queries'];
  const readQuery = z.object(readParameters);
  const answer = queryAnswerer(ctx);

  app.get('/v1/alarms', {
    config: access,
    schema: {
      tags,
      summary: 'open alarms, critical first, then oldest first; node alarms folded under a root cause are counted on it (includeFolded lists them too)',
      querystring: z.object({ ...pageQuery, kind: z.string().max(64).optional(), includeFolded: z.enum(['true', 'false']).default('false'), ...readParameters }),
    },
    handler: async (request, reply) =>
      answer(request, reply, reads.alarms, async (db) => {
        const { kind, includeFolded, cursor, limit } = request.query;
        const alarms = await openAlarms(db, { includeFolded: includeFolded === 'true', ...(kind ? { kind } : {}) });
        const page = pageOf(alarms, cursor, limit);
        const items = await Promise.all(
          page.items.map(async (alarm) => ({ ...alarm, folded: alarm.kind === 'root-cause' ? (await childAlarms(db, alarm.alarmId)).map((child) => child.nodeId ?? child.alarmId) : [] })),
        );
        return { items, nextCursor: page.nextCursor };
      }),
  });

  app.get('/v1/alarms/:alarmId', {
    config: access,
    schema: { tags, summary: 'one alarm with the alarms folded under it', params: z.object({ alarmId: z.string().min(1).max(200) }), querystring: readQuery },
    handler: async (request, reply) =>
      answer(request, reply, reads.alarms, async (db) => {
        const alarm = await alarmById(db, request.params.alarmId);
        if (!alarm) throw new ApiError('API_NOT_FOUND', { resource: 'alarm', id: request.params.alarmId }, `no alarm ${request.params.alarmId}`);
        return { ...alarm, children: await childAlarms(db, alarm.alarmId) };
      }),
  });
}
