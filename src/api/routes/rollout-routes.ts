/**
 * Firmware rollouts: preview (appends nothing), request (freezes the plan), the operator verbs, and the views.
 * Every verb is one event with the principal who asked, a reason, and optionally the revision the operator saw
 * (`expectedRevision`; a stale one is refused with 409). The rollout engine (`sagas/engine`) does the work.
 */
import { z } from 'zod';
import { firmwareImageSchema, nodeIdSchema, rolloutIdSchema, stepTimingSchema } from '../../../events/index.js';
import {
  applyRolloutVerb,
  fleetCandidates,
  loadRollout,
  previewRollout,
  requestRollout,
  rolloutSummary,
  SagaError,
  loadStepState,
  planWarnings,
  startProvisioning,
  releaseQuarantine,
  abandonProvisioning,
  loadProvision,
  provisionSummary,
  type RolloutRequest,
  type RolloutState,
  type RolloutVerb,
  type StepState,
} from '../../../sagas/index.js';
import { ApiError } from '../api-error.js';
import { operatorActor } from '../authorization-policy.js';
import type { Principal } from '../tokens.js';
import { intentRoles, queryRoles, type ApiContext, type ZodApp } from '../api-context.js';
import { asOfAnswerSchema, asOfParameter, asOfPoint, stateAsOf } from './query-routes.js';

const list = z.array(z.string().min(1).max(200)).max(10_000).optional();
const limits = z.object({ rack: z.number().int().min(1).optional(), pdu: z.number().int().min(1).optional(), tor: z.number().int().min(1).optional(), cdu: z.number().int().min(1).optional() });
const requestBody = z.object({
  firmware: firmwareImageSchema,
  selector: z.object({ sites: list, racks: list, vendors: list, models: list, nodes: list, fromVersions: list }).default({}),
  seed: z.number().int().optional(),
  canaryFraction: z.number().min(0).max(1).optional(),
  waveFractions: z.array(z.number().min(0).max(1)).max(20).optional(),
  capPerSite: z.number().int().min(1).max(100_000).optional(),
  inFlightDomainLimits: limits.optional(),
  waveDomainLimits: limits.optional(),
  budgets: z.object({ canaryFailures: z.number().int().min(0).optional(), waveFailureRatio: z.number().min(0).max(1).optional(), cumulativeFailureRatio: z.number().min(0).max(1).optional() }).optional(),
  bakeMs: z.number().int().min(0).optional(),
  verifyReads: z.number().int().min(1).max(20).optional(),
  retryBudget: z.number().int().min(0).max(10).optional(),
  stepDeadlineMs: z.number().int().min(1).optional(),
  quietPeriodMs: z.number().int().min(0).optional(),
  approvalsRequired: z.number().int().min(1).max(2).optional(),
  gate: z.object({ maxLagPositions: z.number().int().min(0).optional(), maxLagMs: z.number().int().min(0).optional(), autoAdvance: z.boolean().optional() }).optional(),
  /** The node step's pace (task reads, version reads, probes, settle, back-off, a BMC request's deadline). */
  stepTiming: stepTimingSchema.optional(),
});
const verbBody = z.object({ reason: z.string().min(1).max(500), expectedRevision: z.number().int().min(0).optional() });
const rolloutParams = z.object({ rolloutId: rolloutIdSchema });
const summarySchema = z.record(z.string(), z.unknown());

function toApiError(error: unknown): never {
  if (error instanceof SagaError) {
    if (error.code === 'SAGA_NOT_FOUND') throw new ApiError('API_NOT_FOUND', { resource: 'rollout', id: String(error.details['rolloutId'] ?? error.details['nodeId'] ?? '') }, error.message);
    if (error.code === 'SAGA_INVALID_REQUEST') throw new ApiError('API_INVALID_REQUEST', { field: 'selector', reason: error.message }, error.message);
    throw new ApiError('API_CONFLICT', { reason: error.code, ...(typeof error.details['status'] === 'string' ? { status: error.details['status'] } : {}) }, error.message);
  }
  throw error;
}

export function rolloutRoutes(app: ZodApp, ctx: ApiContext): void {
  rolloutCommandRoutes(app, ctx);
  rolloutViewRoutes(app, ctx);
}

/** Preview (appends nothing), request (freezes the plan), and the operator verbs on a rollout and on one of its nodes. */
function rolloutCommandRoutes(app: ZodApp, ctx: ApiContext): void {
  const tags = ['rollouts'];
  const operator = { access: { roles: intentRoles } };
  const toRequest = (body: z.output<typeof requestBody>): RolloutRequest => ({ ...body, seed: body.seed ?? Math.floor(Math.random() * 2 ** 31) }) as RolloutRequest;

  app.post('/v1/rollouts/preview', {
    config: operator,
    schema: { tags, summary: 'plan a rollout without starting it (appends nothing)', body: requestBody, response: { 200: summarySchema } },
    handler: async (request) => {
      const plan = previewRollout(toRequest(request.body), await fleetCandidates(ctx.db, request.body.firmware.component));
      return { ...plan, targets: plan.targets.slice(0, 500), targetCount: plan.targets.length, warnings: planWarnings(plan) };
    },
  });

  app.post('/v1/rollouts', {
    config: operator,
    schema: { tags, summary: 'request a rollout: the plan is frozen in RolloutPlanned and awaits approval', body: requestBody.extend({ rolloutId: rolloutIdSchema.optional() }), response: { 201: summarySchema } },
    handler: async (request, reply) => {
      const principal = request.principal!;
      const rolloutId = request.body.rolloutId ?? `fw-${new Date().toISOString().slice(0, 10)}-${Math.random().toString(36).slice(2, 8)}`;
      const plan = previewRollout(toRequest(request.body), await fleetCandidates(ctx.db, request.body.firmware.component));
      try {
        await requestRollout(ctx.store, rolloutId, plan, operatorActor(principal));
        reply.code(201);
        return { ...rolloutSummary(await loadRollout(ctx.store, rolloutId)), warnings: planWarnings(plan) };
      } catch (error) {
        return toApiError(error);
      }
    },
  });

  const verbs: Array<{ path: string; verb: 'approve' | 'pause' | 'resume' | 'abort' | 'advance'; summary: string }> = [
    { path: 'advance', verb: 'advance', summary: 'open the next wave after a passed gate (plans without automatic advance)' },
    { path: 'approve', verb: 'approve', summary: 'approve (two distinct principals when the plan asks for two)' },
    { path: 'pause', verb: 'pause', summary: 'stop dispatch; nodes in flight run to a safe point' },
    { path: 'resume', verb: 'resume', summary: 'resume a paused or halted rollout, acknowledging why it stopped' },
    { path: 'abort', verb: 'abort', summary: 'final: nothing more is dispatched; recovery is a new rollout' },
  ];
  for (const entry of verbs) {
    app.post(`/v1/rollouts/:rolloutId/${entry.path}`, {
      config: operator,
      schema: { tags, summary: entry.summary, params: rolloutParams, body: verbBody, response: { 200: summarySchema } },
      handler: async (request) => {
        const principal = request.principal!;
        try {
          const state = await applyRolloutVerb(ctx.store, request.params.rolloutId, { verb: entry.verb, reason: request.body.reason } as RolloutVerb, operatorActor(principal), request.body.expectedRevision);
          return rolloutSummary(state);
        } catch (error) {
          return toApiError(error);
        }
      },
    });
  }

  app.post('/v1/rollouts/:rolloutId/cap', {
    config: operator,
    schema: { tags, summary: 'tighten the cap live (never loosened without a new plan)', params: rolloutParams, body: verbBody.extend({ cap: z.number().int().min(1) }), response: { 200: summarySchema } },
    handler: async (request) => {
      const principal = request.principal!;
      try {
        return rolloutSummary(await applyRolloutVerb(ctx.store, request.params.rolloutId, { verb: 'tighten-cap', cap: request.body.cap, reason: request.body.reason }, operatorActor(principal), request.body.expectedRevision));
      } catch (error) {
        return toApiError(error);
      }
    },
  });

  app.post('/v1/rollouts/:rolloutId/nodes/:nodeId/:action', {
    config: operator,
    schema: { tags, summary: 'retry, skip, release (give back its slot) or quarantine one node', params: rolloutParams.extend({ nodeId: nodeIdSchema, action: z.enum(['retry', 'skip', 'release', 'quarantine']) }), body: verbBody, response: { 200: summarySchema } },
    handler: async (request) => {
      const principal = request.principal!;
      try {
        return rolloutSummary(await applyRolloutVerb(ctx.store, request.params.rolloutId, { verb: 'node', nodeId: request.params.nodeId, action: request.params.action, reason: request.body.reason }, operatorActor(principal), request.body.expectedRevision));
      } catch (error) {
        return toApiError(error);
      }
    },
  });
}

/** The rollouts as they stand: every one (as of a point of the log too), and one with its steps. */
function rolloutViewRoutes(app: ZodApp, ctx: ApiContext): void {
  const tags = ['rollouts'];
  const reader = { access: { roles: [...intentRoles, ...queryRoles] } };

  app.get('/v1/rollouts', {
    config: reader,
    schema: {
      tags,
      summary: 'every rollout with its status and counts (asOf: as they stood at that point of the log)',
      querystring: z.object({ asOf: asOfParameter }),
      response: { 200: z.object({ items: z.array(summarySchema), asOf: asOfAnswerSchema.optional() }) },
    },
    handler: async (request, reply) => {
      if (request.query.asOf !== undefined) {
        const { engine, point } = await asOfPoint(ctx, request.query.asOf);
        const items = (await engine.rollouts(point)).map(rolloutSummary);
        return { items, asOf: stateAsOf(reply, point) };
      }
      const streams = await ctx.db.selectFrom('ledger_streams').select('stream').where('stream', 'like', 'rollout-%').orderBy('stream').execute();
      const items = [];
      for (const { stream } of streams as Array<{ stream: string }>) {
        try {
          items.push(rolloutSummary(await loadRollout(ctx.store, stream.slice('rollout-'.length))));
        } catch {
          // a stream that holds no plan is not a rollout
        }
      }
      return { items };
    },
  });

  /** One rollout with every node's wave and outcome, or its step's phase while in flight (`stepOf` reads the step). */
  async function rolloutDetail(state: RolloutState, stepOf: (nodeId: string) => Promise<StepState>): Promise<Record<string, unknown>> {
    const nodes = [];
    for (const target of state.plan!.targets) {
      const outcome = state.outcomes.get(target.nodeId)?.outcome;
      let phase: string | null = null;
      let hold: string | null = null;
      let cause: string | null = null;
      if (!outcome && state.dispatched.has(target.nodeId)) {
        const step = await stepOf(target.nodeId);
        phase = step.phase;
        hold = step.hold ?? null;
        cause = step.phase === 'held' ? (step.cause ?? null) : null;
      }
      nodes.push({ nodeId: target.nodeId, wave: target.wave, rack: target.rack, fromVersion: target.fromVersion, state: outcome ?? phase ?? 'pending', hold, ...(cause ? { cause } : {}) });
    }
    return { ...rolloutSummary(state), nodes };
  }

  app.get('/v1/rollouts/:rolloutId', {
    config: reader,
    schema: {
      tags,
      summary: 'one rollout: waves, gates, and every node with its wave, outcome or step phase (asOf: as it stood at that point of the log)',
      params: rolloutParams,
      querystring: z.object({ asOf: asOfParameter }),
      response: { 200: summarySchema },
    },
    handler: async (request, reply) => {
      const { rolloutId } = request.params;
      if (request.query.asOf !== undefined) {
        const { engine, point } = await asOfPoint(ctx, request.query.asOf);
        const state = await engine.rollout(point, rolloutId);
        if (!state) throw new ApiError('API_NOT_FOUND', { resource: 'rollout', id: rolloutId }, `no rollout ${rolloutId} as of position ${point.position}`);
        return { ...(await rolloutDetail(state, (nodeId) => engine.rolloutStep(point, rolloutId, nodeId))), asOf: stateAsOf(reply, point) };
      }
      try {
        const state = await loadRollout(ctx.store, rolloutId);
        return await rolloutDetail(state, (nodeId) => loadStepState(ctx.store, state.rolloutId, nodeId));
      } catch (error) {
        return toApiError(error);
      }
    },
  });
}

const provisionBody = z.object({
  nodeId: nodeIdSchema,
  declared: z.object({ manufacturer: z.string().max(200).optional(), model: z.string().max(200).optional(), cpuCount: z.number().int().min(0).optional(), gpuCount: z.number().int().min(0).optional(), memoryGiB: z.number().min(0).optional() }).default({}),
  baseline: z.array(firmwareImageSchema).max(20).default([]),
  burnInMs: z.number().int().min(0).max(30 * 86_400_000).default(3_600_000),
  burnInIntervalMs: z.number().int().min(100).max(3_600_000).optional(),
});

/** Provisioning: start (a registered node), release from quarantine at a named stage, abandon, and the views. */
export function provisioningRoutes(app: ZodApp, ctx: ApiContext): void {
  const tags = ['provisioning'];
  const operator = { access: { roles: intentRoles } };
  const reader = { access: { roles: [...intentRoles, ...queryRoles] } };
  const nodeParams = z.object({ nodeId: nodeIdSchema });
  const actorOf = (request: { principal: Principal | null }) => operatorActor(request.principal!);

  app.post('/v1/provisioning', {
    config: operator,
    schema: { tags, summary: 'start provisioning a registered node (ProvisioningStarted)', body: provisionBody, response: { 201: summarySchema } },
    handler: async (request, reply) => {
      try {
        const state = await startProvisioning(ctx.store, request.body, actorOf(request));
        reply.code(201);
        return provisionSummary(state);
      } catch (error) {
        return toApiError(error);
      }
    },
  });

  app.post('/v1/provisioning/:nodeId/release', {
    config: operator,
    schema: { tags, summary: 'release a quarantined node to re-enter at a named stage', params: nodeParams, body: z.object({ reason: z.string().min(1).max(500), resumeAt: z.enum(['registering', 'inventorying', 'validating', 'baselining', 'burn-in']) }), response: { 200: summarySchema } },
    handler: async (request) => {
      try {
        return provisionSummary(await releaseQuarantine(ctx.store, request.params.nodeId, request.body.resumeAt, request.body.reason, actorOf(request)));
      } catch (error) {
        return toApiError(error);
      }
    },
  });

  app.post('/v1/provisioning/:nodeId/abandon', {
    config: operator,
    schema: { tags, summary: 'final: the node will not be provisioned', params: nodeParams, body: z.object({ reason: z.string().min(1).max(500) }), response: { 200: summarySchema } },
    handler: async (request) => {
      try {
        return provisionSummary(await abandonProvisioning(ctx.store, request.params.nodeId, request.body.reason, actorOf(request)));
      } catch (error) {
        return toApiError(error);
      }
    },
  });

  app.get('/v1/provisioning', {
    config: reader,
    schema: { tags, summary: 'every node being provisioned, with its stage', response: { 200: z.object({ items: z.array(summarySchema) }) } },
    handler: async () => {
      const streams = (await ctx.db.selectFrom('ledger_streams').select('stream').where('stream', 'like', 'provision-%').orderBy('stream').execute()) as Array<{ stream: string }>;
      const items = [];
      for (const { stream } of streams) items.push(provisionSummary(await loadProvision(ctx.store, stream.slice('provision-'.length))));
      return { items };
    },
  });

  app.get('/v1/provisioning/:nodeId', {
    config: reader,
    schema: { tags, summary: "one node's provisioning", params: nodeParams, response: { 200: summarySchema } },
    handler: async (request) => {
      const state = await loadProvision(ctx.store, request.params.nodeId);
      if (state.stage === 'none') throw new ApiError('API_NOT_FOUND', { resource: 'provisioning', id: request.params.nodeId }, `node ${request.params.nodeId} is not being provisioned`);
      return provisionSummary(state);
    },
  });
}
