/**
 * Queries for analysts: the read models of `projections/`, every list cursor-paged. Routes the dashboard
 * reads also accept `?token=` (marked `queryToken`).
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { sql, type Kysely } from 'kysely';
import { AsOfError } from '../../../replay/as-of/index.js';
import { z } from 'zod';
import { instantSchema, nodeIdSchema } from '../../../events/index.js';
import {
  alarmsOfNode,
  childAlarms,
  complianceByNode,
  complianceSummary,
  darkNodes,
  driftFindings,
  firmwareVersions,
  gapsInPeriod,
  heterogeneityReport,
  inventoryBy,
  inventoryDimensions,
  nodeComparison,
  nodeLiveness,
  openAlarms,
  alarmById,
  overdueNodes,
} from '../../../projections/index.js';
import { ApiError } from '../api-error.js';
import { queryRoles, type ApiContext, type ZodApp } from '../api-context.js';
import { keyAfter, keysetPage, pageOf, pageQuery } from '../paging.js';

const access = { access: { roles: queryRoles, queryToken: true } };
const livenessStates = ['never-contacted', 'healthy', 'late', 'dark', 'maintenance', 'decommissioned'] as const;

function secondsSince(now: Date, at: Date | null): number | null {
  return at === null ? null : Math.max(0, (now.getTime() - new Date(at).getTime()) / 1000);
}

function livenessRow(row: any, now: Date) {
  return {
    nodeId: row.node_id as string,
    site: row.site as string | null,
    rack: row.rack as string | null,
    state: row.state as string,
    expectedIntervalS: row.expected_interval_s as number,
    lastContactAt: row.last_contact_at as Date | null,
    secondsSinceLastContact: secondsSince(now, row.last_contact_at),
    consecutiveMisses: row.consecutive_misses as number,
    darkSince: row.dark_since as Date | null,
    gapCount: row.gap_count as number,
  };
}

function inventoryRow(row: any) {
  return {
    nodeId: row.node_id,
    site: row.site,
    rack: row.rack,
    manufacturer: row.manufacturer,
    model: row.model,
    serial: row.serial,
    bmcModel: row.bmc_model,
    bmcFirmware: row.bmc_firmware,
    biosVersion: row.bios_version,
    cpuCount: row.cpu_count,
    gpuModel: row.gpu_model,
    gpuCount: row.gpu_count,
    memoryGiB: row.memory_gib,
    dialect: row.dialect,
    source: row.source,
    firstSeenAt: row.first_seen_at,
    inventoryObservedAt: row.inventory_observed_at,
    firmwareObservedAt: row.firmware_observed_at,
  };
}

export function queryRoutes(app: ZodApp, ctx: ApiContext): void {
  const tags = ['queries'];

  /**
   * What a query reads: the live read models, or, with `?asOf=<instant or position>`, the read models as of that
   * point (materialized by the as-of engine); the answer then carries the position and instant it reflects in the
   * `fleet-ledger-as-of-position` and `fleet-ledger-as-of-recorded-at` headers, and "seconds since" count to that instant.
   */
  async function view(request: FastifyRequest, reply: FastifyReply): Promise<{ db: Kysely<any>; now: Date }> {
    const asOf = new URL(request.url, 'http://local').searchParams.get('asOf');
    if (asOf === null) return { db: ctx.db, now: ctx.now() };
    if (!ctx.asOf) throw new ApiError('API_NOT_FOUND', { resource: 'as-of engine' }, 'this ledger runs without time travel');
    try {
      const point = await ctx.asOf.resolve(asOf);
      const view = await ctx.asOf.view(point);
      reply.header('fleet-ledger-as-of-position', String(view.position));
      reply.header('fleet-ledger-as-of-recorded-at', view.recordedAt.toISOString());
      return { db: view.db, now: view.recordedAt };
    } catch (error) {
      if (error instanceof AsOfError) throw new ApiError('API_INVALID_REQUEST', { field: 'querystring.asOf', reason: error.message }, error.message);
      throw error;
    }
  }

  app.get('/v1/nodes/:nodeId', {
    config: access,
    schema: { tags, summary: "a node's current view: liveness, inventory, firmware, drift and alarms", params: z.object({ nodeId: nodeIdSchema }) },
    handler: async (request, reply) => {
      const { db, now } = await view(request, reply);
      const { nodeId } = request.params;

      const [liveness, inventory, firmware, drift, alarms] = await Promise.all([
        db.selectFrom('liveness_nodes').selectAll().where('node_id', '=', nodeId).executeTakeFirst(),
        db.selectFrom('inventory_nodes').selectAll().where('node_id', '=', nodeId).executeTakeFirst(),
        db.selectFrom('inventory_firmware').selectAll().where('node_id', '=', nodeId).orderBy('component').execute(),
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
    },
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
        compact: z.enum(['true', 'false']).default('false').describe('only nodeId, site, rack and state'),
        token: z.string().optional(),
      }),
    },
    handler: async (request, reply) => {
      const { db, now } = await view(request, reply);
      const { cursor, limit, state, exclude, site, rack, compact } = request.query;
      const after = keyAfter(cursor);
      let query = db.selectFrom('liveness_nodes').selectAll();
      if (after !== null) query = query.where('node_id', '>', after);
      if (state) query = query.where('state', '=', state);
      if (exclude) query = query.where('state', '<>', exclude);
      if (site) query = query.where('site', '=', site);
      if (rack) query = query.where('rack', '=', rack);
      const rows = await query.orderBy('node_id').limit(limit + 1).execute();
      if (compact === 'true') return keysetPage(rows.map((row: any) => ({ nodeId: row.node_id as string, site: row.site as string | null, rack: row.rack as string | null, state: row.state as string })), limit, (row) => row.nodeId);

      return keysetPage(rows.map((row) => livenessRow(row, now)), limit, (row) => row.nodeId);
    },
  });

  app.get('/v1/liveness/summary', {
    config: access,
    schema: { tags, summary: 'how many nodes are in each liveness state' },
    handler: async (request, reply) => {
      const { db } = await view(request, reply);
      const rows = await db.selectFrom('liveness_nodes').select(['state', sql<number>`count(*)::int`.as('nodes')]).groupBy('state').execute();
      return { states: Object.fromEntries(rows.map((row: any) => [row.state, row.nodes])) as Record<string, number> };
    },
  });

  app.get('/v1/liveness/dark', {
    config: access,
    schema: { tags, summary: 'dark nodes, longest dark first', querystring: z.object(pageQuery) },
    handler: async (request, reply) => {
      const { db, now } = await view(request, reply);

      const dark = (await darkNodes(db)).map((node) => ({ ...node, secondsSinceLastContact: secondsSince(now, node.lastContactAt) }));
      return pageOf(dark, request.query.cursor, request.query.limit);
    },
  });

  app.get('/v1/liveness/overdue', {
    config: access,
    schema: {
      tags,
      summary: 'nodes not heard from for `intervals` times their expected interval, whatever their state (what a stopped poller would hide)',
      querystring: z.object({ ...pageQuery, intervals: z.coerce.number().min(1).max(1000).default(3) }),
    },
    handler: async (request, reply) => {
      const { db, now } = await view(request, reply);

      const overdue = (await overdueNodes(db, now, request.query.intervals)).map((node) => ({ ...node, secondsSinceLastContact: secondsSince(now, node.lastContactAt) }));
      return pageOf(overdue, request.query.cursor, request.query.limit);
    },
  });

  app.get('/v1/liveness/nodes/:nodeId', {
    config: access,
    schema: { tags, summary: "one node's liveness and time since last contact", params: z.object({ nodeId: nodeIdSchema }) },
    handler: async (request, reply) => {
      const { db, now } = await view(request, reply);
      const node = await nodeLiveness(db, request.params.nodeId);
      if (!node) throw new ApiError('API_NOT_FOUND', { resource: 'node', id: request.params.nodeId }, `no liveness for node ${request.params.nodeId}`);
      return { ...node, secondsSinceLastContact: secondsSince(now, node.lastContactAt) };
    },
  });

  app.get('/v1/liveness/gaps', {
    config: access,
    schema: {
      tags,
      summary: 'gaps (stretches without contact) of a node or a rack overlapping [from, to]; open gaps have endAt null',
      querystring: z
        .object({ ...pageQuery, nodeId: nodeIdSchema.optional(), rack: z.string().min(1).max(64).optional(), from: instantSchema.optional(), to: instantSchema.optional() })
        .refine((q) => (q.nodeId === undefined) !== (q.rack === undefined), { path: ['nodeId'], message: 'give exactly one of nodeId and rack' }),
    },
    handler: async (request, reply) => {
      const { db, now } = await view(request, reply);
      const { nodeId, rack, cursor, limit } = request.query;
      const to = request.query.to ? new Date(request.query.to) : now;
      const from = request.query.from ? new Date(request.query.from) : new Date(to.getTime() - 24 * 3600_000);
      const gaps = await gapsInPeriod(db, nodeId ? { nodeId } : { rack: rack! }, from, to);
      return { from, to, ...pageOf(gaps, cursor, limit) };
    },
  });

  app.get('/v1/inventory', {
    config: access,
    schema: { tags, summary: 'node counts by one attribute (vendor, model, firmware, ...)', querystring: z.object({ ...pageQuery, by: z.enum(inventoryDimensions).default('manufacturer') }) },
    handler: async (request, reply) => {
      const { db } = await view(request, reply);
      return ({ by: request.query.by, ...pageOf(await inventoryBy(db, request.query.by), request.query.cursor, request.query.limit) });
    },
  });

  app.get('/v1/inventory/nodes', {
    config: access,
    schema: {
      tags,
      summary: 'observed inventory per node, filtered',
      querystring: z.object({
        ...pageQuery,
        site: z.string().max(64).optional(),
        rack: z.string().max(64).optional(),
        manufacturer: z.string().max(200).optional(),
        model: z.string().max(200).optional(),
        gpuModel: z.string().max(200).optional(),
        bmcFirmware: z.string().max(200).optional(),
        biosVersion: z.string().max(200).optional(),
      }),
    },
    handler: async (request, reply) => {
      const { db, now } = await view(request, reply);
      const q = request.query;
      const after = keyAfter(q.cursor);
      let query = db.selectFrom('inventory_nodes').selectAll();
      if (after !== null) query = query.where('node_id', '>', after);
      const filters: Array<[string, string | undefined]> = [
        ['site', q.site],
        ['rack', q.rack],
        ['manufacturer', q.manufacturer],
        ['model', q.model],
        ['gpu_model', q.gpuModel],
        ['bmc_firmware', q.bmcFirmware],
        ['bios_version', q.biosVersion],
      ];
      for (const [column, value] of filters) if (value !== undefined) query = query.where(column, '=', value);
      const rows = await query.orderBy('node_id').limit(q.limit + 1).execute();
      return keysetPage(rows.map(inventoryRow), q.limit, (row) => row.nodeId);
    },
  });

  app.get('/v1/inventory/heterogeneity', {
    config: access,
    schema: { tags, summary: 'every (vendor, model, firmware component, version) with its node count, oldest first', querystring: z.object(pageQuery) },
    handler: async (request, reply) => {
      const { db } = await view(request, reply);
      return pageOf(await heterogeneityReport(db), request.query.cursor, request.query.limit);
    },
  });

  app.get('/v1/inventory/firmware/:component', {
    config: access,
    schema: { tags, summary: 'node counts per running version of one firmware component', params: z.object({ component: z.string().min(1).max(200) }), querystring: z.object(pageQuery) },
    handler: async (request, reply) => {
      const { db } = await view(request, reply);
      return pageOf(await firmwareVersions(db, request.params.component), request.query.cursor, request.query.limit);
    },
  });

  app.get('/v1/drift', {
    config: access,
    schema: {
      tags,
      summary: 'fields that differ from the EBOM declaration, oldest first',
      querystring: z.object({ ...pageQuery, nodeId: nodeIdSchema.optional(), kind: z.enum(['missing', 'unexpected', 'mismatch']).optional() }),
    },
    handler: async (request, reply) => {
      const { db, now } = await view(request, reply);
      const { nodeId, kind, cursor, limit } = request.query;
      return pageOf(await driftFindings(db, { ...(nodeId ? { nodeId } : {}), ...(kind ? { kind } : {}) }), cursor, limit);
    },
  });

  app.get('/v1/compliance', {
    config: access,
    schema: { tags, summary: 'firmware compliance per component: at baseline, above, below, unknown', querystring: z.object(pageQuery) },
    handler: async (request, reply) => {
      const { db } = await view(request, reply);
      return pageOf(await complianceSummary(db), request.query.cursor, request.query.limit);
    },
  });

  app.get('/v1/compliance/nodes', {
    config: access,
    schema: {
      tags,
      summary: "each node's firmware against its own declared baseline",
      querystring: z.object({ ...pageQuery, component: z.string().min(1).max(200).optional(), status: z.enum(['at-baseline', 'above', 'below', 'unknown']).optional() }),
    },
    handler: async (request, reply) => {
      const { db, now } = await view(request, reply);
      const { component, status, cursor, limit } = request.query;
      const nodes = (await complianceByNode(db, component)).filter((node) => !status || node.status === status);
      return pageOf(nodes, cursor, limit);
    },
  });

  app.get('/v1/alarms', {
    config: access,
    schema: {
      tags,
      summary: 'open alarms, oldest first; node alarms folded under a root cause are counted on it (includeFolded lists them too)',
      querystring: z.object({ ...pageQuery, kind: z.string().max(64).optional(), includeFolded: z.enum(['true', 'false']).default('false') }),
    },
    handler: async (request, reply) => {
      const { db, now } = await view(request, reply);
      const { kind, includeFolded, cursor, limit } = request.query;
      const alarms = await openAlarms(db, { includeFolded: includeFolded === 'true', ...(kind ? { kind } : {}) });
      const page = pageOf(alarms, cursor, limit);
      const items = await Promise.all(
        page.items.map(async (alarm) => ({ ...alarm, folded: alarm.kind === 'root-cause' ? (await childAlarms(db, alarm.alarmId)).map((child) => child.nodeId ?? child.alarmId) : [] })),
      );
      return { items, nextCursor: page.nextCursor };
    },
  });

  app.get('/v1/alarms/:alarmId', {
    config: access,
    schema: { tags, summary: 'one alarm with the alarms folded under it', params: z.object({ alarmId: z.string().min(1).max(200) }) },
    handler: async (request, reply) => {
      const { db, now } = await view(request, reply);
      const alarm = await alarmById(db, request.params.alarmId);
      if (!alarm) throw new ApiError('API_NOT_FOUND', { resource: 'alarm', id: request.params.alarmId }, `no alarm ${request.params.alarmId}`);
      return { ...alarm, children: await childAlarms(db, alarm.alarmId) };
    },
  });
}
