/**
 * Credential rotations as operators drive them: the candidates (the log's registrations, versions in force and
 * latches, with the projections' topology), preview (appends nothing), request (freezes the plan), the verbs, and the
 * status view. Each verb is one event with the actor who asked, decided by `rotationCommandDecider` and run by
 * `handleCommand`; a refusal is a `SagaError`.
 */
import { createHash } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import type { Actor } from '../../events/index.js';
import { rolloutCandidateRows, type ReadModelDatabase } from '../../projections/index.js';
import { applyCredentialEvent, type NodeCredential } from '../../src/credentials/index.js';
import type { EventStore } from '../../src/ledger/index.js';
import { evolveRotation, initialRotation, rotationOutcomeCounts, rotationStream, type RotationState } from '../credential-rotation/rotation-evolve.js';
import { planRotation, type RotationCandidate, type RotationPlan, type RotationRequest } from '../credential-rotation/rotation-planner.js';
import { rotationCommandDecider, type RotationOperatorCommand, type RotationVerb } from '../credential-rotation/rotation-verb-decide.js';
import { handleCommand } from './handle-command.js';
import { SagaError } from './rollout-service.js';

const sha256 = (text: string): string => createHash('sha256').update(text).digest('hex');

export function previewRotation(request: RotationRequest, candidates: readonly RotationCandidate[]): RotationPlan {
  return planRotation(request, candidates, sha256);
}

/**
 * Every registered node as a rotation candidate: its BMC's address, protocol and credential reference (its latest
 * registration), the version in force and whether a rotation fences it (the log's rotation events), whether the
 * poller's latch holds it (a `LockoutLatched` after the last version put in force, not cleared), cordons, and where it
 * sits and what it is (the projections, when they know the node).
 */
export async function rotationCandidates(db: Kysely<ReadModelDatabase>): Promise<RotationCandidate[]> {
  const registrations = await sql<{ node_id: string; type: string; data: { site?: string; rack?: string; bmc?: { protocol?: string; address?: string; credentialRef?: string } } }>`
    SELECT DISTINCT ON (data->>'nodeId') data->>'nodeId' AS node_id, type, data FROM ledger_events
     WHERE type IN ('NodeRegistered', 'NodeDecommissioned') ORDER BY data->>'nodeId', position DESC`.execute(db);
  const credentials = new Map<string, NodeCredential>();
  const inForceAt = new Map<string, number>();
  const changes = await sql<{ type: string; data: unknown; position: string }>`
    SELECT type, data, position FROM ledger_events WHERE type IN ('CredentialStepStarted', 'BmcPasswordChanged', 'CredentialStepHeld') ORDER BY position`.execute(db);
  for (const row of changes.rows) {
    const nodeId = applyCredentialEvent(credentials, { type: row.type, data: row.data });
    if (nodeId && row.type !== 'CredentialStepStarted') inForceAt.set(nodeId, Number(row.position));
  }
  const latches = await sql<{ node_id: string; type: string; position: string }>`
    SELECT DISTINCT ON (data->>'nodeId') data->>'nodeId' AS node_id, type, position FROM ledger_events
     WHERE type IN ('LockoutLatched', 'LockoutLatchCleared') ORDER BY data->>'nodeId', position DESC`.execute(db);
  const latched = new Set(latches.rows.filter((row) => row.type === 'LockoutLatched' && Number(row.position) > (inForceAt.get(row.node_id) ?? 0)).map((row) => row.node_id));
  const cordons = await sql<{ node_id: string; type: string }>`
    SELECT DISTINCT ON (data->>'nodeId') data->>'nodeId' AS node_id, type FROM ledger_events
     WHERE type IN ('NodeCordoned', 'NodeUncordoned') ORDER BY data->>'nodeId', position DESC`.execute(db);
  const cordoned = new Set(cordons.rows.filter((row) => row.type === 'NodeCordoned').map((row) => row.node_id));
  const topology = new Map((await rolloutCandidateRows(db).catch(() => [])).map((row) => [row.node_id, row]));
  const first = (value: unknown): string | undefined => (Array.isArray(value) && typeof value[0] === 'string' ? value[0] : undefined);
  const out: RotationCandidate[] = [];
  for (const row of registrations.rows) {
    const bmc = row.data.bmc;
    if (row.type !== 'NodeRegistered' || !bmc?.address || !bmc.credentialRef) continue;
    const place = topology.get(row.node_id);
    const credential = credentials.get(row.node_id);
    const protocol = bmc.protocol === 'ipmi' || bmc.protocol === 'snmp' ? bmc.protocol : 'redfish';
    out.push({
      nodeId: row.node_id,
      site: row.data.site ?? place?.site ?? 'unknown',
      rack: row.data.rack ?? place?.rack ?? 'unknown',
      pdu: first(place?.pdus),
      tor: first(place?.tors),
      cdu: place?.cdu ?? undefined,
      vendor: place?.manufacturer ?? undefined,
      model: place?.model ?? undefined,
      cordoned: cordoned.has(row.node_id),
      decommissioned: false,
      address: bmc.address,
      protocol,
      credentialRef: credential?.credentialRef ?? bmc.credentialRef,
      inForce: credential?.version ?? null,
      latched: latched.has(row.node_id),
      fenced: credential?.fenced ?? false,
    });
  }
  return out;
}

export async function loadRotation(store: EventStore, rotationId: string): Promise<RotationState> {
  const state = initialRotation(rotationId);
  for (const event of await store.readStreamToEnd(rotationStream(rotationId))) {
    evolveRotation(state, { type: event.type, data: event.data, actor: event.actor, recordedAt: event.recordedAt.getTime() });
  }
  if (!state.plan) throw new SagaError('SAGA_NOT_FOUND', `no rotation ${rotationId}`, { rotationId });
  return state;
}

async function rotationCommand(store: EventStore, rotationId: string, command: RotationOperatorCommand, actor: Actor): Promise<RotationState> {
  const outcome = await handleCommand(store, rotationStream(rotationId), rotationCommandDecider(rotationId), command, { actor });
  if (outcome.kind === 'refused') throw new SagaError(outcome.refusal.code, outcome.refusal.message, outcome.refusal.details);
  return outcome.state;
}

export async function requestRotation(store: EventStore, rotationId: string, plan: RotationPlan, actor: Actor): Promise<RotationState> {
  return rotationCommand(store, rotationId, { verb: 'request', plan }, actor);
}

export async function applyRotationVerb(store: EventStore, rotationId: string, command: RotationVerb, actor: Actor, expectedRevision?: number): Promise<RotationState> {
  return rotationCommand(store, rotationId, { ...command, ...(expectedRevision !== undefined ? { expectedRevision } : {}) }, actor);
}

/** The status view: counts per outcome, waves, BMCs in flight, versions staged and retired. */
export function rotationSummary(state: RotationState): Record<string, unknown> {
  const plan = state.plan!;
  return {
    rotationId: state.rotationId,
    revision: state.version,
    status: state.status,
    stopReason: state.stopReason ?? null,
    targets: plan.targets.length,
    excluded: plan.excluded.length,
    cap: plan.capPerSite,
    fenceGraceMs: plan.fenceGraceMs,
    lockoutThreshold: plan.lockoutThreshold,
    factoryFallback: plan.factoryFallback?.credentialRef ?? null,
    approvals: { required: plan.approvalsRequired, by: state.approvers },
    currentWave: state.currentWave,
    waves: plan.waves.map((wave) => ({ index: wave.index, canary: wave.canary, size: wave.size, outcomes: state.waveProgress[wave.index]?.outcomes ?? 0, failures: state.waveProgress[wave.index]?.failures ?? 0 })),
    staged: state.staged.size,
    inFlight: [...state.dispatched.keys()].filter((nodeId) => !state.outcomes.has(nodeId)).length,
    outcomes: rotationOutcomeCounts(state),
    retired: state.retired,
    planHash: plan.planHash,
  };
}
