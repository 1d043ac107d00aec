/**
 * Rollout commands as operators issue them: preview (appends nothing), request (freezes the plan), approve, pause,
 * resume, abort, tighten the cap, and the node verbs. Each is one event with the actor who asked and a reason, and
 * each may carry the rollout revision (stream version) the operator saw: a stale one is refused. Decided by
 * `rolloutCommandDecider` / `provisionCommandDecider` (pure) and run by `handleCommand`; this file maps refusals to
 * `SagaError` and reads what the deciders need from other streams (a node's registration).
 */
import { createHash } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import { isEventOf, type Actor } from '../../events/index.js';
import { firmwareOfComponent, rolloutCandidateRows } from '../../projections/index.js';
import type { EventStore } from '../../src/ledger/index.js';
import type { ReadModelDatabase } from '../../projections/index.js';
import { planRollout, type Candidate, type RolloutPlan, type RolloutRequest } from '../firmware-rollout/rollout-planner.js';
import { evolveRollout, initialRollout, outcomeCounts, rolloutStream, type RolloutState } from '../firmware-rollout/rollout-evolve.js';
import { stepStream } from '../firmware-rollout/step-evolve.js';
import { provisionStream, type ProvisionState } from '../provisioning/provision-evolve.js';
import { rolloutCommandDecider, stepActionDecider, type RolloutOperatorCommand, type RolloutVerb } from '../firmware-rollout/rollout-verb-decide.js';
import { provisionCommandDecider, type ProvisionCommand, type ProvisionResumeStage } from '../provisioning/provision-verb-decide.js';
import { handleCommand } from './handle-command.js';

export type { RolloutVerb } from '../firmware-rollout/rollout-verb-decide.js';

export class SagaError extends Error {
  constructor(
    readonly code: 'SAGA_NOT_FOUND' | 'SAGA_EXISTS' | 'SAGA_INVALID_STATE' | 'SAGA_STALE_REVISION' | 'SAGA_INVALID_REQUEST',
    message: string,
    readonly details: Record<string, unknown> = {},
  ) {
    super(message);
    this.name = 'SagaError';
  }
}

const sha256 = (text: string): string => createHash('sha256').update(text).digest('hex');

export function previewRollout(request: RolloutRequest, candidates: readonly Candidate[]): RolloutPlan {
  return planRollout(request, candidates, sha256);
}

/** The fleet as the projections see it: topology, inventory, liveness, and cordons from the log. */
export async function fleetCandidates(db: Kysely<ReadModelDatabase>, component: string): Promise<Candidate[]> {
  const rows = await rolloutCandidateRows(db);
  const versions = new Map<string, string>();
  const notUpdateable = new Set<string>();
  for (const row of await firmwareOfComponent(db, component)) {
    if (component.toUpperCase() !== 'BMC') versions.set(row.node_id, row.version);
    // Only a BMC that says so excludes a node; one that says nothing (null) is tried, as before.
    if (row.updateable === false) notUpdateable.add(row.node_id);
  }
  const cordons = await sql<{ node_id: string; type: string }>`
    SELECT DISTINCT ON (data->>'nodeId') data->>'nodeId' AS node_id, type FROM ledger_events
     WHERE type IN ('NodeCordoned', 'NodeUncordoned') ORDER BY data->>'nodeId', position DESC`.execute(db);
  const cordoned = new Set(cordons.rows.filter((row) => row.type === 'NodeCordoned').map((row) => row.node_id));
  const first = (value: unknown): string | undefined => (Array.isArray(value) && typeof value[0] === 'string' ? value[0] : undefined);
  return rows.map((row) => ({
    nodeId: row.node_id,
    site: row.site,
    rack: row.rack,
    pdu: first(row.pdus),
    tor: first(row.tors),
    cdu: row.cdu ?? undefined,
    vendor: row.manufacturer ?? undefined,
    model: row.model ?? undefined,
    fromVersion: component.toUpperCase() === 'BMC' ? (row.bmc_firmware ?? undefined) : versions.get(row.node_id),
    cordoned: cordoned.has(row.node_id),
    decommissioned: row.state === 'decommissioned',
    notUpdateable: notUpdateable.has(row.node_id),
  }));
}

export async function loadRollout(store: EventStore, rolloutId: string): Promise<RolloutState> {
  const state = initialRollout(rolloutId);
  for (const event of await store.readStreamToEnd(rolloutStream(rolloutId))) {
    evolveRollout(state, { type: event.type, data: event.data, actor: event.actor, recordedAt: event.recordedAt.getTime() });
  }
  if (!state.plan) throw new SagaError('SAGA_NOT_FOUND', `no rollout ${rolloutId}`, { rolloutId });
  return state;
}

/** Runs a rollout command through its decider and the engine shell; a refusal is thrown as a `SagaError`. */
async function rolloutCommand(store: EventStore, rolloutId: string, command: RolloutOperatorCommand, actor: Actor): Promise<RolloutState> {
  const outcome = await handleCommand(store, rolloutStream(rolloutId), rolloutCommandDecider(rolloutId), command, { actor });
  if (outcome.kind === 'refused') throw new SagaError(outcome.refusal.code, outcome.refusal.message, outcome.refusal.details);
  return outcome.state;
}

export async function requestRollout(store: EventStore, rolloutId: string, plan: RolloutPlan, actor: Actor): Promise<void> {
  await rolloutCommand(store, rolloutId, { verb: 'request', plan }, actor);
}

/** Applies one operator verb; refuses it (typed) when the rollout's state does not allow it or the revision is stale. */
export async function applyRolloutVerb(store: EventStore, rolloutId: string, command: RolloutVerb, actor: Actor, expectedRevision?: number): Promise<RolloutState> {
  const state = await rolloutCommand(store, rolloutId, { ...command, ...(expectedRevision !== undefined ? { expectedRevision } : {}) }, actor);
  // A node already dispatched hears the verb on its step stream too (its step decider acts on it).
  if (command.verb === 'node' && state.dispatched.has(command.nodeId)) {
    await handleCommand(store, stepStream(rolloutId, command.nodeId), stepActionDecider, { verb: command.action, reason: command.reason }, { actor });
  }
  return state;
}

/** The status view: counts per outcome, waves, nodes in flight, holds. */
export function rolloutSummary(state: RolloutState): Record<string, unknown> {
  const plan = state.plan!;
  return {
    rolloutId: state.rolloutId,
    revision: state.version,
    status: state.status,
    stopReason: state.stopReason ?? null,
    firmware: plan.firmware,
    targets: plan.targets.length,
    excluded: plan.excluded.length,
    cap: state.cap,
    approvals: { required: plan.approvalsRequired, by: state.approvers },
    currentWave: state.currentWave,
    waves: plan.waves.map((wave) => ({
      index: wave.index,
      canary: wave.canary,
      size: wave.size,
      outcomes: state.waveProgress[wave.index]?.outcomes ?? 0,
      failures: state.waveProgress[wave.index]?.failures ?? 0,
      gate: state.gate.get(wave.index)?.verdict ?? null,
    })),
    inFlight: [...state.dispatched.keys()].filter((nodeId) => !state.outcomes.has(nodeId)).length,
    outcomes: outcomeCounts(state),
    planHash: plan.planHash,
  };
}

// ---- provisioning ----

export interface ProvisioningRequest {
  nodeId: string;
  declared: { manufacturer?: string; model?: string; cpuCount?: number; gpuCount?: number; memoryGiB?: number };
  baseline: Array<{ component: string; version: string; imageUri: string; method?: 'SimpleUpdate' | 'MultipartHttpPush'; applyTime?: 'Immediate' | 'OnReset' }>;
  burnInMs: number;
  burnInIntervalMs?: number;
}

/** Starts provisioning a registered node (its site and rack come from its registration). */
export async function startProvisioning(store: EventStore, request: ProvisioningRequest, actor: Actor): Promise<ProvisionState> {
  const registration = (await store.readStream(`node-${request.nodeId}`)).filter((event) => isEventOf(event, 'NodeRegistered')).pop();
  if (!registration) throw new SagaError('SAGA_NOT_FOUND', `node ${request.nodeId} is not registered`, { nodeId: request.nodeId });
  const { site, rack } = registration.data;
  const data = {
    nodeId: request.nodeId,
    site,
    rack,
    declared: request.declared,
    baseline: request.baseline.map((image) => ({ method: 'SimpleUpdate' as const, applyTime: 'Immediate' as const, ...image })),
    burnInMs: request.burnInMs,
    burnInIntervalMs: request.burnInIntervalMs ?? 60_000,
  };
  return provisionCommand(store, request.nodeId, { verb: 'start', spec: data }, actor);
}

/** Runs a provisioning command through its decider and the engine shell; a refusal is thrown as a `SagaError`. */
async function provisionCommand(store: EventStore, nodeId: string, command: ProvisionCommand, actor: Actor): Promise<ProvisionState> {
  const outcome = await handleCommand(store, provisionStream(nodeId), provisionCommandDecider(nodeId), command, { actor });
  if (outcome.kind === 'refused') throw new SagaError(outcome.refusal.code, outcome.refusal.message, outcome.refusal.details);
  return outcome.state;
}

export async function releaseQuarantine(store: EventStore, nodeId: string, resumeAt: ProvisionResumeStage, reason: string, actor: Actor): Promise<ProvisionState> {
  return provisionCommand(store, nodeId, { verb: 'release', resumeAt, reason }, actor);
}

export async function abandonProvisioning(store: EventStore, nodeId: string, reason: string, actor: Actor): Promise<ProvisionState> {
  return provisionCommand(store, nodeId, { verb: 'abandon', reason }, actor);
}

export function provisionSummary(state: ProvisionState): Record<string, unknown> {
  return {
    nodeId: state.nodeId,
    revision: state.version,
    stage: state.stage,
    quarantine: state.quarantine ?? null,
    declared: state.spec?.declared ?? null,
    observed: state.observed?.observed ?? null,
    baseline: (state.spec?.baseline ?? []).map((image) => ({ component: image.component, version: image.version, outcome: state.settled.get(image.component) ?? null })),
    burnInUntil: state.burnInUntil !== undefined ? new Date(state.burnInUntil).toISOString() : null,
  };
}
