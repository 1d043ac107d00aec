/**
 * What every query route shares: the `asOf` and `minPosition` parameters, the answer from the live read models or as of a point, and the rows as the API words them. Queries for analysts: the read models of `projections/`, every list cursor-paged. Routes the dashboard
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
import { instantSchema } from '../../../events/index.js';
import { asOfDescription, isAsOfError, isPointError, type AsOfEngine, type AsOfPoint } from '../../../replay/as-of/index.js';
import { ApiError } from '../api-error.js';
import { queryRoles, type ApiContext } from '../api-context.js';
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
export const reads = {
  node: ['liveness', 'inventory', 'drift', 'alarms'],
  liveness: ['liveness'],
  inventory: ['inventory'],
  drift: ['drift'],
  // Compliance owns no table: it reads the drift read model (declared baselines and observed versions).
  compliance: ['drift'],
  alarms: ['alarms'],
} as const satisfies Record<string, readonly string[]>;

export const access = { access: { roles: queryRoles, queryToken: true } };
export const livenessStates = ['never-contacted', 'healthy', 'late', 'dark', 'maintenance', 'decommissioned'] as const;

function secondsSince(now: Date, at: Date | null): number | null {
  return at === null ? null : Math.max(0, (now.getTime() - new Date(at).getTime()) / 1000);
}

/**
 * The time since last contact, where the answer has the last contact: as of a point of the past it does not (history
 * does not keep what every poll changes), and the answer leaves out what it cannot state exactly.
 */
export function sinceLastContact(now: Date, node: { lastContactAt?: Date | null }): { secondsSinceLastContact?: number | null } {
  return node.lastContactAt === undefined ? {} : { secondsSinceLastContact: secondsSince(now, node.lastContactAt) };
}

export function livenessRow(row: any, now: Date) {
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

export function inventoryRow(row: any) {
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


/** What a query route calls to answer: `answer(request, reply, projections, query)` (see `queryAnswerer`). */
export type QueryAnswer = ReturnType<typeof queryAnswerer>;

export function queryAnswerer(ctx: ApiContext) {
  /**
   * Answers a query from the live read models, or, with `asOf`, from the read models of `projections` as of that
   * point (the answer then says which point it reflects). `query` gets the database to read and the instant "now"
   * stands for. With a read replica, a live answer is read there (or on the primary when the replica has not reached
   * `minPosition`) and says which copy answered, the position it reflects and the replica's lag (`readFrom`).
   */
  return async function answer<T extends object>(
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
  };
}
