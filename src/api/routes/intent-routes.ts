/**
 * Operator intents: each validated, decided from the state of its stream, and answered with a position.
 *
 * Every intent goes through its decider (`nodeDecider`, `alarmAckDecider`, `registrationDecider`, `topologyDecider`)
 * and the one engine shell (`handleCommand`): an intent that changes something records one event with the principal
 * who asked (`201`); one that changes nothing (cordon a cordoned node, clear a latch that is not there, ack an acked
 * alarm, register a node again as it is registered, declare a rack's topology again) records nothing and is answered
 * `200` with `unchanged: true` and the position since which things have been so. An EBOM import is decided by its
 * import id (the same file again is `200`, `idempotentReplay`).
 * An `Idempotency-Key` makes a retry return the original position (the event id derives from principal, key and
 * route, and the store's idempotent append writes nothing the second time).
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import {
  assertNever,
  bmcEndpointSchema,
  certificateSummarySchema,
  instantSchema,
  nodeIdSchema,
  siteIdSchema,
  type FleetEvent,
  type ProposedEvent,
} from '../../../events/index.js';
import { nameUuid, type ExpectedVersion } from '../../ledger/index.js';
import { alarmById } from '../../../projections/index.js';
import { alarmAckDecider, eventOfNodeIntent, handleCommand, nodeDecider, nodeStream, type CommandOutcome, type Decider, type NodeIntent } from '../../../sagas/index.js';
import { ApiError } from '../api-error.js';
import { intentRoles, type ApiContext, type ZodApp } from '../api-context.js';
import { alarmStream, appendRefusal, operatorActor } from '../authorization-policy.js';
import { registrationDecider } from '../intent-deciders/registration-decide.js';
import { topologyDecider } from '../intent-deciders/topology-decide.js';


export const intentResult = z.object({
  position: z.number().int(),
  stream: z.string(),
  streamVersion: z.number().int(),
  idempotentReplay: z.boolean(),
  /** True when the intent changed nothing and nothing was recorded: `position` is where things came to be so. */
  unchanged: z.boolean(),
});
type IntentResult = z.output<typeof intentResult>;
export const idempotencyHeaders = z.object({ 'idempotency-key': z.string().min(1).max(200).optional().describe('retrying with the same key returns the original position') });
const nodeParams = z.object({ nodeId: nodeIdSchema });
const reason = z.string().min(1).max(500);
export const intentAccess = { access: { roles: intentRoles } };
const access = intentAccess;
/** 201 when recorded now; 200 when an Idempotency-Key repeats a request already recorded, or nothing changed. */
const intentResponses = { 200: intentResult, 201: intentResult };

/** The principal's event for this request, with the event id its Idempotency-Key derives (if any). */
function proposedIntent(request: FastifyRequest, stream: string, event: { type: string; data: unknown }): ProposedEvent {
  const principal = request.principal!;
  // The route derives the stream itself; asking the policy anyway keeps one answer for every door.
  const refusal = appendRefusal({ principal, type: event.type, stream, data: event.data });
  if (refusal) throw refusal;
  const key = request.headers['idempotency-key'];
  const path = request.url.split('?')[0];
  return {
    // A key asked through the centre is the principal's key at that door: it never replays an intent asked on site.
    ...(typeof key === 'string' ? { eventId: nameUuid(`${principal.id}${principal.via ? `\u0000via ${principal.via}` : ''}\u0000${key}\u0000${request.method} ${path}`) } : {}),
    type: event.type,
    data: event.data,
    actor: operatorActor(principal),
  };
}

/** Appends one intent event for the caller and answers its position (a retry under an Idempotency-Key already recorded). */
async function recordIntent(ctx: ApiContext, request: FastifyRequest, reply: FastifyReply, stream: string, event: { type: string; data: unknown }, expectedVersion: ExpectedVersion = 'any'): Promise<IntentResult> {
  const proposed = proposedIntent(request, stream, event);
  const result = await ctx.timeAppend(() => ctx.store.append(stream, [proposed], { expectedVersion }));
  reply.code(result.idempotentReplay ? 200 : 201);
  return { position: result.positions[0]!, stream, streamVersion: result.nextExpectedVersion, idempotentReplay: result.idempotentReplay, unchanged: false };
}

/**
 * Decides one intent on its stream and records the decision. `event` is what the intent records when it changes
 * something: the policy judges it either way, and a retry under an Idempotency-Key already recorded is answered by the
 * store as before (the original position, or a conflict when the body differs), not decided again.
 */
async function decideIntent<Command, State, Refusal>(
  ctx: ApiContext,
  request: FastifyRequest,
  reply: FastifyReply,
  stream: string,
  decider: Decider<Command, FleetEvent, State, Refusal>,
  command: Command,
  event: { type: string; data: unknown },
  refused: (refusal: Refusal) => never,
): Promise<IntentResult> {
  const proposed = proposedIntent(request, stream, event);
  if (proposed.eventId !== undefined) {
    // Only the intent's own type is read: a node's stream holds every observation of the node.
    const recorded = (await ctx.store.readStream(stream, { types: [event.type], limit: 1_000_000 })).some((existing) => existing.eventId === proposed.eventId);
    if (recorded) return recordIntent(ctx, request, reply, stream, event);
  }
  const outcome: CommandOutcome<State, Refusal> = await handleCommand(ctx.store, stream, decider, command, {
    actor: proposed.actor,
    eventId: () => proposed.eventId,
    append: (name, events, expectedVersion) => ctx.timeAppend(() => ctx.store.append(name, events, { expectedVersion })),
  });
  switch (outcome.kind) {
    case 'recorded':
      reply.code(outcome.idempotentReplay ? 200 : 201);
      return { position: outcome.positions[0]!, stream, streamVersion: outcome.streamVersion, idempotentReplay: outcome.idempotentReplay, unchanged: false };
    case 'unchanged':
      reply.code(200);
      return { position: outcome.position, stream, streamVersion: outcome.streamVersion, idempotentReplay: false, unchanged: true };
    case 'refused':
      return refused(outcome.refusal);
    default:
      return assertNever(outcome, 'intent outcome');
  }
}

/** An intent about a node nobody registered or declared is a missing resource. */
const nodeUnknown = (refusal: { nodeId: string }): never => {
  throw new ApiError('API_NOT_FOUND', { resource: 'stream', id: nodeStream(refusal.nodeId) }, `${nodeStream(refusal.nodeId)} has no events: register or declare the node first`);
};

export function intentRoutes(app: ZodApp, ctx: ApiContext): void {
  const tags = ['intents'];

  app.post('/v1/nodes', {
    config: access,
    schema: {
      tags,
      summary: 'register a node (NodeRegistered)',
      headers: idempotencyHeaders,
      response: intentResponses,
      body: z.object({ nodeId: nodeIdSchema, site: siteIdSchema, rack: z.string().min(1).max(64), bmc: bmcEndpointSchema, expectedIntervalS: z.number().int().min(1).max(86_400).default(60) }),
    },
    handler: (request, reply) => {
      const stream = nodeStream(request.body.nodeId);
      return decideIntent(ctx, request, reply, stream, registrationDecider, request.body, { type: 'NodeRegistered', data: request.body }, (refusal: never) => refusal);
    },
  });

  const simple: Array<{ path: Exclude<NodeIntent['intent'], 'set-maintenance' | 'accept-certificate'>; type: string; reasonRequired: boolean; summary: string }> = [
    { path: 'decommission', type: 'NodeDecommissioned', reasonRequired: true, summary: 'the node leaves the fleet' },
    { path: 'cordon', type: 'NodeCordoned', reasonRequired: true, summary: 'no new work on the node' },
    { path: 'uncordon', type: 'NodeUncordoned', reasonRequired: false, summary: 'the node may receive work again' },
    { path: 'quarantine', type: 'NodeQuarantined', reasonRequired: true, summary: 'the node is kept out of service' },
    { path: 'release', type: 'NodeReleased', reasonRequired: false, summary: 'the node leaves quarantine' },
    { path: 'clear-latch', type: 'LockoutLatchCleared', reasonRequired: true, summary: 'allow BMC logins again after an authentication latch' },
  ];
  for (const intent of simple) {
    app.post(`/v1/nodes/:nodeId/${intent.path}`, {
      config: access,
      schema: {
        tags,
        summary: `${intent.summary} (${intent.type}; nothing recorded when it changes nothing)`,
        params: nodeParams,
        headers: idempotencyHeaders,
        response: intentResponses,
        body: z.object({ reason: intent.reasonRequired ? reason : reason.optional() }),
      },
      handler: (request, reply) => {
        // The schema requires a reason exactly where the event does, so the command is the event's shape.
        const command = { intent: intent.path, nodeId: request.params.nodeId, ...(request.body.reason !== undefined ? { reason: request.body.reason } : {}) } as NodeIntent;
        return decideIntent(ctx, request, reply, nodeStream(request.params.nodeId), nodeDecider, command, eventOfNodeIntent(command), nodeUnknown);
      },
    });
  }

  app.post('/v1/nodes/:nodeId/accept-certificate', {
    config: access,
    schema: {
      tags,
      summary: "accept a BMC's certificate: pinned from now on, a changed-certificate latch lifted (BmcCertificateAccepted; nothing recorded when it is pinned already)",
      params: nodeParams,
      headers: idempotencyHeaders,
      response: intentResponses,
      body: z.object({ fingerprint: certificateSummarySchema.shape.fingerprint, reason }),
    },
    handler: (request, reply) => {
      const command: NodeIntent = { intent: 'accept-certificate', nodeId: request.params.nodeId, fingerprint: request.body.fingerprint, reason: request.body.reason };
      return decideIntent(ctx, request, reply, nodeStream(request.params.nodeId), nodeDecider, command, eventOfNodeIntent(command), nodeUnknown);
    },
  });

  app.post('/v1/nodes/:nodeId/maintenance', {
    config: access,
    schema: {
      tags,
      summary: 'set a maintenance window (MaintenanceWindowSet; nothing recorded when the same window is set)',
      params: nodeParams,
      headers: idempotencyHeaders,
      response: intentResponses,
      body: z.object({ from: instantSchema, until: instantSchema, reason }).refine((w) => Date.parse(w.until) > Date.parse(w.from), { path: ['until'], message: 'must be after from' }),
    },
    handler: (request, reply) => {
      const command: NodeIntent = { intent: 'set-maintenance', nodeId: request.params.nodeId, ...request.body };
      return decideIntent(ctx, request, reply, nodeStream(request.params.nodeId), nodeDecider, command, eventOfNodeIntent(command), nodeUnknown);
    },
  });

  app.post('/v1/racks/:rack/topology', {
    config: access,
    schema: {
      tags,
      summary: 'declare which PDUs, ToR switches and CDU serve a rack (TopologyDeclared)',
      params: z.object({ rack: z.string().min(1).max(64).regex(/^[A-Za-z0-9][A-Za-z0-9._:-]*$/, 'rack ids use letters, digits and . _ : - only') }),
      headers: idempotencyHeaders,
      response: intentResponses,
      body: z.object({ site: siteIdSchema, pdu: z.array(z.string().min(1).max(64)).default([]), tor: z.array(z.string().min(1).max(64)).default([]), cdu: z.string().min(1).max(64).optional() }),
    },
    handler: (request, reply) => {
      const topology = { ...request.body, rack: request.params.rack };
      return decideIntent(ctx, request, reply, `rack-${request.params.rack}`, topologyDecider, topology, { type: 'TopologyDeclared', data: topology }, (refusal: never) => refusal);
    },
  });

  app.post('/v1/alarms/:alarmId/ack', {
    config: access,
    schema: {
      tags,
      summary: 'acknowledge an alarm (AlarmAcknowledged; nothing recorded when it is already acknowledged)',
      params: z.object({ alarmId: z.string().min(1).max(200) }),
      headers: idempotencyHeaders,
      response: intentResponses,
      body: z.object({ note: z.string().max(1000).optional() }).default({}),
    },
    handler: async (request, reply) => {
      const alarm = await alarmById(ctx.db, request.params.alarmId);
      if (!alarm) throw new ApiError('API_NOT_FOUND', { resource: 'alarm', id: request.params.alarmId }, `no alarm ${request.params.alarmId}`);
      const data = { alarmId: request.params.alarmId, ...(request.body.note !== undefined ? { note: request.body.note } : {}) };
      const command = { ...data, openedAt: alarm.openedAt.getTime() };
      return decideIntent(ctx, request, reply, alarmStream(request.params.alarmId), alarmAckDecider, command, { type: 'AlarmAcknowledged', data }, (refusal: never) => refusal);
    },
  });
}
