/**
 * The health gate after a wave. `readGateInputs` reads the liveness projection operators watch (with its
 * checkpoint and lag); `gateVerdict` is pure, so an auditor can recompute every `GateEvaluated` from its inputs.
 * Missing or stale data is inconclusive, never a pass.
 */
import { sql, type Kysely } from 'kysely';
import type { EventData } from '../../events/index.js';
import { livenessStatesOf, openAlarmCountOf } from '../../projections/index.js';
import type { GateEvaluated } from '../../events/index.js';
import type { RolloutPlan } from '../firmware-rollout/rollout-planner.js';
import type { ReadModelDatabase } from '../../projections/index.js';

export type GateRecord = Omit<EventData<typeof GateEvaluated>, 'rolloutId' | 'wave'>;

export function gateVerdict(inputs: GateRecord['inputs'], values: GateRecord['values'], gate: RolloutPlan['gate']): { verdict: GateRecord['verdict']; reason: string } {
  const stale = inputs.find((input) => input.lagPositions > gate.maxLagPositions || input.lagMs > gate.maxLagMs);
  if (stale) return { verdict: 'inconclusive', reason: `${stale.projection} lags ${stale.lagPositions} positions / ${stale.lagMs} ms (bounds ${gate.maxLagPositions} / ${gate.maxLagMs})` };
  if (values.unhealthy.length > 0) return { verdict: 'fail', reason: `${values.unhealthy.length} updated nodes are dark` };
  if (values.unknown.length > 0) return { verdict: 'inconclusive', reason: `${values.unknown.length} updated nodes have no recent contact` };
  return { verdict: 'pass', reason: `${values.healthy} of ${values.nodes} updated nodes healthy` };
}

/** Reads liveness for `nodes` and the liveness projection's lag. */
export async function readGateInputs(db: Kysely<ReadModelDatabase>, nodes: readonly string[], gate: RolloutPlan['gate'], now: number): Promise<GateRecord> {
  const head = await sql<{ position: string }>`SELECT position FROM ledger_head`.execute(db);
  const headPosition = Number(head.rows[0]?.position ?? 0);
  const checkpoint = await sql<{ position: string; updated_at: Date; status: string }>`SELECT position, updated_at, status FROM projection_checkpoints WHERE name = 'liveness'`.execute(db);
  const row = checkpoint.rows[0];
  const position = Number(row?.position ?? 0);
  const lagPositions = Math.max(0, headPosition - position);
  const lagMs = row === undefined || row.status !== 'running' ? Number.MAX_SAFE_INTEGER : lagPositions === 0 ? 0 : Math.max(0, now - new Date(row.updated_at).getTime());
  const inputs: GateRecord['inputs'] = [{ projection: 'liveness', checkpointPosition: position, headPosition, lagPositions, lagMs: Math.min(lagMs, 2_147_483_647) }];
  const states = new Map<string, string>();
  for (let i = 0; i < nodes.length; i += 5_000) {
    const chunk = nodes.slice(i, i + 5_000);
    for (const [node, state] of await livenessStatesOf(db, chunk).catch(() => new Map<string, string>())) states.set(node, state);
  }
  const openAlarms = await openAlarmCountOf(db, nodes).catch(() => 0);
  const unhealthy: string[] = [];
  const unknown: string[] = [];
  let healthy = 0;
  for (const node of nodes) {
    const state = states.get(node);
    if (state === 'healthy' || state === 'maintenance') healthy++;
    else if (state === 'dark') unhealthy.push(node);
    else unknown.push(node);
  }
  const values: GateRecord['values'] = { nodes: nodes.length, healthy, unhealthy: unhealthy.slice(0, 1000), unknown: unknown.slice(0, 1000), openAlarms };
  return { inputs, values, ...gateVerdict(inputs, values, gate) };
}
