/**
 * The rollout planner: pure, so `preview` and `start` compute the same plan and a test can check every promise of
 * it without a database. From the fleet's candidates and a request it makes the frozen plan that `RolloutPlanned`
 * records:
 * - targets are the selected nodes; cordoned and decommissioned nodes are excluded with the reason;
 * - the canary holds one node per stratum (vendor, model, from-version) with at most one node per rack, and at least
 *   `canaryFraction` of the targets;
 * - later waves grow (2%, 5%, 10%, 25%, rest by default) and take racks round-robin, so a wave spreads out;
 * - no wave holds more nodes of one rack, PDU, ToR or CDU than `waveDomainLimits` allows (overflow moves to the
 *   next wave, and waves are added at the end if needed);
 * - the cohort choice is a seeded shuffle, and the seed is in the plan.
 */
import type { z } from 'zod';
import { defaultRequestTimeoutMs, defaultStepTiming } from './step-decide.js';
import type { domainLimitsSchema, firmwareImageSchema, rolloutPlanSchema, rolloutTargetSchema, stepTimingSchema } from '../../events/index.js';

export type FirmwareImage = z.output<typeof firmwareImageSchema>;
export type DomainLimits = z.output<typeof domainLimitsSchema>;
export type RolloutPlan = z.output<typeof rolloutPlanSchema>;
export type RolloutTarget = z.output<typeof rolloutTargetSchema>;
export type StepTimingPolicy = z.output<typeof stepTimingSchema>;
export type Domain = 'rack' | 'pdu' | 'tor' | 'cdu';
export const domains: readonly Domain[] = ['rack', 'pdu', 'tor', 'cdu'];

/** One node as the projections see it. */
export interface Candidate {
  nodeId: string;
  site: string;
  rack: string;
  pdu?: string | undefined;
  tor?: string | undefined;
  cdu?: string | undefined;
  vendor?: string | undefined;
  model?: string | undefined;
  /** The component's installed version as last observed, when known. */
  fromVersion?: string | undefined;
  cordoned?: boolean;
  decommissioned?: boolean;
  /** The BMC states the component cannot be updated (Redfish `Updateable: false`): excluded, never dispatched. */
  notUpdateable?: boolean;
}

export interface RolloutSelector {
  sites?: string[];
  racks?: string[];
  vendors?: string[];
  models?: string[];
  nodes?: string[];
  fromVersions?: string[];
}

export interface RolloutRequest {
  firmware: FirmwareImage;
  selector: RolloutSelector;
  seed: number;
  canaryFraction?: number;
  /** Sizes of the waves after the canary, as fractions of all targets; the last wave takes the rest. */
  waveFractions?: number[];
  capPerSite?: number;
  inFlightDomainLimits?: DomainLimits;
  waveDomainLimits?: DomainLimits;
  budgets?: Partial<RolloutPlan['budgets']>;
  bakeMs?: number;
  verifyReads?: number;
  retryBudget?: number;
  stepDeadlineMs?: number;
  quietPeriodMs?: number;
  gate?: Partial<RolloutPlan['gate']>;
  stepTiming?: StepTimingPolicy;
  approvalsRequired?: number;
}

export const plannerDefaults = {
  canaryFraction: 0.01,
  waveFractions: [0.02, 0.05, 0.1, 0.25],
  capPerSite: 50,
  inFlightDomainLimits: { rack: 2, pdu: 4, tor: 4, cdu: 8 } satisfies DomainLimits,
  budgets: { canaryFailures: 0, waveFailureRatio: 0.02, cumulativeFailureRatio: 0.01 },
  bakeMs: 30 * 60_000,
  verifyReads: 3,
  retryBudget: 1,
  stepDeadlineMs: 2 * 3_600_000,
  quietPeriodMs: 10 * 60_000,
  gate: { maxLagPositions: 50_000, maxLagMs: 120_000, autoAdvance: true },
  /** The step's pace (see `StepTiming` in `step-decide.ts`, whose defaults these are, plus a BMC request's deadline). */
  stepTiming: {
    pollIntervalMs: defaultStepTiming.pollIntervalMs,
    readIntervalMs: defaultStepTiming.readIntervalMs,
    probeIntervalMs: defaultStepTiming.probeIntervalMs,
    settleMs: defaultStepTiming.settleMs,
    retryBackoffMs: defaultStepTiming.retryBackoffMs,
    requestTimeoutMs: defaultRequestTimeoutMs,
  },
} as const;

export const ROLLOUT_DEFINITION_VERSION = 1;

/** mulberry32: a small seeded generator, so a plan is reproducible from its seed. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

function shuffled<T>(items: readonly T[], random: () => number): T[] {
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

function selects(selector: RolloutSelector, candidate: Candidate): boolean {
  const within = (list: string[] | undefined, value: string | undefined): boolean => !list || list.length === 0 || (value !== undefined && list.includes(value));
  return (
    within(selector.sites, candidate.site) &&
    within(selector.racks, candidate.rack) &&
    within(selector.vendors, candidate.vendor) &&
    within(selector.models, candidate.model) &&
    within(selector.nodes, candidate.nodeId) &&
    within(selector.fromVersions, candidate.fromVersion)
  );
}

export function domainOf(target: Pick<RolloutTarget, 'site' | Domain>, domain: Domain): string {
  return `${target.site}/${target[domain]}`;
}

/** Interleaves racks: the first node of every rack, then the second of every rack, and so on. */
function roundRobinByRack(nodes: RolloutTarget[]): RolloutTarget[] {
  const byRack = new Map<string, RolloutTarget[]>();
  for (const node of nodes) {
    const key = domainOf(node, 'rack');
    const list = byRack.get(key);
    if (list) list.push(node);
    else byRack.set(key, [node]);
  }
  const queues = [...byRack.values()];
  const out: RolloutTarget[] = [];
  for (let round = 0; out.length < nodes.length; round++) {
    for (const queue of queues) if (round < queue.length) out.push(queue[round]!);
  }
  return out;
}

export type UnsignedPlan = Omit<RolloutPlan, 'planHash'>;

/** Computes the plan. `hash` (sha256 hex of a string) is passed in: the planner itself does no I/O. */
export function planRollout(request: RolloutRequest, candidates: readonly Candidate[], hash: (text: string) => string): RolloutPlan {
  const random = seededRandom(request.seed);
  const excluded: RolloutPlan['excluded'] = [];
  const chosen: RolloutTarget[] = [];
  for (const candidate of [...candidates].sort((a, b) => (a.nodeId < b.nodeId ? -1 : a.nodeId > b.nodeId ? 1 : 0))) {
    if (!selects(request.selector, candidate)) continue;
    if (candidate.decommissioned) {
      excluded.push({ nodeId: candidate.nodeId, reason: 'decommissioned' });
      continue;
    }
    if (candidate.cordoned) {
      excluded.push({ nodeId: candidate.nodeId, reason: 'cordoned' });
      continue;
    }
    if (candidate.notUpdateable) {
      excluded.push({ nodeId: candidate.nodeId, reason: 'not updateable (the BMC states Updateable: false for the component)' });
      continue;
    }
    const vendor = candidate.vendor ?? 'unknown';
    const model = candidate.model ?? 'unknown';
    const fromVersion = candidate.fromVersion ?? 'unknown';
    chosen.push({
      nodeId: candidate.nodeId,
      site: candidate.site,
      rack: candidate.rack,
      pdu: candidate.pdu ?? '',
      tor: candidate.tor ?? '',
      cdu: candidate.cdu ?? '',
      vendor,
      model,
      fromVersion,
      stratum: `${vendor}|${model}|${fromVersion}`,
      wave: 0,
    });
  }

  const waveLimits = request.waveDomainLimits ?? {};
  const order = shuffled(chosen, random);
  const total = order.length;

  // Canary: one per stratum first (never two in one rack), then fill to the canary fraction, still one per rack.
  const canary: RolloutTarget[] = [];
  const canaryRacks = new Set<string>();
  const taken = new Set<string>();
  const canaryCounts = new Map<string, number>();
  const take = (node: RolloutTarget): void => {
    canary.push(node);
    count(canaryCounts, node);
    canaryRacks.add(domainOf(node, 'rack'));
    taken.add(node.nodeId);
  };
  const strata = [...new Set(order.map((node) => node.stratum))].sort();
  for (const stratum of strata) {
    const pick = order.find((node) => node.stratum === stratum && !canaryRacks.has(domainOf(node, 'rack')) && fitsLimits(canaryCounts, node, waveLimits));
    if (pick) take(pick);
  }
  const canaryTarget = Math.min(total, Math.max(canary.length, Math.ceil((request.canaryFraction ?? plannerDefaults.canaryFraction) * total)));
  for (const node of order) {
    if (canary.length >= canaryTarget) break;
    if (!taken.has(node.nodeId) && !canaryRacks.has(domainOf(node, 'rack')) && fitsLimits(canaryCounts, node, waveLimits)) take(node);
  }

  // Later waves: growing sizes, racks interleaved, overflow of a domain limit carried to the next wave.
  const fractions = request.waveFractions ?? plannerDefaults.waveFractions;
  const waves: RolloutTarget[][] = [canary];
  let pending = roundRobinByRack(order.filter((node) => !taken.has(node.nodeId)));
  let fractionIndex = 0;
  while (pending.length > 0) {
    const fraction = fractions[fractionIndex++];
    const size = fraction === undefined ? pending.length : Math.max(1, Math.round(fraction * total));
    const wave: RolloutTarget[] = [];
    const counts = new Map<string, number>();
    const carried: RolloutTarget[] = [];
    for (const node of pending) {
      if (wave.length < size && fitsLimits(counts, node, waveLimits)) {
        wave.push(node);
        count(counts, node);
      } else carried.push(node);
    }
    waves.push(wave);
    pending = carried;
  }

  const targets = waves.flatMap((wave, index) => wave.map((node) => ({ ...node, wave: index })));
  const unsigned: UnsignedPlan = {
    firmware: request.firmware,
    selector: { ...request.selector },
    targets,
    excluded,
    waves: waves.map((wave, index) => ({ index, size: wave.length, canary: index === 0 })),
    seed: request.seed,
    capPerSite: request.capPerSite ?? plannerDefaults.capPerSite,
    inFlightDomainLimits: request.inFlightDomainLimits ?? { ...plannerDefaults.inFlightDomainLimits },
    waveDomainLimits: waveLimits,
    budgets: { ...plannerDefaults.budgets, ...request.budgets },
    bakeMs: request.bakeMs ?? plannerDefaults.bakeMs,
    verifyReads: request.verifyReads ?? plannerDefaults.verifyReads,
    retryBudget: request.retryBudget ?? plannerDefaults.retryBudget,
    stepDeadlineMs: request.stepDeadlineMs ?? plannerDefaults.stepDeadlineMs,
    quietPeriodMs: request.quietPeriodMs ?? plannerDefaults.quietPeriodMs,
    gate: { ...plannerDefaults.gate, ...request.gate },
    stepTiming: { ...plannerDefaults.stepTiming, ...request.stepTiming },
    approvalsRequired: request.approvalsRequired ?? 1,
    definitionVersion: ROLLOUT_DEFINITION_VERSION,
  };
  return { ...unsigned, planHash: hash(JSON.stringify(unsigned)) };
}

/** True when adding `node` to a wave whose domain counts are `counts` keeps every domain within its limit. */
function fitsLimits(counts: ReadonlyMap<string, number>, node: RolloutTarget, limits: DomainLimits): boolean {
  for (const domain of domains) {
    const limit = limits[domain];
    if (limit === undefined || node[domain] === '') continue;
    if ((counts.get(`${domain}:${domainOf(node, domain)}`) ?? 0) >= limit) return false;
  }
  return true;
}

function count(counts: Map<string, number>, node: RolloutTarget): void {
  for (const domain of domains) {
    if (node[domain] === '') continue;
    const key = `${domain}:${domainOf(node, domain)}`;
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
}
