/**
 * The rotation planner: pure, so `plan` (a preview) and `rotate` compute the same frozen plan. The cohorts are the
 * rollout planner's (`planRollout`): a canary with one BMC per stratum (vendor, model, version in force) and at most
 * one per rack, then growing waves that take racks round-robin, under the same domain limits. Excluded: decommissioned
 * and cordoned nodes, devices reached by SNMP (a PDU's community is not an account) or by IPMI alone (not wired yet),
 * and nodes another rotation fences now.
 */
import type { z } from 'zod';
import type { domainLimitsSchema, rotationPlanSchema, rotationTargetSchema } from '../../events/index.js';
import { planRollout, type Candidate } from '../firmware-rollout/rollout-planner.js';

export type RotationPlan = z.output<typeof rotationPlanSchema>;
export type RotationTarget = z.output<typeof rotationTargetSchema>;

/** One node as the log and the projections see it, with what a rotation needs of its BMC. */
export interface RotationCandidate extends Candidate {
  address: string;
  protocol: 'redfish' | 'ipmi' | 'snmp';
  credentialRef: string;
  /** The version in force on the node (null: the reference's default in the store). */
  inForce: string | null;
  /** The poller's latch holds the version in force. */
  latched: boolean;
  /** Another rotation's step fences the node now. */
  fenced: boolean;
}

export interface RotationSelector {
  sites?: string[];
  racks?: string[];
  vendors?: string[];
  models?: string[];
  nodes?: string[];
  credentialRefs?: string[];
  /** Only the nodes the poller's latch holds (a BMC reset to its factory password comes back this way). */
  latchedOnly?: boolean;
}

export interface RotationRequest {
  selector: RotationSelector;
  seed: number;
  canaryFraction?: number;
  waveFractions?: number[];
  capPerSite?: number;
  inFlightDomainLimits?: z.output<typeof domainLimitsSchema>;
  budgets?: Partial<RotationPlan['budgets']>;
  bakeMs?: number;
  fenceGraceMs?: number;
  lockoutThreshold?: number;
  retryBudget?: number;
  stepDeadlineMs?: number;
  factoryFallback?: { credentialRef: string } | null;
  retireOld?: boolean;
  approvalsRequired?: number;
}

export const rotationDefaults = {
  canaryFraction: 0.01,
  waveFractions: [0.02, 0.05, 0.1, 0.25],
  capPerSite: 50,
  inFlightDomainLimits: { rack: 4 },
  budgets: { canaryFailures: 0, waveFailureRatio: 0.02, cumulativeFailureRatio: 0.01 },
  bakeMs: 5 * 60_000,
  /** The poller's request deadline (10 s by default) and its follow of the log, with room. */
  fenceGraceMs: 20_000,
  lockoutThreshold: 3,
  retryBudget: 1,
  stepDeadlineMs: 30 * 60_000,
} as const;

export const ROTATION_DEFINITION_VERSION = 1;

/** The frozen plan. `hash` (sha256 hex of a string) is passed in: the planner does no I/O. */
export function planRotation(request: RotationRequest, candidates: readonly RotationCandidate[], hash: (text: string) => string): RotationPlan {
  const selector = request.selector;
  const excluded: RotationPlan['excluded'] = [];
  const byId = new Map<string, RotationCandidate>();
  const eligible: Candidate[] = [];
  const within = (list: string[] | undefined, value: string | undefined): boolean => !list || list.length === 0 || (value !== undefined && list.includes(value));
  for (const candidate of [...candidates].sort((a, b) => (a.nodeId < b.nodeId ? -1 : a.nodeId > b.nodeId ? 1 : 0))) {
    const selected = within(selector.sites, candidate.site) && within(selector.racks, candidate.rack) && within(selector.vendors, candidate.vendor) && within(selector.models, candidate.model) && within(selector.nodes, candidate.nodeId) && within(selector.credentialRefs, candidate.credentialRef) && (!selector.latchedOnly || candidate.latched);
    if (!selected) continue;
    const reason = candidate.decommissioned ? 'decommissioned' : candidate.cordoned ? 'cordoned' : candidate.protocol === 'snmp' ? 'an SNMP device: its community is no BMC account' : candidate.protocol === 'ipmi' ? 'an IPMI-only BMC: its password is changed with ipmitool user set password, not wired to rotations yet' : candidate.fenced ? 'another rotation holds it now' : undefined;
    if (reason) {
      excluded.push({ nodeId: candidate.nodeId, reason });
      continue;
    }
    byId.set(candidate.nodeId, candidate);
    // The stratum's "from version" is the credential version in force: the canary holds one BMC of each.
    eligible.push({ ...candidate, fromVersion: candidate.inForce ?? 'default', cordoned: false, decommissioned: false, notUpdateable: false });
  }
  const cohorts = planRollout(
    {
      firmware: { component: 'credential', version: 'rotation', imageUri: 'none', method: 'SimpleUpdate', applyTime: 'Immediate' },
      selector: {},
      seed: request.seed,
      ...(request.canaryFraction !== undefined ? { canaryFraction: request.canaryFraction } : {}),
      waveFractions: request.waveFractions ?? [...rotationDefaults.waveFractions],
    },
    eligible,
    hash,
  );
  const targets: RotationTarget[] = cohorts.targets.map((target) => {
    const candidate = byId.get(target.nodeId)!;
    return {
      nodeId: target.nodeId,
      site: target.site,
      rack: target.rack,
      pdu: target.pdu,
      tor: target.tor,
      cdu: target.cdu,
      vendor: target.vendor,
      model: target.model,
      stratum: target.stratum,
      wave: target.wave,
      address: candidate.address,
      protocol: candidate.protocol,
      credentialRef: candidate.credentialRef,
      fromVersion: candidate.inForce,
      latched: candidate.latched,
    };
  });
  const unsigned: Omit<RotationPlan, 'planHash'> = {
    selector: { ...selector },
    targets,
    excluded,
    waves: cohorts.waves,
    seed: request.seed,
    capPerSite: request.capPerSite ?? rotationDefaults.capPerSite,
    inFlightDomainLimits: request.inFlightDomainLimits ?? { ...rotationDefaults.inFlightDomainLimits },
    budgets: { ...rotationDefaults.budgets, ...request.budgets },
    bakeMs: request.bakeMs ?? rotationDefaults.bakeMs,
    fenceGraceMs: request.fenceGraceMs ?? rotationDefaults.fenceGraceMs,
    lockoutThreshold: request.lockoutThreshold ?? rotationDefaults.lockoutThreshold,
    retryBudget: request.retryBudget ?? rotationDefaults.retryBudget,
    stepDeadlineMs: request.stepDeadlineMs ?? rotationDefaults.stepDeadlineMs,
    factoryFallback: request.factoryFallback ?? null,
    retireOld: request.retireOld ?? true,
    approvalsRequired: request.approvalsRequired ?? 1,
    definitionVersion: ROTATION_DEFINITION_VERSION,
  };
  return { ...unsigned, planHash: hash(JSON.stringify(unsigned)) };
}
