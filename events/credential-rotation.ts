import { z } from 'zod';
import { defineEvent } from './define-event.js';
import { nodeIdSchema, siteIdSchema } from './common.js';
import { domainLimitsSchema } from './saga-progress.js';

/**
 * Credential rotation: the rotation's own stream (`rotation-<id>`) and one stream per BMC
 * (`credstep-<rotationId>-<nodeId>`). Every event names credentials by reference, version and digest, never by
 * secret (the catalogue refuses a payload with a `password` member anyway). A version is what the credential store
 * holds under a reference (`src/credentials`); the version in force on a node is what the last `BmcPasswordChanged`
 * (or `CredentialStepHeld` with a known version) of that node says, else the store's default for its reference.
 *
 * The order the saga writes in is the guarantee: a version is staged in the store and recorded
 * (`CredentialVersionStaged`) before any BMC is asked to take it; a BMC's change is recorded as an intent
 * (`BmcPasswordChangeRequested`) before the PATCH; every login whose answer could be a failure is recorded before it
 * is tried (`BmcLoginAttempted`), so a restarted engine never spends a failed login it cannot count.
 */

const rotationId = z.string().min(1).max(80).regex(/^[A-Za-z0-9][A-Za-z0-9._-]*$/, 'rotation ids use letters, digits and . _ - only');
const credentialRef = z.string().min(1).max(200);
/** A version id of a reference in the credential store (`v2`, or the digest of a secret from a plain credentials file). */
const version = z.string().min(1).max(80);
/** A short digest of reference, version and secret: tells versions apart and lets an auditor check the store, reveals nothing. */
const digest = z.string().min(8).max(64);
const reason = z.string().min(1).max(1000);
const detail = z.string().max(2000);
const instantMs = z.number().int().min(0);
const key = z.string().min(1).max(400);

export const rotationIdSchema = rotationId;

export const rotationTargetSchema = z.object({
  nodeId: nodeIdSchema,
  site: siteIdSchema,
  rack: z.string().max(64),
  pdu: z.string().max(64),
  tor: z.string().max(64),
  cdu: z.string().max(64),
  vendor: z.string().max(200),
  model: z.string().max(200),
  stratum: z.string().max(600),
  wave: z.number().int().min(0),
  /** The BMC's address (as registered) and its protocol: the change goes through Redfish AccountService. */
  address: z.string().min(1).max(300),
  protocol: z.enum(['redfish', 'ipmi', 'snmp']),
  credentialRef,
  /** The version in force when planned; null: the store's default for the reference (resolved when the step starts). */
  fromVersion: version.nullable(),
  /** The poller's lockout latch held the version in force when planned: that version already failed once. */
  latched: z.boolean(),
});

export const rotationPlanSchema = z.object({
  selector: z.record(z.string(), z.unknown()),
  targets: z.array(rotationTargetSchema),
  excluded: z.array(z.object({ nodeId: nodeIdSchema, reason })),
  waves: z.array(z.object({ index: z.number().int().min(0), size: z.number().int().min(0), canary: z.boolean() })),
  seed: z.number().int(),
  capPerSite: z.number().int().min(1),
  inFlightDomainLimits: domainLimitsSchema,
  budgets: z.object({ canaryFailures: z.number().int().min(0), waveFailureRatio: z.number().min(0).max(1), cumulativeFailureRatio: z.number().min(0).max(1) }),
  bakeMs: z.number().int().min(0),
  /** From the fence (CredentialStepStarted) to the change: the poller hears of the fence and its visits end meanwhile. */
  fenceGraceMs: z.number().int().min(0),
  /** Consecutive failed logins that lock the BMCs' accounts out: no login that could fail is tried once one more would reach it. */
  lockoutThreshold: z.number().int().min(2).max(20),
  /** Change attempts per BMC whose outcome was a known refusal that may pass later (busy): never after a failed login. */
  retryBudget: z.number().int().min(0).max(5),
  stepDeadlineMs: z.number().int().min(1),
  /** A reference holding the site root / factory credential, tried once on a BMC whose version in force is refused. */
  factoryFallback: z.object({ credentialRef }).nullable(),
  /** Retire the versions before this rotation's, in one operation, once every node of a reference confirmed the new one. */
  retireOld: z.boolean(),
  approvalsRequired: z.number().int().min(1).max(2),
  planHash: z.string().length(64),
  definitionVersion: z.number().int().min(1),
});

export const CredentialRotationPlanned = defineEvent({
  family: 'saga-progress',
  type: 'CredentialRotationPlanned',
  description: 'A credential rotation is planned: its frozen targets (with the version in force on each), waves, limits and budgets.',
  schema: z.object({ rotationId, plan: rotationPlanSchema }),
});

export const CredentialRotationApproved = defineEvent({
  family: 'saga-progress',
  type: 'CredentialRotationApproved',
  description: 'A principal approved the rotation (the envelope names who).',
  schema: z.object({ rotationId, reason }),
});

export const CredentialRotationStarted = defineEvent({
  family: 'saga-progress',
  type: 'CredentialRotationStarted',
  description: 'The approvals are complete and dispatch may begin.',
  schema: z.object({ rotationId }),
});

export const CredentialVersionStaged = defineEvent({
  family: 'saga-progress',
  type: 'CredentialVersionStaged',
  description: 'The credential store holds a new version of the reference (written and synced there first); no BMC is asked to take a version before this is recorded.',
  schema: z.object({ rotationId, credentialRef, version, digest }),
});

export const CredentialRotationWaveOpened = defineEvent({
  family: 'saga-progress',
  type: 'CredentialRotationWaveOpened',
  description: 'A wave of the rotation opened for dispatch.',
  schema: z.object({ rotationId, wave: z.number().int().min(0), nodes: z.number().int().min(0) }),
});

export const CredentialRotationNodeDispatched = defineEvent({
  family: 'saga-progress',
  type: 'CredentialRotationNodeDispatched',
  description: "A BMC got its capacity slot and its rotation step began.",
  schema: z.object({ rotationId, nodeId: nodeIdSchema, wave: z.number().int().min(0), slotId: z.string().min(1).max(300) }),
});

export const rotationOutcomeSchema = z.enum(['rotated', 'kept', 'held', 'skipped']);
export type RotationOutcome = z.infer<typeof rotationOutcomeSchema>;

export const CredentialRotationNodeSettled = defineEvent({
  family: 'saga-progress',
  type: 'CredentialRotationNodeSettled',
  description: "A BMC's rotation step ended: rotated (the new version verified by a login), kept (the old version, verified, stays in force), held (a named hold) or skipped.",
  schema: z.object({ rotationId, nodeId: nodeIdSchema, wave: z.number().int().min(0), outcome: rotationOutcomeSchema, detail }),
});

export const CredentialRotationPaused = defineEvent({
  family: 'saga-progress',
  type: 'CredentialRotationPaused',
  description: 'Dispatch stopped until an explicit resume; BMCs in flight run on to a safe point.',
  schema: z.object({ rotationId, reason: z.enum(['operator']), detail }),
});

export const CredentialRotationHalted = defineEvent({
  family: 'saga-progress',
  type: 'CredentialRotationHalted',
  description: 'The rotation stopped itself (a failure budget exceeded, or the poller latched on a rotated BMC); resuming needs an operator.',
  schema: z.object({ rotationId, reason: z.enum(['canary-failed', 'wave-budget', 'cumulative-budget', 'poller-latched']), detail }),
});

export const CredentialRotationResumed = defineEvent({
  family: 'saga-progress',
  type: 'CredentialRotationResumed',
  description: 'An operator resumed a paused or halted rotation, acknowledging why it stopped.',
  schema: z.object({ rotationId, reason, acknowledged: z.string().max(100) }),
});

export const CredentialRotationAborted = defineEvent({
  family: 'saga-progress',
  type: 'CredentialRotationAborted',
  description: 'Final: no BMC is dispatched again; BMCs in flight end at a safe point.',
  schema: z.object({ rotationId, reason }),
});

export const CredentialRotationNodeVerb = defineEvent({
  family: 'saga-progress',
  type: 'CredentialRotationNodeVerb',
  description: 'An operator skipped one BMC of the rotation before it was dispatched (a held BMC is brought back by a new rotation of it).',
  schema: z.object({ rotationId, nodeId: nodeIdSchema, verb: z.enum(['skip']), reason }),
});

export const CredentialRotationWaveAdvanced = defineEvent({
  family: 'saga-progress',
  type: 'CredentialRotationWaveAdvanced',
  description: 'The wave drained, its bake passed and no rotated BMC of it was latched by the poller: the next wave may open.',
  schema: z.object({ rotationId, from: z.number().int().min(0), to: z.number().int().min(0), latchedAfterRotation: z.number().int().min(0) }),
});

export const CredentialRotationCompleted = defineEvent({
  family: 'saga-progress',
  type: 'CredentialRotationCompleted',
  description: 'Every target has an outcome.',
  schema: z.object({ rotationId, rotated: z.number().int().min(0), kept: z.number().int().min(0), held: z.number().int().min(0), skipped: z.number().int().min(0) }),
});

export const CredentialVersionsRetired = defineEvent({
  family: 'saga-progress',
  type: 'CredentialVersionsRetired',
  description:
    "In one operation on the store, every reference of the rotation whose nodes all confirmed the rotation's version keeps that version only (it becomes the reference's default); older secrets are deleted. References with a node not on it are named and kept.",
  schema: z.object({ rotationId, references: z.number().int().min(0), versionsRetired: z.number().int().min(0), keptBack: z.array(credentialRef).max(1000), keptBackCount: z.number().int().min(0) }),
});

// ---- one BMC's step: credstep-<rotationId>-<nodeId> ----

export const CredentialStepStarted = defineEvent({
  family: 'saga-progress',
  type: 'CredentialStepStarted',
  description: "A BMC's rotation began: from now on it is fenced (the poller's heavy reads wait, its liveness check logs in to nothing) until the step ends.",
  schema: z.object({ rotationId, nodeId: nodeIdSchema, credentialRef, fromVersion: version, toVersion: version, toDigest: digest, slotId: z.string().min(1).max(300) }),
});

export const BmcPasswordChangeRequested = defineEvent({
  family: 'saga-progress',
  type: 'BmcPasswordChangeRequested',
  description: 'Recorded BEFORE the change is sent (PATCH AccountService/Accounts/<id>): after a crash an intent without an answer is settled by logging in, never by sending again.',
  schema: z.object({
    rotationId,
    nodeId: nodeIdSchema,
    idempotencyKey: key,
    attempt: z.number().int().min(1),
    /** The credential the change is authenticated with: the node's reference, or the factory one a fallback proved. */
    fromRef: credentialRef,
    fromVersion: version,
    toVersion: version,
    accountPath: z.string().min(1).max(500),
    via: z.enum(['redfish-account-service', 'ipmi-user-set']),
    at: instantMs,
  }),
});

export const BmcPasswordChangeAccepted = defineEvent({
  family: 'saga-progress',
  type: 'BmcPasswordChangeAccepted',
  description: 'The BMC answered the change 2xx (advisory: only a login with the new version proves it).',
  schema: z.object({ idempotencyKey: key, httpStatus: z.number().int() }),
});

export const passwordRefusalSchema = z.enum(['password-policy', 'account-locked', 'unauthorized', 'no-account-service', 'busy', 'rejected', 'unknown-outcome']);
export type PasswordRefusal = z.infer<typeof passwordRefusalSchema>;

export const BmcPasswordChangeFailed = defineEvent({
  family: 'saga-progress',
  type: 'BmcPasswordChangeFailed',
  description:
    "The change was refused (typed: the vendor's password policy with its message, the account locked, the current credential refused, no AccountService, busy), or never answered (`outcomeKnown` false: settled by logging in).",
  schema: z.object({
    idempotencyKey: key,
    reason: passwordRefusalSchema,
    outcomeKnown: z.boolean(),
    status: z.number().int().optional(),
    messageIds: z.array(z.string().max(200)).max(20).optional(),
    message: detail,
  }),
});

export const loginPurposeSchema = z.enum(['preflight', 'verify', 'resolve', 'fallback']);

export const BmcLoginAttempted = defineEvent({
  family: 'saga-progress',
  type: 'BmcLoginAttempted',
  description: 'Recorded before a login that could fail: a restart that finds it without an answer counts it as a possible failed login and never tries that version again.',
  schema: z.object({ nodeId: nodeIdSchema, credentialRef, version, purpose: loginPurposeSchema }),
});

export const BmcLoginProbed = defineEvent({
  family: 'saga-progress',
  type: 'BmcLoginProbed',
  description: 'The answer to one login: accepted, refused (a failed login, counted toward the BMC lockout), or no answer (not a failed login).',
  schema: z.object({
    nodeId: nodeIdSchema,
    credentialRef,
    version,
    purpose: loginPurposeSchema,
    result: z.enum(['accepted', 'refused', 'unreachable']),
    code: z.string().max(60).optional(),
    /** The user's account, found by an accepted preflight login (where the change is sent). */
    accountPath: z.string().max(500).optional(),
  }),
});

export const BmcPasswordChanged = defineEvent({
  family: 'saga-progress',
  type: 'BmcPasswordChanged',
  description: 'The BMC holds the new version (a login with it was accepted): from now on it is the version in force for this node, and the fence is lifted.',
  schema: z.object({ rotationId, nodeId: nodeIdSchema, credentialRef, version, digest, idempotencyKey: key }),
});

export const credentialHoldSchema = z.enum(['unknown-password', 'account-locked', 'refused', 'unreachable', 'deadline-exceeded', 'not-applied']);

export const CredentialStepHeld = defineEvent({
  family: 'saga-progress',
  type: 'CredentialStepHeld',
  description:
    'The step ended short of the new version: `inForce` is the version the BMC was last proven to hold (the fence is lifted and the poller uses it) or null when that is not known (the BMC stays fenced: no login until a new rotation of it, or an operator, settles it).',
  schema: z.object({ rotationId, nodeId: nodeIdSchema, credentialRef, hold: credentialHoldSchema, inForce: version.nullable(), reason: detail }),
});

/** The events of a rotation's own stream (`rotation-<id>`). */
export const rotationStreamEvents = [
  CredentialRotationPlanned,
  CredentialRotationApproved,
  CredentialRotationStarted,
  CredentialVersionStaged,
  CredentialRotationWaveOpened,
  CredentialRotationNodeDispatched,
  CredentialRotationNodeSettled,
  CredentialRotationPaused,
  CredentialRotationHalted,
  CredentialRotationResumed,
  CredentialRotationAborted,
  CredentialRotationNodeVerb,
  CredentialRotationWaveAdvanced,
  CredentialRotationCompleted,
  CredentialVersionsRetired,
] as const;

/** The events of one BMC's rotation step (`credstep-<rotationId>-<nodeId>`). */
export const credentialStepEvents = [
  CredentialStepStarted,
  BmcPasswordChangeRequested,
  BmcPasswordChangeAccepted,
  BmcPasswordChangeFailed,
  BmcLoginAttempted,
  BmcLoginProbed,
  BmcPasswordChanged,
  CredentialStepHeld,
] as const;

export const credentialRotationEvents = [...rotationStreamEvents, ...credentialStepEvents] as const;
