/**
 * Credential rotations: preview (appends nothing), request (freezes the plan), the operator verbs (approve, pause,
 * resume, abort, skip a BMC) and the views. Every verb is one event with the principal who asked and a reason, and
 * may carry the revision the operator saw (`expectedRevision`; a stale one is refused with 409). The rotation engine
 * (`sagas/engine/rotation-engine.ts`, run by the saga supervisor of `fleet-ledger start`) does the work. No secret
 * ever passes here: versions and digests only.
 */
import { z } from 'zod';
import { nodeIdSchema, rotationIdSchema } from '../../../events/index.js';
import {
  applyRotationVerb,
  loadCredentialStep,
  loadRotation,
  previewRotation,
  requestRotation,
  rotationCandidates,
  rotationSummary,
  SagaError,
  type RotationRequest,
  type RotationState,
} from '../../../sagas/index.js';
import { ApiError } from '../api-error.js';
import { operatorActor } from '../authorization-policy.js';
import type { Principal } from '../tokens.js';
import { intentRoles, queryRoles, type ApiContext, type ZodApp } from '../api-context.js';

const list = z.array(z.string().min(1).max(200)).max(10_000).optional();
const requestBody = z.object({
  selector: z.object({ sites: list, racks: list, vendors: list, models: list, nodes: list, credentialRefs: list, latchedOnly: z.boolean().optional() }).default({}),
  seed: z.number().int().optional(),
  canaryFraction: z.number().min(0).max(1).optional(),
  waveFractions: z.array(z.number().min(0).max(1)).max(20).optional(),
  capPerSite: z.number().int().min(1).max(100_000).optional(),
  inFlightDomainLimits: z.object({ rack: z.number().int().min(1).optional(), pdu: z.number().int().min(1).optional(), tor: z.number().int().min(1).optional(), cdu: z.number().int().min(1).optional() }).optional(),
  budgets: z.object({ canaryFailures: z.number().int().min(0).optional(), waveFailureRatio: z.number().min(0).max(1).optional(), cumulativeFailureRatio: z.number().min(0).max(1).optional() }).optional(),
  bakeMs: z.number().int().min(0).optional(),
  fenceGraceMs: z.number().int().min(0).max(600_000).optional(),
  lockoutThreshold: z.number().int().min(2).max(20).optional(),
  retryBudget: z.number().int().min(0).max(5).optional(),
  stepDeadlineMs: z.number().int().min(1).optional(),
  factoryFallback: z.object({ credentialRef: z.string().min(1).max(200) }).nullable().optional(),
  retireOld: z.boolean().optional(),
  approvalsRequired: z.number().int().min(1).max(2).optional(),
});
const verbBody = z.object({ reason: z.string().min(1).max(500), expectedRevision: z.number().int().min(0).optional() });
const rotationParams = z.object({ rotationId: rotationIdSchema });
const summarySchema = z.record(z.string(), z.unknown());

function toApiError(error: unknown): never {
  if (error instanceof SagaError) {
    if (error.code === 'SAGA_NOT_FOUND') throw new ApiError('API_NOT_FOUND', { resource: 'rotation', id: String(error.details['rotationId'] ?? error.details['rolloutId'] ?? error.details['nodeId'] ?? '') }, error.message);
    if (error.code === 'SAGA_INVALID_REQUEST') throw new ApiError('API_INVALID_REQUEST', { field: 'selector', reason: error.message }, error.message);
    throw new ApiError('API_CONFLICT', { reason: error.code, ...(typeof error.details['status'] === 'string' ? { status: error.details['status'] } : {}) }, error.message);
  }
  throw error;
}

export function rotationRoutes(app: ZodApp, ctx: ApiContext): void {
  const tags = ['credential rotations'];
  const operator = { access: { roles: intentRoles } };
  const reader = { access: { roles: [...intentRoles, ...queryRoles] } };
  const toRequest = (body: z.output<typeof requestBody>): RotationRequest => ({ ...body, seed: body.seed ?? Math.floor(Math.random() * 2 ** 31) }) as RotationRequest;
  const actorOf = (request: { principal: Principal | null }) => operatorActor(request.principal!);

  app.post('/v1/credential-rotations/preview', {
    config: operator,
    schema: { tags, summary: 'plan a credential rotation without starting it (appends nothing)', body: requestBody, response: { 200: summarySchema } },
    handler: async (request) => {
      const plan = previewRotation(toRequest(request.body), await rotationCandidates(ctx.db));
      return { ...plan, targets: plan.targets.slice(0, 500), targetCount: plan.targets.length };
    },
  });

  app.post('/v1/credential-rotations', {
    config: operator,
    schema: { tags, summary: 'request a credential rotation: the plan is frozen (CredentialRotationPlanned) and awaits approval', body: requestBody.extend({ rotationId: rotationIdSchema.optional() }), response: { 201: summarySchema } },
    handler: async (request, reply) => {
      const rotationId = request.body.rotationId ?? `rot-${new Date().toISOString().slice(0, 10)}-${Math.random().toString(36).slice(2, 8)}`;
      const plan = previewRotation(toRequest(request.body), await rotationCandidates(ctx.db));
      try {
        const state = await requestRotation(ctx.store, rotationId, plan, actorOf(request));
        reply.code(201);
        return { ...rotationSummary(state), excludedNodes: plan.excluded.slice(0, 100) };
      } catch (error) {
        return toApiError(error);
      }
    },
  });

  const verbs: Array<{ verb: 'approve' | 'pause' | 'resume' | 'abort'; summary: string }> = [
    { verb: 'approve', summary: 'approve (two distinct principals when the plan asks for two)' },
    { verb: 'pause', summary: 'stop dispatch; BMCs in flight run to a safe point' },
    { verb: 'resume', summary: 'resume a paused or halted rotation, acknowledging why it stopped' },
    { verb: 'abort', summary: 'final: no BMC is dispatched again' },
  ];
  for (const entry of verbs) {
    app.post(`/v1/credential-rotations/:rotationId/${entry.verb}`, {
      config: operator,
      schema: { tags, summary: entry.summary, params: rotationParams, body: verbBody, response: { 200: summarySchema } },
      handler: async (request) => {
        try {
          return rotationSummary(await applyRotationVerb(ctx.store, request.params.rotationId, { verb: entry.verb, reason: request.body.reason }, actorOf(request), request.body.expectedRevision));
        } catch (error) {
          return toApiError(error);
        }
      },
    });
  }

  app.post('/v1/credential-rotations/:rotationId/nodes/:nodeId/skip', {
    config: operator,
    schema: { tags, summary: 'skip one BMC not yet dispatched', params: rotationParams.extend({ nodeId: nodeIdSchema }), body: verbBody, response: { 200: summarySchema } },
    handler: async (request) => {
      try {
        return rotationSummary(await applyRotationVerb(ctx.store, request.params.rotationId, { verb: 'skip', nodeId: request.params.nodeId, reason: request.body.reason }, actorOf(request), request.body.expectedRevision));
      } catch (error) {
        return toApiError(error);
      }
    },
  });

  app.get('/v1/credential-rotations', {
    config: reader,
    schema: { tags, summary: 'every credential rotation with its status and counts', response: { 200: z.object({ items: z.array(summarySchema) }) } },
    handler: async () => {
      const streams = (await ctx.db.selectFrom('ledger_streams').select('stream').where('stream', 'like', 'rotation-%').orderBy('stream').execute()) as Array<{ stream: string }>;
      const items = [];
      for (const { stream } of streams) {
        try {
          items.push(rotationSummary(await loadRotation(ctx.store, stream.slice('rotation-'.length))));
        } catch {
          // a stream that holds no plan is not a rotation
        }
      }
      return { items };
    },
  });

  /** One rotation with every BMC's wave and outcome, or its step's state while in flight, and its holds. */
  async function rotationDetail(state: RotationState): Promise<Record<string, unknown>> {
    const nodes = [];
    for (const target of state.plan!.targets) {
      const outcome = state.outcomes.get(target.nodeId)?.outcome;
      let stepState: string | null = null;
      let hold: string | null = null;
      let cause: string | null = null;
      if ((!outcome && state.dispatched.has(target.nodeId)) || outcome === 'held' || outcome === 'kept') {
        const step = await loadCredentialStep(ctx.store, state.rotationId, target.nodeId);
        stepState = step.phase;
        hold = step.hold ?? null;
        cause = step.phase === 'held' ? (step.cause ?? null) : null;
      }
      nodes.push({ nodeId: target.nodeId, wave: target.wave, rack: target.rack, credentialRef: target.credentialRef, fromVersion: target.fromVersion, state: outcome ?? stepState ?? 'pending', hold, ...(cause ? { cause } : {}) });
    }
    return { ...rotationSummary(state), nodes };
  }

  app.get('/v1/credential-rotations/:rotationId', {
    config: reader,
    schema: { tags, summary: 'one rotation: waves, and every BMC with its wave, outcome or step state, and its hold', params: rotationParams, response: { 200: summarySchema } },
    handler: async (request) => {
      try {
        return await rotationDetail(await loadRotation(ctx.store, request.params.rotationId));
      } catch (error) {
        return toApiError(error);
      }
    },
  });
}
