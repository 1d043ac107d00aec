/**
 * Scenario files: the fleet (size, vendor and firmware mix), its sites and racks with what feeds each rack (PDU,
 * ToR switch, CDU), the simulator's behaviour, and timed fault events. YAML or JSON, validated with zod; an invalid
 * file is rejected with an error naming the field.
 */
import { readFileSync } from 'node:fs';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import { durationMs } from './duration.ts';
import { SimError, describeIssues } from './errors.ts';
import { faultSpecShape, requireDuration } from './fault-spec.ts';
import { servingQuirksSchema } from './serving-quirks.ts';

const firmwareRevision = z.strictObject({
  version: z.string().min(1),
  share: z.number().nonnegative(),
  stale: z.boolean().optional(),
});

const slowResource = z.strictObject({
  pattern: z.string().min(1).refine((source) => {
    try {
      new RegExp(source);
      return true;
    } catch {
      return false;
    }
  }, 'not a valid regular expression'),
  latency: durationMs,
});

const mixEntry = z
  .strictObject({
    /**
     * A built-in vendor profile (`dell`, `hpe`, ...), a capture folder's name inside the simulator's `captures`
     * folder, or a path to any Mockup-Creator folder.
     */
    profile: z.string().min(1).optional(),
    /** The older name of `profile`, still read. */
    fixture: z.string().min(1).optional(),
    share: z.number().positive().optional(),
    count: z.number().int().nonnegative().optional(),
    sessionLimit: z.number().int().positive().optional(),
    firmware: z.array(firmwareRevision).min(1).optional(),
    /** Replaces the profile's slow resources: a path pattern (regular expression) and its response time. */
    slowResources: z.array(slowResource).optional(),
    /** How these BMCs serve their tree beyond their profile: redirects, placeholders (`serving-quirks.ts`). */
    serving: servingQuirksSchema.optional(),
  })
  .refine((entry) => entry.share === undefined || entry.count === undefined, { message: 'give share or count, not both' })
  .refine((entry) => (entry.profile === undefined) !== (entry.fixture === undefined), {
    message: 'give profile (a vendor profile name or a path to a Mockup-Creator folder), or its older name fixture, once',
  })
  .transform(({ profile, fixture, ...rest }) => ({ ...rest, fixture: (profile ?? fixture) as string }));

const rackEntry = z.strictObject({
  id: z.string().min(1),
  nodes: z.number().int().positive(),
  pdu: z.string().min(1),
  tor: z.string().min(1),
  cdu: z.string().min(1),
});

const site = z.strictObject({
  id: z.string().min(1).regex(/^[A-Za-z0-9_.-]+$/, 'letters, digits, _ . - only'),
  /** Either a number of racks laid out by the fields below, or the racks one by one. */
  racks: z.union([z.number().int().positive(), z.array(rackEntry).min(1)]),
  nodesPerRack: z.number().int().positive().default(32),
  racksPerPdu: z.number().int().positive().default(1),
  racksPerTor: z.number().int().positive().default(1),
  racksPerCdu: z.number().int().positive().default(4),
});

const behaviour = z
  .strictObject({
    overloadAfter: durationMs,
    resetDark: durationMs,
    sessionIdleTimeout: durationMs,
    lockoutThreshold: z.number().int().positive(),
    lockoutDuration: durationMs,
    firmwareUpdateDuration: durationMs,
    firmwareFailureRate: z.number().min(0).max(1),
    imageFailureRates: z.record(z.string().min(1), z.number().min(0).max(1)),
    darkMode: z.enum(['hang', 'refuse']),
    latencyScale: z.number().nonnegative(),
  })
  .partial();

const event = z
  .strictObject({
    at: durationMs,
    ...faultSpecShape,
  })
  .superRefine(requireDuration);

/** Faults at random: one BMC of the target at a time, at exponential intervals averaging `every`. */
const randomFault = z.strictObject({
  ...faultSpecShape,
  target: faultSpecShape.target.optional(),
  every: durationMs.refine((ms) => ms > 0, 'must be above zero'),
}).superRefine(requireDuration);

export const scenarioSchema = z.strictObject({
  name: z.string().min(1),
  description: z.string().optional(),
  seed: z.number().int().default(1),
  /** Simulated seconds per real second. */
  clockFactor: z.number().positive().default(1),
  addressing: z.enum(['auto', 'per-address', 'wildcard', 'path-prefix']).default('auto'),
  port: z.number().int().min(0).max(65535).optional(),
  fleet: z.strictObject({
    /** Total BMCs; required without `sites`, must match the racks when both are given. */
    bmcs: z.number().int().positive().optional(),
    /** How many units have no record anywhere: they run a stale revision and are marked `recorded: false`. */
    unrecorded: z.number().int().nonnegative().default(0),
    mix: z.array(mixEntry).min(1),
  }),
  sites: z.array(site).min(1).optional(),
  behaviour: behaviour.default({}),
  events: z.array(event).default([]),
  randomFaults: z.array(randomFault).default([]),
});

export type Scenario = z.output<typeof scenarioSchema>;
export type ScenarioInput = z.input<typeof scenarioSchema>;

/** Validates a parsed scenario. Throws SIM_SCENARIO_INVALID naming the field and the reason. */
export function parseScenario(input: unknown, origin = 'scenario'): Scenario {
  const result = scenarioSchema.safeParse(input);
  if (!result.success) {
    throw new SimError('SIM_SCENARIO_INVALID', `${origin} is invalid: ${describeIssues(result.error.issues)}`, {
      origin,
      issues: result.error.issues.map((issue) => ({ path: issue.path.map(String).join('.'), message: issue.message })),
    });
  }
  const scenario = result.data;
  if (!scenario.sites && scenario.fleet.bmcs === undefined) {
    throw new SimError('SIM_SCENARIO_INVALID', `${origin} is invalid: fleet.bmcs: required when no sites are given`, { origin });
  }
  if (scenario.sites && scenario.fleet.bmcs !== undefined) {
    const total = scenario.sites.reduce(
      (sum, entry) => sum + (typeof entry.racks === 'number' ? entry.racks * entry.nodesPerRack : entry.racks.reduce((n, rack) => n + rack.nodes, 0)),
      0,
    );
    if (total !== scenario.fleet.bmcs) {
      throw new SimError('SIM_SCENARIO_INVALID', `${origin} is invalid: fleet.bmcs: ${scenario.fleet.bmcs} does not match the ${total} nodes of the racks in sites`, { origin });
    }
  }
  return scenario;
}

/** Reads and validates a scenario file (`.yaml`, `.yml` or `.json`). */
export function loadScenario(file: string): Scenario {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw new SimError('SIM_SCENARIO_UNREADABLE', `cannot read scenario ${file}: ${(error as Error).message}`, { file });
  }
  let parsed: unknown;
  try {
    parsed = file.endsWith('.json') ? JSON.parse(text) : parseYaml(text);
  } catch (error) {
    throw new SimError('SIM_SCENARIO_INVALID', `${file} is not valid ${file.endsWith('.json') ? 'JSON' : 'YAML'}: ${(error as Error).message}`, { file });
  }
  return parseScenario(parsed, file);
}
