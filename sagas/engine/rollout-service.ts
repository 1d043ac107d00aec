/**
 * Rollout commands as operators issue them: preview (appends nothing), request (freezes the plan), approve, pause,
 * resume, abort, tighten the cap, and the node verbs. Each is one event with the actor who asked and a reason, and
 * each may carry the rollout revision (stream version) the operator saw: a stale one is refused.
 */
import { createHash } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import { assertNever, isEventOf, type Actor } from '../../events/index.js';
import { firmwareOfComponent, rolloutCandidateRows } from '../../projections/index.js';
import type { EventStore } from '../../src/ledger/index.js';
import type { ReadModelDatabase } from '../../projections/index.js';
import { planRollout, type Candidate, type RolloutPlan, type RolloutRequest } from '../firmware-rollout/rollout-planner.js';
import { evolveRollout, initialRollout, outcomeCounts, rolloutStream, type RolloutState } from '../firmware-rollout/rollout-evolve.js';
import { stepStream } from '../firmware-rollout/step-evolve.js';
import { provisionStream, type ProvisionState } from '../provisioning/provision-evolve.js';
import { loadProvision } from './provisioning-engine.js';
import { loadStepState } from './step-driver.js';

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

export async function requestRollout(store: EventStore, rolloutId: string, plan: RolloutPlan, actor: Actor): Promise<void> {
  if (plan.targets.length === 0) throw new SagaError('SAGA_INVALID_REQUEST', 'the selector matches no node that may be updated', { excluded: plan.excluded.length });
  try {
    await store.append(rolloutStream(rolloutId), [{ type: 'RolloutPlanned', data: { rolloutId, plan }, actor }], { expectedVersion: 'no_stream' });
  } catch (error) {
    if ((error as { code?: string }).code === 'LEDGER_WRONG_EXPECTED_VERSION') throw new SagaError('SAGA_EXISTS', `rollout ${rolloutId} already exists`, { rolloutId });
    throw error;
  }
}

export type RolloutVerb =
  | { verb: 'approve'; reason: string }
  | { verb: 'pause'; reason: string }
  | { verb: 'resume'; reason: string }
  | { verb: 'abort'; reason: string }
  | { verb: 'advance'; reason: string }
  | { verb: 'tighten-cap'; cap: number; reason: string }
  | { verb: 'node'; nodeId: string; action: 'retry' | 'skip' | 'release' | 'quarantine'; reason: string };

/** Applies one operator verb; refuses it (typed) when the rollout's state does not allow it or the revision is stale. */
export async function applyRolloutVerb(store: EventStore, rolloutId: string, command: RolloutVerb, actor: Actor, expectedRevision?: number): Promise<RolloutState> {
  const state = await loadRollout(store, rolloutId);
  if (expectedRevision !== undefined && expectedRevision !== state.version) {
    throw new SagaError('SAGA_STALE_REVISION', `rollout ${rolloutId} is at revision ${state.version}, not ${expectedRevision}`, { expected: expectedRevision, actual: state.version });
  }
  const refuse = (why: string): never => {
    throw new SagaError('SAGA_INVALID_STATE', `cannot ${command.verb} rollout ${rolloutId}: ${why}`, { status: state.status });
  };
  const events: Array<{ type: string; data: unknown }> = [];
  switch (command.verb) {
    case 'approve':
      if (state.status !== 'awaiting-approval') refuse(`it is ${state.status}`);
      events.push({ type: 'RolloutApproved', data: { rolloutId, reason: command.reason } });
      break;
    case 'pause':
      if (state.status !== 'running') refuse(`it is ${state.status}`);
      events.push({ type: 'RolloutPaused', data: { rolloutId, reason: 'operator', detail: command.reason } });
      break;
    case 'resume':
      if (state.status !== 'paused' && state.status !== 'halted') refuse(`it is ${state.status}`);
      events.push({ type: 'RolloutResumed', data: { rolloutId, reason: command.reason, acknowledged: state.stopReason ?? 'none' } });
      break;
    case 'abort':
      if (state.status === 'completed' || state.status === 'aborted') refuse(`it is already ${state.status}`);
      events.push({ type: 'RolloutAborted', data: { rolloutId, reason: command.reason } });
      break;
    case 'advance': {
      if (state.status !== 'running') refuse(`it is ${state.status}`);
      const wave = state.currentWave;
      if (state.gate.get(wave)?.verdict !== 'pass') refuse(`the gate after wave ${wave} has not passed`);
      if (wave + 1 >= state.waveMembers.length) refuse('it is on its last wave');
      events.push({ type: 'WaveAdvanced', data: { rolloutId, from: wave, to: wave + 1, by: 'operator' } });
      break;
    }
    case 'tighten-cap':
      if (command.cap >= state.cap) refuse(`a cap is only tightened live (now ${state.cap}, asked ${command.cap}); loosening needs a new plan`);
      events.push({ type: 'RolloutCapTightened', data: { rolloutId, cap: command.cap, previous: state.cap, reason: command.reason } });
      break;
    case 'node': {
      if (!state.targets.has(command.nodeId)) throw new SagaError('SAGA_NOT_FOUND', `node ${command.nodeId} is not a target of rollout ${rolloutId}`, { nodeId: command.nodeId });
      events.push({ type: 'NodeVerbApplied', data: { rolloutId, nodeId: command.nodeId, verb: command.action, reason: command.reason } });
      break;
    }
    default:
      assertNever(command, 'rollout verb');
  }
  await store.append(rolloutStream(rolloutId), events.map((event) => ({ ...event, actor })), { expectedVersion: state.version });
  if (command.verb === 'node' && state.dispatched.has(command.nodeId)) {
    const stream = stepStream(rolloutId, command.nodeId);
    const step = await loadStepState(store, rolloutId, command.nodeId);
    await store.append(stream, [{ type: 'StepOperatorAction', data: { verb: command.action, reason: command.reason }, actor }], { expectedVersion: step.version === 0 ? 'no_stream' : step.version });
  }
  return loadRollout(store, rolloutId);
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
  try {
    await store.append(provisionStream(request.nodeId), [{ type: 'ProvisioningStarted', data, actor }], { expectedVersion: 'no_stream' });
  } catch (error) {
    if ((error as { code?: string }).code === 'LEDGER_WRONG_EXPECTED_VERSION') throw new SagaError('SAGA_EXISTS', `node ${request.nodeId} is already being provisioned`, { nodeId: request.nodeId });
    throw error;
  }
  return loadProvision(store, request.nodeId);
}

export async function releaseQuarantine(store: EventStore, nodeId: string, resumeAt: 'registering' | 'inventorying' | 'validating' | 'baselining' | 'burn-in', reason: string, actor: Actor): Promise<ProvisionState> {
  const state = await loadProvision(store, nodeId);
  if (state.stage === 'none') throw new SagaError('SAGA_NOT_FOUND', `node ${nodeId} is not being provisioned`, { nodeId });
  if (state.stage !== 'quarantined') throw new SagaError('SAGA_INVALID_STATE', `node ${nodeId} is ${state.stage}, not quarantined`, { status: state.stage });
  await store.append(provisionStream(nodeId), [{ type: 'QuarantineReleased', data: { nodeId, resumeAt, reason }, actor }], { expectedVersion: state.version });
  return loadProvision(store, nodeId);
}

export async function abandonProvisioning(store: EventStore, nodeId: string, reason: string, actor: Actor): Promise<ProvisionState> {
  const state = await loadProvision(store, nodeId);
  if (state.stage === 'none') throw new SagaError('SAGA_NOT_FOUND', `node ${nodeId} is not being provisioned`, { nodeId });
  if (state.stage === 'ready' || state.stage === 'abandoned') throw new SagaError('SAGA_INVALID_STATE', `node ${nodeId} is already ${state.stage}`, { status: state.stage });
  await store.append(provisionStream(nodeId), [{ type: 'ProvisioningAbandoned', data: { nodeId, reason }, actor }], { expectedVersion: state.version });
  return loadProvision(store, nodeId);
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
