/**
 * The rollout request as `rollout plan` and `rollout start` build it from flags: every policy the API takes (the
 * selection, the strategy, the failure budgets, the retry budget, the gate, and the step's timing), each flag
 * checked here with an error that names it. What a flag leaves out is the planner's default, which `plan` prints.
 */
import { durationMs, UsageError } from './api-client.js';

export const rolloutRequestOptions = {
  component: { type: 'string' },
  version: { type: 'string' },
  image: { type: 'string' },
  digest: { type: 'string' },
  method: { type: 'string' },
  'apply-time': { type: 'string' },
  // selection
  sites: { type: 'string' },
  racks: { type: 'string' },
  models: { type: 'string' },
  vendors: { type: 'string' },
  nodes: { type: 'string' },
  'from-versions': { type: 'string' },
  // strategy
  cap: { type: 'string' },
  'rack-limit': { type: 'string' },
  'pdu-limit': { type: 'string' },
  'tor-limit': { type: 'string' },
  'cdu-limit': { type: 'string' },
  'wave-rack-limit': { type: 'string' },
  'wave-pdu-limit': { type: 'string' },
  'wave-tor-limit': { type: 'string' },
  'wave-cdu-limit': { type: 'string' },
  canary: { type: 'string' },
  waves: { type: 'string' },
  bake: { type: 'string' },
  seed: { type: 'string' },
  approvals: { type: 'string' },
  // budgets
  'retry-budget': { type: 'string' },
  'canary-failures': { type: 'string' },
  'wave-failure-ratio': { type: 'string' },
  'cumulative-failure-ratio': { type: 'string' },
  // verification and gate
  'verify-reads': { type: 'string' },
  'gate-max-lag': { type: 'string' },
  'gate-max-lag-positions': { type: 'string' },
  'manual-advance': { type: 'boolean' },
  // step timing
  'quiet-period': { type: 'string' },
  'step-deadline': { type: 'string' },
  settle: { type: 'string' },
  'retry-backoff': { type: 'string' },
  'request-timeout': { type: 'string' },
  'poll-interval': { type: 'string' },
  'read-interval': { type: 'string' },
  'probe-interval': { type: 'string' },
} as const;

export const rolloutRequestUsage = `  firmware:  --component C --version V --image URI [--digest SHA256] [--method SimpleUpdate|MultipartHttpPush]
             [--apply-time Immediate|OnReset]
  selection: --sites a,b --racks r1,r2 --models M --vendors V --nodes n1,n2 --from-versions v1,v2
  strategy:  --cap N (nodes in flight per site) --rack-limit N --pdu-limit N --tor-limit N --cdu-limit N (in flight
             per domain) --wave-rack-limit N ... --wave-cdu-limit N (per domain in one wave) --canary FRACTION
             --waves 0.02,0.05,... --bake DURATION --seed N --approvals 1|2
  budgets:   --retry-budget N (attempts after the first, per node) --canary-failures N --wave-failure-ratio R
             --cumulative-failure-ratio R
  checks:    --verify-reads N (consecutive reads of the target version) --gate-max-lag DURATION
             --gate-max-lag-positions N --manual-advance (each wave waits for 'advance')
  timing:    --quiet-period D (an unclear attempt waits this long without a sign of work before it is judged)
             --step-deadline D --settle D (old version showing after a task's end or a reset) --retry-backoff D
             --request-timeout D --poll-interval D (task reads) --read-interval D (version reads) --probe-interval D
  'rollout plan' prints every default it applied.`;

type Values = Record<string, string | boolean | undefined>;

function text(values: Values, flag: string): string | undefined {
  const value = values[flag];
  return typeof value === 'string' ? value : undefined;
}

function integer(values: Values, flag: string, min: number): number | undefined {
  const raw = text(values, flag);
  if (raw === undefined) return undefined;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min) throw new UsageError(`--${flag} must be an integer of at least ${min}, got '${raw}'`);
  return value;
}

function ratio(values: Values, flag: string): number | undefined {
  const raw = text(values, flag);
  if (raw === undefined) return undefined;
  const value = Number(raw);
  if (raw.trim() === '' || !Number.isFinite(value) || value < 0 || value > 1) throw new UsageError(`--${flag} must be a fraction between 0 and 1, got '${raw}'`);
  return value;
}

function duration(values: Values, flag: string): number | undefined {
  const raw = text(values, flag);
  if (raw === undefined) return undefined;
  try {
    return durationMs(raw);
  } catch {
    throw new UsageError(`--${flag} must be a duration (500ms, 90s, 30m, 2h), got '${raw}'`);
  }
}

function list(values: Values, flag: string): string[] | undefined {
  const raw = text(values, flag);
  return raw === undefined ? undefined : raw.split(',').map((item) => item.trim()).filter(Boolean);
}

/** Drops the keys whose value is undefined, and the object itself when nothing is left. */
function defined<T extends Record<string, unknown>>(object: T): Partial<T> | undefined {
  const entries = Object.entries(object).filter(([, value]) => value !== undefined);
  return entries.length ? (Object.fromEntries(entries) as Partial<T>) : undefined;
}

/** The body of `POST /v1/rollouts/preview` and `POST /v1/rollouts` from the flags. */
export function rolloutRequestOf(values: Values): Record<string, unknown> {
  const need = (flag: string): string => {
    const value = text(values, flag);
    if (value === undefined || value === '') throw new UsageError(`--${flag} is required`);
    return value;
  };
  const method = text(values, 'method');
  if (method !== undefined && method !== 'SimpleUpdate' && method !== 'MultipartHttpPush') throw new UsageError(`--method must be SimpleUpdate or MultipartHttpPush, got '${method}'`);
  const applyTime = text(values, 'apply-time');
  if (applyTime !== undefined && applyTime !== 'Immediate' && applyTime !== 'OnReset') throw new UsageError(`--apply-time must be Immediate or OnReset, got '${applyTime}'`);
  const waves = list(values, 'waves')?.map((item) => {
    const value = Number(item);
    if (!Number.isFinite(value) || value <= 0 || value > 1) throw new UsageError(`--waves takes fractions between 0 and 1, got '${item}'`);
    return value;
  });
  const seed = text(values, 'seed');
  if (seed !== undefined && !Number.isInteger(Number(seed))) throw new UsageError(`--seed must be an integer, got '${seed}'`);
  const selector = defined({ sites: list(values, 'sites'), racks: list(values, 'racks'), models: list(values, 'models'), vendors: list(values, 'vendors'), nodes: list(values, 'nodes'), fromVersions: list(values, 'from-versions') }) ?? {};
  const limits = (prefix: string) => defined({ rack: integer(values, `${prefix}rack-limit`, 1), pdu: integer(values, `${prefix}pdu-limit`, 1), tor: integer(values, `${prefix}tor-limit`, 1), cdu: integer(values, `${prefix}cdu-limit`, 1) });
  const request = {
    firmware: { component: need('component'), version: need('version'), imageUri: need('image'), digest: text(values, 'digest'), method, applyTime },
    selector,
    seed: seed === undefined ? undefined : Number(seed),
    capPerSite: integer(values, 'cap', 1),
    inFlightDomainLimits: limits(''),
    waveDomainLimits: limits('wave-'),
    canaryFraction: ratio(values, 'canary'),
    waveFractions: waves,
    bakeMs: duration(values, 'bake'),
    approvalsRequired: integer(values, 'approvals', 1),
    retryBudget: integer(values, 'retry-budget', 0),
    budgets: defined({ canaryFailures: integer(values, 'canary-failures', 0), waveFailureRatio: ratio(values, 'wave-failure-ratio'), cumulativeFailureRatio: ratio(values, 'cumulative-failure-ratio') }),
    verifyReads: integer(values, 'verify-reads', 1),
    gate: defined({ maxLagMs: duration(values, 'gate-max-lag'), maxLagPositions: integer(values, 'gate-max-lag-positions', 0), autoAdvance: values['manual-advance'] === true ? false : undefined }),
    quietPeriodMs: duration(values, 'quiet-period'),
    stepDeadlineMs: duration(values, 'step-deadline'),
    stepTiming: defined({
      settleMs: duration(values, 'settle'),
      retryBackoffMs: duration(values, 'retry-backoff'),
      requestTimeoutMs: duration(values, 'request-timeout'),
      pollIntervalMs: duration(values, 'poll-interval'),
      readIntervalMs: duration(values, 'read-interval'),
      probeIntervalMs: duration(values, 'probe-interval'),
    }),
  };
  return JSON.parse(JSON.stringify(request)) as Record<string, unknown>; // without the undefined keys
}

const seconds = (ms: number | undefined): string => (ms === undefined ? 'engine default' : ms % 3_600_000 === 0 ? `${ms / 3_600_000}h` : ms % 60_000 === 0 ? `${ms / 60_000}m` : ms % 1_000 === 0 ? `${ms / 1_000}s` : `${ms}ms`);

/** The policy a plan applies, flags and defaults alike, one line per family (what `rollout plan` prints). */
export function describePolicy(plan: any): string {
  const limits = (value: Record<string, number> | undefined): string => {
    const entries = Object.entries(value ?? {});
    return entries.length ? entries.map(([domain, limit]) => `${domain} ${limit}`).join(', ') : 'none';
  };
  const timing = plan.stepTiming ?? {};
  return [
    `policy (flags given, defaults for the rest):`,
    `  strategy: cap ${plan.capPerSite} per site; in flight per domain: ${limits(plan.inFlightDomainLimits)}; per wave: ${limits(plan.waveDomainLimits)}; bake ${seconds(plan.bakeMs)}; approvals ${plan.approvalsRequired}`,
    `  budgets:  retry budget ${plan.retryBudget} (${plan.retryBudget + 1} attempts per node); canary failures ${plan.budgets.canaryFailures}; wave failure ratio ${plan.budgets.waveFailureRatio}; cumulative failure ratio ${plan.budgets.cumulativeFailureRatio}`,
    `  checks:   verify reads ${plan.verifyReads}; gate max lag ${seconds(plan.gate.maxLagMs)} / ${plan.gate.maxLagPositions} positions; ${plan.gate.autoAdvance ? 'waves advance on a passed gate' : "each wave waits for 'rollout advance'"}`,
    `  timing:   quiet period ${seconds(plan.quietPeriodMs)}; step deadline ${seconds(plan.stepDeadlineMs)}; settle ${seconds(timing.settleMs)}; retry back-off ${seconds(timing.retryBackoffMs)}; request timeout ${seconds(timing.requestTimeoutMs)}; task reads every ${seconds(timing.pollIntervalMs)}, version reads every ${seconds(timing.readIntervalMs)}, probes every ${seconds(timing.probeIntervalMs)}`,
  ].join('\n');
}
