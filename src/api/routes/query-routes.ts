/**
 * Queries for analysts: the read models of `projections/`, every list cursor-paged. Routes the dashboard
 * reads also accept `?token=` (marked `queryToken`).
 *
 * Every route also answers as of a point of the log: `?asOf=<position or RFC 3339 instant>` reads the versioned read
 * models as of that point (`replay/as-of`), the answer carries `asOf: { position, recordedAt, instant }` and the
 * `fleet-ledger-as-of-position` / `fleet-ledger-as-of-recorded-at` headers, and "seconds since" count to the instant
 * asked. What history does not keep (last contact and miss counters, which every poll changes) is left out of an as-of
 * answer, and a route that needs it (overdue nodes, gaps, topology) answers 400 `ASOF_NOT_KEPT`. Without `asOf` the
 * answers are unchanged.
 *
 * With a read replica (`DATABASE_READ_URL`), answers without `asOf` are read on the replica and carry `readFrom` and
 * the `fleet-ledger-read-from` / `fleet-ledger-position` / `fleet-ledger-replica-*` headers (see `read-replica.ts`);
 * `?minPosition=` sends a read the replica has not caught up with to the primary.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Kysely } from 'kysely';
import { z } from 'zod';
import { instantSchema, nodeIdSchema } from '../../../events/index.js';
import {
  alarmsOfNode,
  certificateFindings,
  childAlarms,
  complianceByNode,
  complianceSummary,
  darkNodes,
  driftFindings,
  firmwareRowsOfNode,
  firmwareVersions,
  gapsInPeriod,
  heterogeneityReport,
  inventoryBy,
  inventoryDimensions,
  inventoryNodeRow,
  inventoryNodeRows,
  type InventoryTextColumn,
  livenessNodeRow,
  livenessNodeRows,
  livenessStateCounts,
  nodeComparison,
  nodeLiveness,
  openAlarms,
  alarmById,
  overdueNodes,
} from '../../../projections/index.js';
import { asOfDescription, isAsOfError, isPointError, type AsOfEngine, type AsOfPoint } from '../../../replay/as-of/index.js';
import { ApiError } from '../api-error.js';
import { queryRoles, type ApiContext, type ZodApp } from '../api-context.js';
import { keyAfter, keysetPage, pageOf, pageQuery } from '../paging.js';
import type { ReadOrigin } from '../read-replica.js';
import type { DynamicDatabase } from '../../ledger/index.js';

/** The `asOf` query parameter: a log position (1 or more) or an RFC 3339 instant with a zone. */
export const asOfParameter = z
  .string()
  .max(64)
  .regex(/^([1-9][0-9]{0,15}|\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2}))$/, `must be ${asOfDescription}`)
  .refine((value) => /^[0-9]+$/.test(value) || instantSchema.safeParse(value).success, `must be ${asOfDescription}`)
  .optional()
  .describe(
    `answer as of this point of the log: ${asOfDescription}; an instant stands for the last position recorded at or before it. ` +
      'The answer then carries asOf {position, recordedAt, instant} and the fleet-ledger-as-of-position and fleet-ledger-as-of-recorded-at headers',
  );

/**
 * `minPosition`: read-your-writes on a ledger with a read replica. The answer reflects at least this position of the
 * log: the replica answers when its read models have reached it, else the primary does (pass the position an intent
 * answered). Without a replica it changes nothing.
 */
export const minPositionParameter = z.coerce
  .number()
  .int()
  .min(1)
  .max(Number.MAX_SAFE_INTEGER)
  .optional()
  .describe('with a read replica: answer from a copy whose read models have applied the log through this position (the replica when it has, else the primary); pass the position an intent answered to read your own write');

/** The parameters every read-model route takes: a point of the past, or a least position for a current answer. */
export const readParameters = { asOf: asOfParameter, minPosition: minPositionParameter };

/** What an as-of answer reflects, as it appears in the answer. */
export interface AsOfAnswer {
  /** The last position of the log the answer includes. */
  position: number;
  /** When that position was recorded. */
  recordedAt: string;
  /** The instant the answer describes ("seconds since" count to it): the one asked, or `recordedAt`. */
  instant: string;
}

export const asOfAnswerSchema = z.object({ position: z.number().int(), recordedAt: z.string(), instant: z.string() });

function engineOf(ctx: ApiContext): AsOfEngine {
  if (!ctx.asOf) throw new ApiError('API_NOT_FOUND', { resource: 'as-of engine' }, 'this ledger runs without time travel (asOf is not available)');
  return ctx.asOf;
}

/** Turns what the as-of engine refuses into the API's answer: the point asked is a 400 naming `querystring.asOf`. */
export function asOfApiError(error: unknown): unknown {
  if (!isAsOfError(error)) return error;
  if (isPointError(error)) return new ApiError('API_INVALID_REQUEST', { field: 'querystring.asOf', reason: `${error.code}: ${error.message}` }, `querystring.asOf ${error.message}`);
  if (error.code === 'ASOF_STOPPED') return new ApiError('API_NOT_READY', { reasons: [`${error.code}: ${error.message}`] }, error.message);
  return error;
}

/** Resolves `asOf` to its point (a 400 naming `querystring.asOf` when it cannot be). */
export async function asOfPoint(ctx: ApiContext, asOf: string): Promise<{ engine: AsOfEngine; point: AsOfPoint }> {
  const engine = engineOf(ctx);
  try {
    return { engine, point: await engine.resolve(asOf) };
  } catch (error) {
    throw asOfApiError(error);
  }
}

/** Marks an answer with the point it reflects: its `asOf` field and the two headers. */
export function stateAsOf(reply: FastifyReply, point: AsOfPoint): AsOfAnswer {
  reply.header('fleet-ledger-as-of-position', String(point.position));
  reply.header('fleet-ledger-as-of-recorded-at', point.recordedAt.toISOString());
  return { position: point.position, recordedAt: point.recordedAt.toISOString(), instant: point.instant.toISOString() };
}

/** The projections each family of routes reads (an as-of question names them; one without history is refused). */
const reads = {
  node: ['liveness', 'inventory', 'drift', 'alarms'],
  liveness: ['liveness'],
  inventory: ['inventory'],
  drift: ['drift'],
  // Compliance owns no table: it reads the drift read model (declared baselines and observed versions).
  compliance: ['drift'],
  alarms: ['alarms'],
} as const satisfies Record<string, readonly string[]>;

const access = { access: { roles: queryRoles, queryToken: true } };
const livenessStates = ['never-contacted', 'healthy', 'late', 'dark', 'maintenance', 'decommissioned'] as const;

function secondsSince(now: Date, at: Date | null): number | null {
  return at === null ? null : Math.max(0, (now.getTime() - new Date(at).getTime()) / 1000);
}

/**
 * The time since last contact, where the answer has the last contact: as of a point of the past it does not (history
 * does not keep what every poll changes), and the answer leaves out what it cannot state exactly.
 */
function sinceLastContact(now: Date, node: { lastContactAt?: Date | null }): { secondsSinceLastContact?: number | null } {
  return node.lastContactAt === undefined ? {} : { secondsSinceLastContact: secondsSince(now, node.lastContactAt) };
}

function livenessRow(row: any, now: Date) {
  const perPoll = 'last_contact_at' in row;
  return {
    nodeId: row.node_id as string,
    site: row.site as string | null,
    rack: row.rack as string | null,
    state: row.state as string,
    expectedIntervalS: row.expected_interval_s as number,
    ...(perPoll ? { lastContactAt: row.last_contact_at as Date | null, secondsSinceLastContact: secondsSince(now, row.last_contact_at), consecutiveMisses: row.consecutive_misses as number } : {}),
    darkSince: row.dark_since as Date | null,
    gapCount: row.gap_count as number,
    /** The lockout latch refused the node's last poll: no login until the credentials change or `clear-latch`. */
    latched: Boolean(row.latched),
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
  const readQuery = z.object(readParameters);

  /**
   * Answers a query from the live read models, or, with `asOf`, from the read models of `projections` as of that
   * point (the answer then says which point it reflects). `query` gets the database to read and the instant "now"
   * stands for. With a read replica, a live answer is read there (or on the primary when the replica has not reached
   * `minPosition`) and says which copy answered, the position it reflects and the replica's lag (`readFrom`).
   */
  async function answer<T extends object>(
    request: FastifyRequest<{ Querystring: { asOf?: string | undefined; minPosition?: number | undefined } }>,
    reply: FastifyReply,
    projections: readonly string[],
    query: (db: Kysely<DynamicDatabase>, now: Date) => Promise<T>,
  ): Promise<T | (T & { asOf: AsOfAnswer }) | (T & { readFrom: ReadOrigin })> {
    const { asOf, minPosition } = request.query;
    if (asOf === undefined) {
      const now = ctx.now();
      if (ctx.replica) return ctx.replica.answer(reply, ctx.db, projections, minPosition, (db) => query(db, now), request.log);
      return query(ctx.db, now);
    }
    const { engine, point } = await asOfPoint(ctx, asOf);
    let result: T;
    try {
      result = await engine.read(point, projections, (db) => query(db, point.instant));
    } catch (error) {
      throw asOfApiError(error);
    }
    return { ...result, asOf: stateAsOf(reply, point) };
  }

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

  app.get('/v1/inventory', {
    config: access,
    schema: { tags, summary: 'node counts by one attribute (vendor, model, firmware, ...)', querystring: z.object({ ...pageQuery, by: z.enum(inventoryDimensions).default('manufacturer'), ...readParameters }) },
    handler: async (request, reply) =>
      answer(request, reply, reads.inventory, async (db) => ({ by: request.query.by, ...pageOf(await inventoryBy(db, request.query.by), request.query.cursor, request.query.limit) })),
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
        ...readParameters,
      }),
    },
    handler: async (request, reply) =>
      answer(request, reply, reads.inventory, async (db) => {
        const q = request.query;
        const after = keyAfter(q.cursor);
        const filters: Array<[InventoryTextColumn, string | undefined]> = [
          ['site', q.site],
          ['rack', q.rack],
          ['manufacturer', q.manufacturer],
          ['model', q.model],
          ['gpu_model', q.gpuModel],
          ['bmc_firmware', q.bmcFirmware],
          ['bios_version', q.biosVersion],
        ];
        const rows = await inventoryNodeRows(db, { after, equal: filters, limit: q.limit + 1 });
        return keysetPage(rows.map(inventoryRow), q.limit, (row) => row.nodeId);
      }),
  });

  app.get('/v1/inventory/heterogeneity', {
    config: access,
    schema: { tags, summary: 'every (vendor, model, firmware component, version) with its node count, oldest first', querystring: z.object({ ...pageQuery, ...readParameters }) },
    handler: async (request, reply) => answer(request, reply, reads.inventory, async (db) => pageOf(await heterogeneityReport(db), request.query.cursor, request.query.limit)),
  });

  app.get('/v1/inventory/firmware/:component', {
    config: access,
    schema: {
      tags,
      summary: 'node counts per running version of one firmware component',
      params: z.object({ component: z.string().min(1).max(200) }),
      querystring: z.object({ ...pageQuery, ...readParameters }),
    },
    handler: async (request, reply) => answer(request, reply, reads.inventory, async (db) => pageOf(await firmwareVersions(db, request.params.component), request.query.cursor, request.query.limit)),
  });

  app.get('/v1/drift', {
    config: access,
    schema: {
      tags,
      summary: 'fields that differ from the EBOM declaration, oldest first',
      querystring: z.object({ ...pageQuery, nodeId: nodeIdSchema.optional(), kind: z.enum(['missing', 'unexpected', 'mismatch']).optional(), ...readParameters }),
    },
    handler: async (request, reply) =>
      answer(request, reply, reads.drift, async (db) => {
        const { nodeId, kind, cursor, limit } = request.query;
        return pageOf(await driftFindings(db, { ...(nodeId ? { nodeId } : {}), ...(kind ? { kind } : {}) }), cursor, limit);
      }),
  });

  app.get('/v1/compliance', {
    config: access,
    schema: { tags, summary: 'firmware compliance per component: at baseline, above, below, unknown', querystring: z.object({ ...pageQuery, ...readParameters }) },
    handler: async (request, reply) => answer(request, reply, reads.compliance, async (db) => pageOf(await complianceSummary(db), request.query.cursor, request.query.limit)),
  });

  app.get('/v1/compliance/certificates', {
    config: access,
    schema: {
      tags,
      summary: 'BMC certificates that have expired or expire within `withinDays` (default 30), soonest first',
      querystring: z.object({ ...pageQuery, withinDays: z.coerce.number().int().min(0).max(36_500).default(30), ...readParameters }),
    },
    handler: async (request, reply) =>
      answer(request, reply, reads.inventory, async (db) => pageOf(await certificateFindings(db, new Date(), request.query.withinDays), request.query.cursor, request.query.limit)),
  });

  app.get('/v1/compliance/nodes', {
    config: access,
    schema: {
      tags,
      summary: "each node's firmware against its own declared baseline",
      querystring: z.object({ ...pageQuery, component: z.string().min(1).max(200).optional(), status: z.enum(['at-baseline', 'above', 'below', 'unknown']).optional(), ...readParameters }),
    },
    handler: async (request, reply) =>
      answer(request, reply, reads.compliance, async (db) => {
        const { component, status, cursor, limit } = request.query;
        const nodes = (await complianceByNode(db, component)).filter((node) => !status || node.status === status);
        return pageOf(nodes, cursor, limit);
      }),
  });

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
