/**
 * The fleet's history for analysts, auditors and operators: one node's timeline (every event about it in log order,
 * its silences as intervals, its alarms) and what changed between two points of the log (nodes, firmware, dark and
 * recovered, drift, alarms, rollout steps, and every intent with who asked). Points are RFC 3339 instants or log
 * positions; a malformed, future or reversed window is a 400 naming the parameter.
 */
import { z } from 'zod';
import { nodeIdSchema } from '../../../events/index.js';
import type { LivenessOptions } from '../../../projections/index.js';
import { fleetDiff, isHistoryError, nodeTimeline, parsePoint, pointDescription, pointPattern, type FleetDiff, type NodeTimeline, type PointInput } from '../../../replay/history/index.js';
import { ApiError } from '../api-error.js';
import { auditRoles, intentRoles, queryRoles, type ApiContext, type ZodApp } from '../api-context.js';

const access = { access: { roles: [...queryRoles, ...auditRoles, ...intentRoles] } };
const tags = ['history'];

const point = z.string().max(64).regex(pointPattern, `must be ${pointDescription}`);
const instant = z.string().describe('RFC 3339, UTC');
const logPoint = z.object({ position: z.number().int(), at: instant.nullable().describe('the instant the point stands for; null before the first event') });
const logWindow = z.object({ from: logPoint, to: logPoint }).describe('the events at positions (from.position, to.position]');

const alarmRecord = z.object({
  alarmId: z.string(),
  kind: z.string(),
  severity: z.string(),
  nodeId: z.string().nullable(),
  summary: z.string(),
  openedAt: instant,
  openedPosition: z.number().int(),
  closedAt: instant.nullable(),
  acknowledgedBy: z.string().nullable(),
  acknowledgedAt: instant.nullable(),
  acknowledgedPosition: z.number().int().nullable(),
});
const alarmSource = z.object({ available: z.boolean(), throughPosition: z.number().int().nullable(), complete: z.boolean() }).describe('how far the alarms read model had applied the log');

const timelineResponse = z.object({
  nodeId: z.string(),
  window: logWindow,
  known: z.boolean(),
  liveness: z.object({
    status: z.enum(['never-contacted', 'healthy', 'late', 'dark', 'maintenance', 'decommissioned']),
    site: z.string().nullable(),
    rack: z.string().nullable(),
    expectedIntervalS: z.number(),
    lastContactAt: instant.nullable(),
    consecutiveMisses: z.number().int(),
    darkSince: instant.nullable(),
  }),
  entries: z.array(
    z.object({
      position: z.number().int(),
      stream: z.string(),
      type: z.string(),
      family: z.string(),
      recordedAt: instant,
      observedAt: instant.nullable(),
      summary: z.string(),
      actor: z.object({ id: z.string(), role: z.string().nullable() }).optional().describe('who asked, for an intent'),
      polls: z.array(z.object({ work: z.string(), outcome: z.string(), at: instant, latencyMs: z.number() })).optional(),
    }),
  ),
  silences: z.array(
    z.object({
      kind: z.enum(['dark', 'late']),
      from: instant.describe('the last contact before the silence'),
      to: instant.nullable().describe('the contact that ended it; null: still silent at the end of the window'),
      endedBy: z.enum(['contact', 'decommissioned']).nullable(),
      misses: z.number().int(),
      darkAt: instant.nullable(),
      recoveredAt: instant.nullable(),
      durationMs: z.number(),
      positions: z.object({ firstMiss: z.number().int(), dark: z.number().int().nullable(), end: z.number().int().nullable(), recovered: z.number().int().nullable() }),
    }),
  ),
  alarms: z.array(alarmRecord),
  alarmSource,
  counts: z.object({ entries: z.number().int(), intents: z.number().int(), polls: z.number().int(), missedPolls: z.number().int(), silences: z.number().int(), darkSilences: z.number().int(), alarms: z.number().int() }),
  truncated: z.object({ omitted: z.number().int(), nextFrom: z.number().int() }).nullable(),
});

const who = { by: z.string(), role: z.string().nullable() };
const membershipChange = z.object({
  nodeId: z.string(),
  position: z.number().int(),
  at: instant,
  site: z.string().nullable(),
  rack: z.string().nullable(),
  previousSite: z.string().nullable().optional(),
  previousRack: z.string().nullable().optional(),
  reason: z.string().optional(),
  ...who,
});
const darkSpell = z.object({
  nodeId: z.string(),
  site: z.string().nullable(),
  rack: z.string().nullable(),
  lastContactAt: instant.nullable(),
  darkAt: instant,
  darkPosition: z.number().int(),
  endedAt: instant.nullable(),
  endPosition: z.number().int().nullable(),
  endedBy: z.enum(['recovered', 'maintenance', 'decommissioned']).nullable(),
  stillDark: z.boolean(),
  durationMs: z.number(),
});
const driftChange = z.object({ nodeId: z.string(), field: z.string(), kind: z.enum(['missing', 'unexpected', 'mismatch']), declared: z.string().nullable(), observed: z.string().nullable(), position: z.number().int(), at: instant });
const sagaMilestone = z.object({ type: z.string(), subject: z.string(), position: z.number().int(), at: instant, summary: z.string(), by: z.string().nullable() });

const diffResponse = z.object({
  window: logWindow,
  events: z.number().int(),
  counts: z.object({
    joined: z.number().int(),
    left: z.number().int(),
    moved: z.number().int(),
    firmwareChanged: z.number().int(),
    firmwareFirstReads: z.number().int(),
    wentDark: z.number().int(),
    recovered: z.number().int(),
    darkCleared: z.number().int(),
    stillDark: z.number().int(),
    driftOpened: z.number().int(),
    driftClosed: z.number().int(),
    alarmsOpened: z.number().int(),
    alarmsClosed: z.number().int(),
    alarmsAcknowledged: z.number().int(),
    stepsStarted: z.number().int(),
    stepsSucceeded: z.number().int(),
    stepsFailed: z.number().int(),
    stepsHeld: z.number().int(),
    stepsQuarantined: z.number().int(),
    stepOperatorActions: z.number().int(),
    rolloutMilestones: z.number().int(),
    provisioning: z.number().int(),
    intents: z.number().int(),
  }),
  joined: z.array(membershipChange),
  left: z.array(membershipChange),
  moved: z.array(membershipChange),
  firmwareChanged: z.array(
    z.object({
      nodeId: z.string(),
      component: z.string(),
      from: z.string().nullable(),
      to: z.string().nullable(),
      fromNormalized: z.string().nullable(),
      toNormalized: z.string().nullable(),
      position: z.number().int(),
      observedAt: instant,
    }),
  ),
  wentDark: z.array(darkSpell),
  recovered: z.array(darkSpell),
  darkCleared: z.array(darkSpell),
  driftOpened: z.array(driftChange),
  driftClosed: z.array(driftChange),
  alarmsOpened: z.array(alarmRecord),
  alarmsClosed: z.array(alarmRecord),
  alarmsAcknowledged: z.array(
    z.object({ alarmId: z.string(), position: z.number().int(), at: instant, ...who, note: z.string().nullable(), kind: z.string().nullable(), summary: z.string().nullable(), nodeId: z.string().nullable() }),
  ),
  alarmSource,
  rolloutSteps: z.array(
    z.object({
      change: z.enum(['started', 'succeeded', 'failed', 'held', 'quarantined', 'operator-action']),
      rolloutId: z.string().nullable(),
      nodeId: z.string().nullable(),
      component: z.string().nullable(),
      targetVersion: z.string().nullable(),
      position: z.number().int(),
      at: instant,
      summary: z.string(),
      by: z.string().nullable(),
    }),
  ),
  rolloutMilestones: z.array(sagaMilestone),
  provisioning: z.array(sagaMilestone),
  intents: z.array(z.object({ position: z.number().int(), at: instant, stream: z.string(), type: z.string(), ...who, nodeId: z.string().nullable(), summary: z.string() })),
  truncated: z.array(z.string()).describe('lists cut at `limit` (their counts are whole)'),
});

// The answers are the library's own types: a field added there and not here (or the reverse) does not compile.
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : never) : never;
const timelineMatches: Same<z.infer<typeof timelineResponse>, NodeTimeline> = true;
const diffMatches: Same<z.infer<typeof diffResponse>, FleetDiff> = true;
void timelineMatches;
void diffMatches;

/** A bound as the library takes it; a refused one answers 400 naming the parameter. */
function pointOf(parameter: 'from' | 'to', text: string | undefined): PointInput | undefined {
  return text === undefined ? undefined : parsePoint(parameter, text);
}

/** Runs a history question, turning a refused window into a 400 that names the parameter at fault. */
async function answering<T>(run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    if (isHistoryError(error)) {
      throw new ApiError('API_INVALID_REQUEST', { field: `querystring.${error.details.parameter}`, reason: error.message }, error.message);
    }
    throw error;
  }
}

export interface HistoryRouteOptions {
  /** The liveness rule's thresholds; they must be the liveness projection's (default: its defaults). */
  liveness?: Partial<LivenessOptions>;
}

export function historyRoutes(app: ZodApp, ctx: ApiContext, options: HistoryRouteOptions = {}): void {
  app.get('/v1/history/nodes/:nodeId/timeline', {
    config: access,
    schema: {
      tags,
      summary: "one node's history in log order: every event about it (intents with who asked), its silences as intervals, its alarms",
      params: z.object({ nodeId: nodeIdSchema }),
      querystring: z.object({
        from: point.optional().describe(`start of the window (exclusive): ${pointDescription}; default the beginning of the log`),
        to: point.optional().describe(`end of the window (inclusive): ${pointDescription}; default the head`),
        limit: z.coerce.number().int().min(1).max(50_000).default(10_000).describe('most entries; past it, ask again from `truncated.nextFrom`'),
      }),
      response: { 200: timelineResponse },
    },
    handler: async (request) => {
      const { from, to, limit } = request.query;
      const timeline = await answering(() => {
        const window = { from: pointOf('from', from), to: pointOf('to', to) };
        return nodeTimeline(ctx.store, request.params.nodeId, {
          ...(window.from ? { from: window.from } : {}),
          ...(window.to ? { to: window.to } : {}),
          ...(options.liveness ? { liveness: options.liveness } : {}),
          maxEntries: limit,
          now: ctx.now(),
        });
      });
      if (!timeline.known) throw new ApiError('API_NOT_FOUND', { resource: 'node', id: request.params.nodeId }, `the log has nothing about node ${request.params.nodeId} up to position ${timeline.window.to.position}`);
      return timeline;
    },
  });

  app.get('/v1/history/diff', {
    config: access,
    schema: {
      tags,
      summary: 'what changed between two points of the log: nodes joined, left or moved, firmware, dark and recovered, drift, alarms, rollout steps, intents with who asked',
      querystring: z.object({
        from: point.describe(`start of the window (exclusive): ${pointDescription}`),
        to: point.optional().describe(`end of the window (inclusive): ${pointDescription}; default the head`),
        limit: z.coerce.number().int().min(1).max(100_000).default(10_000).describe('most items per list (counts are whole)'),
      }),
      response: { 200: diffResponse },
    },
    handler: async (request) => {
      const { from, to, limit } = request.query;
      return answering(() => {
        const toPoint = pointOf('to', to);
        return fleetDiff(ctx.store, {
          from: pointOf('from', from)!,
          ...(toPoint ? { to: toPoint } : {}),
          ...(options.liveness ? { liveness: options.liveness } : {}),
          maxItems: limit,
          now: ctx.now(),
        });
      });
    },
  });
}
