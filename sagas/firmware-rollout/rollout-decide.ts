/**
 * What the rollout does next: a pure function of its state, the capacity streams of its sites, the states of its
 * node steps and the time. The engine turns the commands into appends (with expected versions) and I/O.
 *
 * Rules kept here:
 * - dispatch happens only while `running`; pause, halt and abort are sticky (only an explicit resume lifts a pause
 *   or a halt; abort is final), but outcomes of nodes in flight are still recorded and their slots released;
 * - a node is dispatched only when the site has a free slot under both the rollout's cap and the site's shared
 *   cap, no domain (rack, PDU, ToR, CDU) would pass its in-flight limit, and no other saga holds the node;
 * - a slot is released only after the node's step reached an observed terminal state (a quarantined node keeps
 *   it until an operator releases it);
 * - a wave advances only after every node has an outcome, the bake has passed and the gate said pass;
 * - failure budgets (canary, per wave, cumulative) halt the rollout the moment they are exceeded.
 */
import type { NodeOutcome } from '../../events/index.js';
import type { CapacityState, Slot } from '../capacity/capacity-evolve.js';
import { domainOf, domains, type RolloutTarget } from './rollout-planner.js';
import { outcomeCounts, type RolloutState } from './rollout-evolve.js';
import type { StepState } from './step-evolve.js';

export interface RolloutView {
  now: number;
  capacity: ReadonlyMap<string, CapacityState>;
  /** States of the steps of dispatched nodes that are not yet terminal in the rollout's stream. */
  steps: ReadonlyMap<string, Pick<StepState, 'phase' | 'outcome' | 'released' | 'cause'>>;
  /** Nodes cordoned or decommissioned since planning: not dispatched, recorded as skipped. */
  unavailable?: ReadonlySet<string>;
  /** Between two evaluations of an inconclusive gate. */
  gateRetryMs?: number;
  /** Inconclusive verdicts in a row before the rollout pauses itself. */
  maxInconclusive?: number;
}

export type RolloutCommand =
  | { kind: 'start' }
  | { kind: 'record-dispatch'; nodeId: string; wave: number; slotId: string }
  | { kind: 'record-outcome'; nodeId: string; wave: number; outcome: NodeOutcome; detail: string }
  | { kind: 'release-slot'; site: string; slot: Slot; why: string }
  | { kind: 'acquire-slots'; site: string; expectedVersion: number; slots: Slot[] }
  | { kind: 'open-wave'; wave: number; nodes: number }
  | { kind: 'evaluate-gate'; wave: number }
  | { kind: 'advance-wave'; from: number; to: number }
  | { kind: 'halt'; reason: 'canary-failed' | 'wave-budget' | 'cumulative-budget' | 'gate-failed'; detail: string }
  | { kind: 'pause'; reason: 'gate-inconclusive'; detail: string }
  | { kind: 'complete'; counts: ReturnType<typeof outcomeCounts> };

export function slotIdOf(rolloutId: string, nodeId: string): string {
  return `${rolloutId}:${nodeId}`;
}

export function decideRollout(state: RolloutState, view: RolloutView): RolloutCommand[] {
  const plan = state.plan;
  if (!plan || state.status === 'none' || state.status === 'completed') return [];
  const commands: RolloutCommand[] = [];
  if (state.status === 'awaiting-approval') {
    if (state.approvers.length >= plan.approvalsRequired) commands.push({ kind: 'start' });
    return commands;
  }

  // Facts first, whatever the status: dispatches the capacity stream shows, outcomes of finished steps, releases.
  const recorded = new Map(state.outcomes);
  for (const [site, capacity] of view.capacity) {
    for (const slot of capacity.slots.values()) {
      if (slot.sagaId !== state.rolloutId) continue;
      const target = state.targets.get(slot.nodeId);
      if (!target) continue;
      if (!state.dispatched.has(slot.nodeId)) commands.push({ kind: 'record-dispatch', nodeId: slot.nodeId, wave: target.wave, slotId: slot.slotId });
      const step = view.steps.get(slot.nodeId);
      const outcome = recorded.get(slot.nodeId)?.outcome ?? (step?.outcome && stepIsTerminal(step) ? step.outcome : undefined);
      if (outcome && step && !recorded.has(slot.nodeId)) {
        commands.push({ kind: 'record-outcome', nodeId: slot.nodeId, wave: target.wave, outcome, detail: step.cause ?? '' });
        recorded.set(slot.nodeId, { wave: target.wave, outcome });
      }
      const releasable = outcome !== undefined && (outcome !== 'quarantined' || step?.released === true);
      if (releasable) commands.push({ kind: 'release-slot', site, slot, why: `node ${outcome}` });
    }
  }
  for (const [nodeId, step] of view.steps) {
    // Dispatched, slot already released (a crash between release and outcome), outcome still unrecorded.
    const target = state.targets.get(nodeId);
    if (!target || recorded.has(nodeId) || !step.outcome || !stepIsTerminal(step)) continue;
    commands.push({ kind: 'record-outcome', nodeId, wave: target.wave, outcome: step.outcome, detail: step.cause ?? '' });
    recorded.set(nodeId, { wave: target.wave, outcome: step.outcome });
  }
  if (state.status !== 'running') return commands;

  // Budgets, counted with the outcomes just found.
  const failuresIn = (wave: number): number => [...recorded.values()].filter((o) => o.wave === wave && (o.outcome === 'failed' || o.outcome === 'quarantined')).length;
  const failures = [...recorded.values()].filter((o) => o.outcome === 'failed' || o.outcome === 'quarantined').length;
  if (failures > state.acknowledgedFailures) {
    const wave = state.currentWave;
    const inWave = failuresIn(wave);
    const size = state.waveMembers[wave]?.length ?? 1;
    const total = plan.targets.length;
    if (wave === 0 && inWave > plan.budgets.canaryFailures) {
      commands.push({ kind: 'halt', reason: 'canary-failed', detail: `${inWave} of ${size} canary nodes failed (budget ${plan.budgets.canaryFailures})` });
      return commands;
    }
    if (wave > 0 && inWave / size > plan.budgets.waveFailureRatio) {
      commands.push({ kind: 'halt', reason: 'wave-budget', detail: `${inWave} of ${size} nodes of wave ${wave} failed (budget ${plan.budgets.waveFailureRatio * 100}%)` });
      return commands;
    }
    if (failures / total > plan.budgets.cumulativeFailureRatio) {
      commands.push({ kind: 'halt', reason: 'cumulative-budget', detail: `${failures} of ${total} targets failed (budget ${plan.budgets.cumulativeFailureRatio * 100}%)` });
      return commands;
    }
  }

  const wave = state.currentWave;
  const members = state.waveMembers[wave] ?? [];
  if (state.openWave < wave) {
    commands.push({ kind: 'open-wave', wave, nodes: members.length });
    return commands;
  }

  // Nodes that will never be dispatched still need an outcome, or the wave never drains.
  for (const nodeId of members) {
    if (recorded.has(nodeId) || state.dispatched.has(nodeId)) continue;
    if (state.skippedBeforeDispatch.has(nodeId) || view.unavailable?.has(nodeId)) {
      const why = state.skippedBeforeDispatch.has(nodeId) ? 'skipped by an operator' : 'cordoned or decommissioned after planning';
      commands.push({ kind: 'record-outcome', nodeId, wave, outcome: 'skipped', detail: why });
      recorded.set(nodeId, { wave, outcome: 'skipped' });
    }
  }

  const drained = members.every((nodeId) => recorded.has(nodeId));
  if (!drained) {
    commands.push(...dispatch(state, view, members, recorded));
    return commands;
  }

  const drainedAt = state.waveProgress[wave]?.drainedAt ?? view.now;
  if (view.now < drainedAt + plan.bakeMs) return commands;
  const gate = state.gate.get(wave);
  if (!gate || (gate.verdict === 'inconclusive' && view.now >= gate.at + (view.gateRetryMs ?? 10_000))) {
    if (gate && gate.inconclusiveInARow >= (view.maxInconclusive ?? 30)) {
      commands.push({ kind: 'pause', reason: 'gate-inconclusive', detail: `the gate after wave ${wave} was inconclusive ${gate.inconclusiveInARow} times in a row` });
    } else commands.push({ kind: 'evaluate-gate', wave });
    return commands;
  }
  if (gate.verdict === 'fail') {
    commands.push({ kind: 'halt', reason: 'gate-failed', detail: `the gate after wave ${wave} failed` });
    return commands;
  }
  if (gate.verdict !== 'pass') return commands;
  if (wave + 1 >= state.waveMembers.length) commands.push({ kind: 'complete', counts: countWith(state, recorded) });
  else if (plan.gate.autoAdvance) commands.push({ kind: 'advance-wave', from: wave, to: wave + 1 });
  return commands;
}

function stepIsTerminal(step: Pick<StepState, 'phase'>): boolean {
  return step.phase === 'succeeded' || step.phase === 'failed' || step.phase === 'quarantined' || step.phase === 'skipped';
}

function countWith(state: RolloutState, recorded: ReadonlyMap<string, { outcome: NodeOutcome }>): ReturnType<typeof outcomeCounts> {
  return outcomeCounts({ ...state, outcomes: new Map(recorded) } as RolloutState);
}

/** The slots this decision may take now, per site, each checked against both caps and every domain limit. */
function dispatch(state: RolloutState, view: RolloutView, members: readonly string[], recorded: ReadonlyMap<string, unknown>): RolloutCommand[] {
  const plan = state.plan!;
  const bySite = new Map<string, { capacity: CapacityState; ours: number; total: number; domainCounts: Map<string, number>; slots: Slot[] }>();
  const siteOf = (site: string) => {
    let entry = bySite.get(site);
    if (!entry) {
      const capacity = view.capacity.get(site);
      if (!capacity) return undefined;
      const domainCounts = new Map<string, number>();
      let ours = 0;
      for (const slot of capacity.slots.values()) {
        if (slot.sagaId === state.rolloutId) ours++;
        for (const domain of domains) bump(domainCounts, `${domain}:${domainOf(slot, domain)}`);
      }
      entry = { capacity, ours, total: capacity.slots.size, domainCounts, slots: [] };
      bySite.set(site, entry);
    }
    return entry;
  };
  for (const nodeId of members) {
    if (recorded.has(nodeId) || state.dispatched.has(nodeId) || state.skippedBeforeDispatch.has(nodeId) || view.unavailable?.has(nodeId)) continue;
    const target = state.targets.get(nodeId)!;
    const site = siteOf(target.site);
    if (!site) continue;
    if (site.capacity.slotByNode.has(nodeId)) continue; // another saga (or this one, unrecorded) holds the node
    if (site.ours >= state.cap) continue;
    if (site.capacity.siteCap !== undefined && site.total >= site.capacity.siteCap) continue;
    if (!withinDomainLimits(site.domainCounts, target, plan.inFlightDomainLimits)) continue;
    const slot: Slot = { site: target.site, slotId: slotIdOf(state.rolloutId, nodeId), sagaId: state.rolloutId, nodeId, rack: target.rack, pdu: target.pdu, tor: target.tor, cdu: target.cdu };
    site.slots.push(slot);
    site.ours++;
    site.total++;
    for (const domain of domains) bump(site.domainCounts, `${domain}:${domainOf(target, domain)}`);
  }
  return [...bySite.entries()]
    .filter(([, entry]) => entry.slots.length > 0)
    .map(([site, entry]) => ({ kind: 'acquire-slots' as const, site, expectedVersion: entry.capacity.version, slots: entry.slots }));
}

function withinDomainLimits(counts: ReadonlyMap<string, number>, target: RolloutTarget, limits: Partial<Record<string, number>>): boolean {
  for (const domain of domains) {
    const limit = limits[domain];
    if (limit === undefined || target[domain] === '') continue;
    if ((counts.get(`${domain}:${domainOf(target, domain)}`) ?? 0) >= limit) return false;
  }
  return true;
}

function bump(counts: Map<string, number>, key: string): void {
  counts.set(key, (counts.get(key) ?? 0) + 1);
}
