/**
 * What a rotation does next: a pure function of its state, the capacity streams of its sites, the states of its BMC
 * steps and the time. The engine turns the commands into store writes, appends (with expected versions) and BMC work.
 *
 * Rules kept here:
 * - a reference's new version is staged (in the store, then recorded) before any of its BMCs is dispatched;
 * - a BMC is dispatched only while `running`, with a slot under both the rotation's cap and the site's shared cap
 *   (the capacity stream every saga of the site appends to: a BMC being rotated is not flashed meanwhile, nor the
 *   other way round), and within the in-flight domain limits;
 * - pause, halt and abort are sticky; BMCs in flight still settle and give their slots back;
 * - a wave advances after it drained, its bake passed, and the poller latched on none of its rotated BMCs (a latch
 *   there would mean the poller met a password the ledger did not say was in force);
 * - failure budgets (held or kept BMCs) halt the rotation the moment they are exceeded;
 * - once complete, the old versions of every reference whose nodes all confirmed the new one are retired together.
 */
import type { RotationOutcome } from '../../events/index.js';
import type { CapacityState, Slot } from '../capacity/capacity-evolve.js';
import { domainOf, domains } from '../firmware-rollout/rollout-planner.js';
import type { CredentialStepState } from './credential-step-evolve.js';
import { rotationOutcomeCounts, type RotationState } from './rotation-evolve.js';
import type { RotationTarget } from './rotation-planner.js';

export interface RotationView {
  now: number;
  capacity: ReadonlyMap<string, CapacityState>;
  /** Steps of dispatched BMCs not yet settled in the rotation's stream. */
  steps: ReadonlyMap<string, Pick<CredentialStepState, 'phase' | 'inForce' | 'hold' | 'cause'>>;
  /** Rotated BMCs of a wave the poller latched after their change; undefined: not counted yet. */
  latchedAfterRotation?: (wave: number) => number | undefined;
  /** Nodes cordoned or decommissioned since planning: not dispatched, settled as skipped. */
  unavailable?: ReadonlySet<string>;
  /** References staged per decision, at most. */
  stageBatch?: number;
}

export type RotationCommand =
  | { kind: 'start' }
  | { kind: 'stage'; credentialRefs: string[] }
  | { kind: 'record-dispatch'; nodeId: string; wave: number; slotId: string }
  | { kind: 'record-settle'; nodeId: string; wave: number; outcome: RotationOutcome; detail: string }
  | { kind: 'release-slots'; site: string; slots: Slot[]; why: string }
  | { kind: 'acquire-slots'; site: string; expectedVersion: number; slots: Slot[] }
  | { kind: 'open-wave'; wave: number; nodes: number }
  | { kind: 'advance-wave'; from: number; to: number; latched: number }
  | { kind: 'halt'; reason: 'canary-failed' | 'wave-budget' | 'cumulative-budget' | 'poller-latched'; detail: string }
  | { kind: 'complete'; counts: Record<RotationOutcome, number> }
  | { kind: 'retire' };

export function rotationSlotId(rotationId: string, nodeId: string): string {
  return `${rotationId}:${nodeId}`;
}

/** The outcome a settled step means for the rotation. */
export function outcomeOfStep(step: Pick<CredentialStepState, 'phase' | 'inForce'>): RotationOutcome | undefined {
  if (step.phase === 'rotated') return 'rotated';
  if (step.phase === 'held') return step.inForce ? 'kept' : 'held';
  return undefined;
}

export function decideRotation(state: RotationState, view: RotationView): RotationCommand[] {
  const plan = state.plan;
  if (!plan || state.status === 'none') return [];
  const commands: RotationCommand[] = [];
  if (state.status === 'completed') {
    if (plan.retireOld && !state.retired) commands.push({ kind: 'retire' });
    return commands;
  }
  if (state.status === 'awaiting-approval') {
    if (state.approvers.length >= plan.approvalsRequired) commands.push({ kind: 'start' });
    return commands;
  }

  // Facts first, whatever the status: dispatches the capacity stream shows, steps that ended, slots to give back.
  const recorded = new Map(state.outcomes);
  for (const [site, capacity] of view.capacity) {
    const releases: Slot[] = [];
    for (const slot of capacity.slots.values()) {
      if (slot.sagaId !== state.rotationId) continue;
      const target = state.targets.get(slot.nodeId);
      if (!target) continue;
      if (!state.dispatched.has(slot.nodeId)) commands.push({ kind: 'record-dispatch', nodeId: slot.nodeId, wave: target.wave, slotId: slot.slotId });
      const step = view.steps.get(slot.nodeId);
      const settled = recorded.get(slot.nodeId)?.outcome ?? (step ? outcomeOfStep(step) : undefined);
      if (settled && step && !recorded.has(slot.nodeId)) {
        commands.push({ kind: 'record-settle', nodeId: slot.nodeId, wave: target.wave, outcome: settled, detail: step.cause ?? '' });
        recorded.set(slot.nodeId, { wave: target.wave, outcome: settled });
      }
      if (settled) releases.push(slot);
    }
    if (releases.length > 0) commands.push({ kind: 'release-slots', site, slots: releases, why: 'the BMC step settled' });
  }
  for (const [nodeId, step] of view.steps) {
    // Settled with its slot already given back (a crash between the release and the record).
    const target = state.targets.get(nodeId);
    const outcome = outcomeOfStep(step);
    if (!target || recorded.has(nodeId) || !outcome) continue;
    commands.push({ kind: 'record-settle', nodeId, wave: target.wave, outcome, detail: step.cause ?? '' });
    recorded.set(nodeId, { wave: target.wave, outcome });
  }
  if (state.status !== 'running') return commands;

  const isFailure = (outcome: RotationOutcome): boolean => outcome === 'held' || outcome === 'kept';
  const failures = [...recorded.values()].filter((o) => isFailure(o.outcome)).length;
  const wave = state.currentWave;
  const members = state.waveMembers[wave] ?? [];
  if (failures > state.acknowledgedFailures) {
    const inWave = [...recorded.values()].filter((o) => o.wave === wave && isFailure(o.outcome)).length;
    const size = Math.max(1, members.length);
    const total = Math.max(1, plan.targets.length);
    if (wave === 0 && inWave > plan.budgets.canaryFailures) return [...commands, { kind: 'halt', reason: 'canary-failed', detail: `${inWave} of ${size} canary BMCs were not rotated (budget ${plan.budgets.canaryFailures})` }];
    if (wave > 0 && inWave / size > plan.budgets.waveFailureRatio) return [...commands, { kind: 'halt', reason: 'wave-budget', detail: `${inWave} of ${size} BMCs of wave ${wave} were not rotated (budget ${plan.budgets.waveFailureRatio * 100}%)` }];
    if (failures / total > plan.budgets.cumulativeFailureRatio) return [...commands, { kind: 'halt', reason: 'cumulative-budget', detail: `${failures} of ${total} BMCs were not rotated (budget ${plan.budgets.cumulativeFailureRatio * 100}%)` }];
  }
  if (state.openWave < wave) return [...commands, { kind: 'open-wave', wave, nodes: members.length }];

  for (const nodeId of members) {
    if (recorded.has(nodeId) || state.dispatched.has(nodeId)) continue;
    if (state.skippedBeforeDispatch.has(nodeId) || view.unavailable?.has(nodeId)) {
      commands.push({ kind: 'record-settle', nodeId, wave, outcome: 'skipped', detail: state.skippedBeforeDispatch.has(nodeId) ? 'skipped by an operator' : 'cordoned or decommissioned after planning' });
      recorded.set(nodeId, { wave, outcome: 'skipped' });
    }
  }
  if (!members.every((nodeId) => recorded.has(nodeId))) {
    commands.push(...dispatch(state, view, members, recorded));
    return commands;
  }

  const drainedAt = state.waveProgress[wave]?.drainedAt ?? view.now;
  if (view.now < drainedAt + plan.bakeMs) return commands;
  const latched = view.latchedAfterRotation?.(wave);
  if (latched === undefined) return commands;
  if (latched > 0) return [...commands, { kind: 'halt', reason: 'poller-latched', detail: `the poller latched on ${latched} BMC(s) of wave ${wave} after their rotation` }];
  if (wave + 1 >= state.waveMembers.length) {
    const counts = rotationOutcomeCounts({ outcomes: recorded });
    return [...commands, { kind: 'complete', counts }];
  }
  return [...commands, { kind: 'advance-wave', from: wave, to: wave + 1, latched }];
}

function dispatch(state: RotationState, view: RotationView, members: readonly string[], recorded: ReadonlyMap<string, unknown>): RotationCommand[] {
  const plan = state.plan!;
  const commands: RotationCommand[] = [];
  const bySite = new Map<string, { capacity: CapacityState; ours: number; total: number; domainCounts: Map<string, number>; slots: Slot[] }>();
  const siteOf = (site: string) => {
    let entry = bySite.get(site);
    if (!entry) {
      const capacity = view.capacity.get(site);
      if (!capacity) return undefined;
      const domainCounts = new Map<string, number>();
      let ours = 0;
      for (const slot of capacity.slots.values()) {
        if (slot.sagaId === state.rotationId) ours++;
        for (const domain of domains) bump(domainCounts, `${domain}:${domainOf(slot, domain)}`);
      }
      entry = { capacity, ours, total: capacity.slots.size, domainCounts, slots: [] };
      bySite.set(site, entry);
    }
    return entry;
  };
  const toStage: string[] = [];
  const stageBatch = view.stageBatch ?? 1_000;
  for (const nodeId of members) {
    if (recorded.has(nodeId) || state.dispatched.has(nodeId) || state.skippedBeforeDispatch.has(nodeId) || view.unavailable?.has(nodeId)) continue;
    const target = state.targets.get(nodeId)!;
    if (!state.staged.has(target.credentialRef)) {
      // The version first (staged ahead of the slots, in dispatch order): the BMC is dispatched at a later decision,
      // once the store holds the version and the log says so.
      if (toStage.length < stageBatch && !toStage.includes(target.credentialRef)) toStage.push(target.credentialRef);
      continue;
    }
    const site = siteOf(target.site);
    if (!site) continue;
    if (site.capacity.slotByNode.has(nodeId)) continue;
    if (site.ours >= plan.capPerSite) continue;
    if (site.capacity.siteCap !== undefined && site.total >= site.capacity.siteCap) continue;
    if (!withinLimits(site.domainCounts, target, plan.inFlightDomainLimits)) continue;
    site.slots.push({ site: target.site, slotId: rotationSlotId(state.rotationId, nodeId), sagaId: state.rotationId, nodeId, rack: target.rack, pdu: target.pdu, tor: target.tor, cdu: target.cdu });
    site.ours++;
    site.total++;
    for (const domain of domains) bump(site.domainCounts, `${domain}:${domainOf(target, domain)}`);
  }
  if (toStage.length > 0) commands.push({ kind: 'stage', credentialRefs: toStage });
  for (const [site, entry] of bySite) if (entry.slots.length > 0) commands.push({ kind: 'acquire-slots', site, expectedVersion: entry.capacity.version, slots: entry.slots });
  return commands;
}

function withinLimits(counts: ReadonlyMap<string, number>, target: RotationTarget, limits: Partial<Record<string, number>>): boolean {
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
