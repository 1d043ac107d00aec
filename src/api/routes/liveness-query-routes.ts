/**
 * The node view and the liveness queries: states, dark and overdue nodes, one node's liveness, gaps.
 */
import { z } from 'zod';
import { instantSchema, nodeIdSchema } from '../../../events/index.js';
import {
  alarmsOfNode,
  darkNodes,
  firmwareRowsOfNode,
  gapsInPeriod,
  inventoryNodeRow,
  livenessNodeRow,
  livenessNodeRows,
  livenessStateCounts,
  nodeComparison,
  nodeLiveness,
  overdueNodes,
} from '../../../projections/index.js';
import { ApiError } from '../api-error.js';
import type { ApiContext, ZodApp } from '../api-context.js';
import { keyAfter, keysetPage, pageOf, pageQuery } from '../paging.js';
import { access, inventoryRow, livenessRow, livenessStates, queryAnswerer, readParameters, reads, sinceLastContact } from './query-support.js';

export function livenessQueryRoutes(app: ZodApp, ctx: ApiContext): void {
  const tags = ['queries'];
  const readQuery = z.object(readParameters);
  const answer = queryAnswerer(ctx);

  app.get('/v1/nodes/:nodeId', {
    config: access,
    schema: { tags, summary: "a node's current view: liveness, inventory, firmware, drift and alarms", params: z.object({ nodeId: nodeIdSchema }), querystring: readQuery },
    handler: async (request, reply) =>
      answer(request, reply, reads.node, async (db, now) => {
        const { nodeId } = request.params;
        const [liveness, inventory, firmware, drift, alarms] = await Promise.all([
          livenessNodeRow(db, nodeId),
          inventoryNodeRow(db, nodeId),
          firmwareRowsOfNode(db, nodeId),
          nodeComparison(db, nodeId),
          alarmsOfNode(db, nodeId),
        ]);
        if (!liveness && !inventory && drift.length === 0) throw new ApiError('API_NOT_FOUND', { resource: 'node', id: nodeId }, `no node ${nodeId} in the read models`);
        return {
          nodeId,
          liveness: liveness ? livenessRow(liveness, now) : null,
          inventory: inventory ? inventoryRow(inventory) : null,
          firmware: firmware.map((f: any) => ({ component: f.component, version: f.version, normalizedVersion: f.normalized_version, firstSeenAt: f.first_seen_at, lastObservedAt: f.last_observed_at })),
          drift: drift.filter((d) => d.kind !== 'match'),
          comparedFields: drift.length,
          alarms,
        };
      }),
  });

  app.get('/v1/liveness/nodes', {
    config: access,
    schema: {
      tags,
      summary: 'every node with its liveness state and time since last contact, by node id',
      querystring: z.object({
        ...pageQuery,
        state: z.enum(livenessStates).optional(),
        exclude: z.enum(livenessStates).optional().describe('leave out nodes in this state (the dashboard refreshes only what is not healthy)'),
        site: z.string().max(64).optional(),
        rack: z.string().max(64).optional(),
        latched: z.enum(['true', 'false']).optional().describe('only nodes whose BMC logins the lockout latch holds (true), or only the others (false): what `clear-latch` acts on'),
        compact: z.enum(['true', 'false']).default('false').describe('only nodeId, site, rack and state'),
        token: z.string().optional(),
        ...readParameters,
      }),
    },
    handler: async (request, reply) =>
      answer(request, reply, reads.liveness, async (db, now) => {
        const { cursor, limit, state, exclude, site, rack, latched, compact } = request.query;
        const after = keyAfter(cursor);
        const rows = await livenessNodeRows(db, { after, state, exclude, site, rack, ...(latched ? { latched: latched === 'true' } : {}), limit: limit + 1 });
        if (compact === 'true') return keysetPage(rows.map((row: any) => ({ nodeId: row.node_id as string, site: row.site as string | null, rack: row.rack as string | null, state: row.state as string })), limit, (row) => row.nodeId);
        return keysetPage(rows.map((row) => livenessRow(row, now)), limit, (row) => row.nodeId);
      }),
  });

  app.get('/v1/liveness/summary', {
    config: access,
    schema: { tags, summary: 'how many nodes are in each liveness state', querystring: readQuery },
    handler: async (request, reply) =>
      answer(request, reply, reads.liveness, async (db) => {
        return { states: await livenessStateCounts(db) };
      }),
  });

  app.get('/v1/liveness/dark', {
    config: access,
    schema: { tags, summary: 'dark nodes, longest dark first', querystring: z.object({ ...pageQuery, ...readParameters }) },
    handler: async (request, reply) =>
      answer(request, reply, reads.liveness, async (db, now) => {
        const dark = (await darkNodes(db)).map((node) => ({ ...node, ...sinceLastContact(now, node) }));
        return pageOf(dark, request.query.cursor, request.query.limit);
      }),
  });

  app.get('/v1/liveness/overdue', {
    config: access,
    schema: {
      tags,
      summary: 'nodes not heard from for `intervals` times their expected interval, whatever their state (what a stopped poller would hide)',
      querystring: z.object({ ...pageQuery, intervals: z.coerce.number().min(1).max(1000).default(3), ...readParameters }),
    },
    handler: async (request, reply) =>
      answer(request, reply, reads.liveness, async (db, now) => {
        const overdue = (await overdueNodes(db, now, request.query.intervals)).map((node) => ({ ...node, ...sinceLastContact(now, node) }));
        return pageOf(overdue, request.query.cursor, request.query.limit);
      }),
  });

  app.get('/v1/liveness/nodes/:nodeId', {
    config: access,
    schema: { tags, summary: "one node's liveness and time since last contact", params: z.object({ nodeId: nodeIdSchema }), querystring: readQuery },
    handler: async (request, reply) =>
      answer(request, reply, reads.liveness, async (db, now) => {
        const node = await nodeLiveness(db, request.params.nodeId);
        if (!node) throw new ApiError('API_NOT_FOUND', { resource: 'node', id: request.params.nodeId }, `no liveness for node ${request.params.nodeId}`);
        return { ...node, ...sinceLastContact(now, node) };
      }),
  });

  app.get('/v1/liveness/gaps', {
    config: access,
    schema: {
      tags,
      summary: 'gaps (stretches without contact) of a node or a rack overlapping [from, to]; open gaps have endAt null',
      querystring: z
        .object({ ...pageQuery, nodeId: nodeIdSchema.optional(), rack: z.string().min(1).max(64).optional(), from: instantSchema.optional(), to: instantSchema.optional(), ...readParameters })
        .refine((q) => (q.nodeId === undefined) !== (q.rack === undefined), { path: ['nodeId'], message: 'give exactly one of nodeId and rack' }),
    },
    handler: async (request, reply) =>
      answer(request, reply, reads.liveness, async (db, now) => {
        const { nodeId, rack, cursor, limit } = request.query;
        const to = request.query.to ? new Date(request.query.to) : now;
        const from = request.query.from ? new Date(request.query.from) : new Date(to.getTime() - 24 * 3600_000);
        const gaps = await gapsInPeriod(db, nodeId ? { nodeId } : { rack: rack! }, from, to);
        return { from, to, ...pageOf(gaps, cursor, limit) };
      }),
  });
}
