/**
 * What a fault is, as written in a scenario event or posted to `/sim/faults`: its kind, whom it hits (BMC ids,
 * racks, PDUs, ToR switches, CDUs, sites, or everything), for how long, and its kind's own parameters.
 */
import { z } from 'zod';
import { durationMs } from './duration.ts';
import { SimError, describeIssues } from './errors.ts';
import { EVENT_FAULT_KINDS } from './events/event-faults.ts';

export const FAULT_KINDS = [
  /** Power or network lost: the BMC answers nothing (requests hang, or are dropped in `refuse` dark mode). */
  'dark',
  /** Alternates dark (`down`) and answering (`up`) until the duration ends. */
  'flap',
  /** Every response takes `factor` times longer. */
  'slow',
  /** The controller resets now: dark for the duration (default `resetDark`), sessions dropped. */
  'reset',
  /** The password changes (to `password`, or a generated one); it persists across resets. */
  'rotate-password',
  /** The account is locked out for the duration, as after repeated bad logins. */
  'lockout',
  /** The next `count` password changes (AccountService PATCH) are refused with the vendor's password-policy error. */
  'password-policy',
  /** The BMC is reset to its factory settings: its password is the vendor's factory one again, and it resets (dark for the duration, default `resetDark`). */
  'factory-reset',
  /** The next `count` firmware updates fail. */
  'firmware-failure',
  /** The next `count` updates (of images containing `image`, if given) go wrong the way `mode` says. */
  'update-fault',
  /** The BMC serves a new key and certificate from now on (a reflash, or a machine impersonating it); needs `tls`. */
  'certificate-replaced',
  /**
   * Events (`events/event-faults.ts`): `health` (the system's health becomes `health`, announced as an event),
   * `push-silent` (streams accepted and listed, nothing sent), `push-stall` (the open streams stop for good),
   * `push-connection-cap` (at most `count` event connections), `push-duplicate` (every event twice), `push-reorder`
   * (events in swapped pairs).
   */
  ...EVENT_FAULT_KINDS,
] as const;

export type FaultKind = (typeof FAULT_KINDS)[number];

const ids = z.union([z.string().min(1), z.array(z.string().min(1)).min(1)]).transform((value) => (Array.isArray(value) ? value : [value]));

export const faultTargetSchema = z
  .strictObject({
    bmc: ids,
    rack: ids,
    pdu: ids,
    tor: ids,
    cdu: ids,
    site: ids,
    all: z.literal(true),
  })
  .partial()
  .refine((target) => Object.keys(target).length > 0, { message: 'name at least one of bmc, rack, pdu, tor, cdu, site, all' });

export const faultSpecShape = {
  fault: z.enum(FAULT_KINDS),
  target: faultTargetSchema,
  duration: durationMs.optional(),
  /** flap: how long each dark and each answering phase lasts. */
  down: durationMs.optional(),
  up: durationMs.optional(),
  /** slow: response-time multiplier. */
  factor: z.number().positive().optional(),
  /** rotate-password: the new password. */
  password: z.string().min(1).optional(),
  /** firmware-failure, update-fault: how many updates are hit; password-policy: how many password changes; push-connection-cap: the cap. */
  count: z.number().int().positive().optional(),
  /**
   * update-fault: fail, purge-task (404 when it ends), completed-critical (nothing applied), reset-mid-update (the BMC
   * resets halfway and comes back at the old version with no task), lost-after-running (the task reads Running, then
   * 404 halfway; nothing applied, no reset), lost-response, refuse-image (400 naming the image, nothing started).
   */
  mode: z.enum(['fail', 'purge-task', 'completed-critical', 'reset-mid-update', 'lost-after-running', 'lost-response', 'refuse-image']).optional(),
  /** health: the system health it becomes (default Critical). */
  health: z.enum(['OK', 'Warning', 'Critical']).optional(),
  /** update-fault: only updates whose image URI contains this. */
  image: z.string().min(1).optional(),
};

const NEEDS_DURATION: ReadonlySet<FaultKind> = new Set(['dark', 'flap', 'slow', 'lockout']);

/** Adds the rule a shape alone cannot say: dark, flap, slow and lockout end, so they need a duration. */
export function requireDuration(spec: { fault: FaultKind; duration?: number | undefined }, context: z.RefinementCtx): void {
  if (NEEDS_DURATION.has(spec.fault) && spec.duration === undefined) {
    context.addIssue({ code: 'custom', path: ['duration'], message: `required for ${spec.fault}` });
  }
}

export const faultSpecSchema = z.strictObject(faultSpecShape).superRefine(requireDuration);
export type FaultSpec = z.output<typeof faultSpecSchema>;
export type FaultSpecInput = z.input<typeof faultSpecSchema>;
export type FaultTarget = z.output<typeof faultTargetSchema>;

/** Validates a fault request. Throws SIM_FAULT_INVALID naming the field and the reason. */
export function parseFaultSpec(input: unknown): FaultSpec {
  const result = faultSpecSchema.safeParse(input);
  if (!result.success) {
    throw new SimError('SIM_FAULT_INVALID', `fault is invalid: ${describeIssues(result.error.issues)}`, {
      issues: result.error.issues.map((issue) => ({ path: issue.path.map(String).join('.'), message: issue.message })),
    });
  }
  return result.data;
}
