import { z } from 'zod';
import { defineEvent } from './define-event.js';
import { nodeIdSchema, siteIdSchema } from './common.js';

/**
 * Saga progress: the firmware rollout's own stream (`rollout-<id>`), one stream per node step
 * (`fwstep-<rolloutId>-<nodeId>`) and the per-site capacity stream (`capacity-<site>`) that every saga of the site
 * shares. The decisions that read them are in `sagas/`; every event here is a fact, never a wish: a slot is held
 * from `SlotAcquired` until `SlotReleased`, an update is asked for only after `UpdateIntentRecorded`.
 */

const rolloutId = z.string().min(1).max(80).regex(/^[A-Za-z0-9][A-Za-z0-9._-]*$/, 'rollout ids use letters, digits and . _ - only');
const reason = z.string().min(1).max(1000);
const detail = z.string().max(2000);
const instantMs = z.number().int().min(0);

export const rolloutIdSchema = rolloutId;

export const firmwareImageSchema = z.object({
  /** What is updated: `BMC` (the controller's own firmware) or a firmware inventory member id (`BIOS`, ...). */
  component: z.string().min(1).max(200),
  version: z.string().min(1).max(200),
  imageUri: z.string().min(1).max(2000),
  /** sha256 of the image, when the operator has it; recorded so an auditor knows which bytes were meant. */
  digest: z.string().max(200).optional(),
  method: z.enum(['SimpleUpdate', 'MultipartHttpPush']).default('SimpleUpdate'),
  applyTime: z.enum(['Immediate', 'OnReset']).default('Immediate'),
});

export const domainLimitsSchema = z.object({
  rack: z.number().int().min(1).optional(),
  pdu: z.number().int().min(1).optional(),
  tor: z.number().int().min(1).optional(),
  cdu: z.number().int().min(1).optional(),
});

/**
 * A node step's pace, part of the rollout's policy: between two task reads, two version reads, two reconcile probes;
 * how long a task's end (or a reset) may leave the old version showing before the attempt counts as not applied
 * (`settleMs`); the wait before a new attempt; the deadline of one request to a BMC.
 */
const durationPolicyMs = z.number().int().min(0).max(86_400_000);
export const stepTimingSchema = z.object({
  pollIntervalMs: durationPolicyMs.optional(),
  readIntervalMs: durationPolicyMs.optional(),
  probeIntervalMs: durationPolicyMs.optional(),
  settleMs: durationPolicyMs.optional(),
  retryBackoffMs: durationPolicyMs.optional(),
  requestTimeoutMs: z.number().int().min(100).max(600_000).optional(),
});

export const rolloutTargetSchema = z.object({
  nodeId: nodeIdSchema,
  site: siteIdSchema,
  rack: z.string().max(64),
  pdu: z.string().max(64),
  tor: z.string().max(64),
  cdu: z.string().max(64),
  vendor: z.string().max(200),
  model: z.string().max(200),
  fromVersion: z.string().max(200),
  stratum: z.string().max(600),
  wave: z.number().int().min(0),
});

export const rolloutPlanSchema = z.object({
  firmware: firmwareImageSchema,
  selector: z.record(z.string(), z.unknown()),
  targets: z.array(rolloutTargetSchema),
  excluded: z.array(z.object({ nodeId: nodeIdSchema, reason })),
  waves: z.array(z.object({ index: z.number().int().min(0), size: z.number().int().min(0), canary: z.boolean() })),
  seed: z.number().int(),
  capPerSite: z.number().int().min(1),
  /** Nodes of one domain in flight at once (checked at dispatch against the slots held). */
  inFlightDomainLimits: domainLimitsSchema,
  /** Nodes of one domain in one wave (the planner's promise). */
  waveDomainLimits: domainLimitsSchema,
  budgets: z.object({ canaryFailures: z.number().int().min(0), waveFailureRatio: z.number().min(0).max(1), cumulativeFailureRatio: z.number().min(0).max(1) }),
  bakeMs: z.number().int().min(0),
  verifyReads: z.number().int().min(1).max(20),
  retryBudget: z.number().int().min(0).max(10),
  stepDeadlineMs: z.number().int().min(1),
  quietPeriodMs: z.number().int().min(0),
  gate: z.object({ maxLagPositions: z.number().int().min(0), maxLagMs: z.number().int().min(0), autoAdvance: z.boolean() }),
  /** How a node's step paces itself (absent from plans recorded before it was policy: the engine's defaults apply). */
  stepTiming: stepTimingSchema.optional(),
  approvalsRequired: z.number().int().min(1).max(2),
  planHash: z.string().length(64),
  definitionVersion: z.number().int().min(1),
});

export const RolloutPlanned = defineEvent({
  family: 'saga-progress',
  type: 'RolloutPlanned',
  description: 'A firmware rollout is planned: its frozen targets, waves, limits, budgets and the seed of its cohort choice.',
  schema: z.object({ rolloutId, plan: rolloutPlanSchema }),
});

export const RolloutApproved = defineEvent({
  family: 'saga-progress',
  type: 'RolloutApproved',
  description: 'A principal approved the rollout (the envelope names who); two distinct approvers when the plan asks.',
  schema: z.object({ rolloutId, reason }),
});

export const RolloutStarted = defineEvent({
  family: 'saga-progress',
  type: 'RolloutStarted',
  description: 'The approvals are complete and dispatch may begin.',
  schema: z.object({ rolloutId }),
});

export const WaveOpened = defineEvent({
  family: 'saga-progress',
  type: 'WaveOpened',
  description: 'A wave of the frozen plan opened for dispatch.',
  schema: z.object({ rolloutId, wave: z.number().int().min(0), nodes: z.number().int().min(0) }),
});

export const NodeDispatched = defineEvent({
  family: 'saga-progress',
  type: 'NodeDispatched',
  description: 'A node got its capacity slot and its update step began.',
  schema: z.object({ rolloutId, nodeId: nodeIdSchema, wave: z.number().int().min(0), slotId: z.string().min(1).max(300) }),
});

export const nodeOutcomeSchema = z.enum(['updated', 'already-at-target', 'failed', 'quarantined', 'skipped']);
export type NodeOutcome = z.infer<typeof nodeOutcomeSchema>;

export const NodeOutcomeRecorded = defineEvent({
  family: 'saga-progress',
  type: 'NodeOutcomeRecorded',
  description: "A node's update step reached a terminal state; its outcome counts against the wave's budget.",
  schema: z.object({ rolloutId, nodeId: nodeIdSchema, wave: z.number().int().min(0), outcome: nodeOutcomeSchema, detail: detail.optional() }),
});

export const gateInputSchema = z.object({
  projection: z.string().max(100),
  checkpointPosition: z.number().int().min(0),
  headPosition: z.number().int().min(0),
  lagPositions: z.number().int().min(0),
  lagMs: z.number().int().min(0),
});

export const GateEvaluated = defineEvent({
  family: 'saga-progress',
  type: 'GateEvaluated',
  description: 'The health gate after a wave, with every input it read, so an auditor can recompute the verdict.',
  schema: z.object({
    rolloutId,
    wave: z.number().int().min(0),
    inputs: z.array(gateInputSchema),
    values: z.object({
      nodes: z.number().int().min(0),
      healthy: z.number().int().min(0),
      unhealthy: z.array(nodeIdSchema).max(1000),
      unknown: z.array(nodeIdSchema).max(1000),
      openAlarms: z.number().int().min(0),
    }),
    verdict: z.enum(['pass', 'fail', 'inconclusive']),
    reason: detail,
  }),
});

export const WaveAdvanced = defineEvent({
  family: 'saga-progress',
  type: 'WaveAdvanced',
  description: 'The rollout moved on to the next wave, automatically after a passed gate or by an operator.',
  schema: z.object({ rolloutId, from: z.number().int().min(0), to: z.number().int().min(0), by: z.enum(['gate', 'operator']) }),
});

export const pauseReasonSchema = z.enum(['operator', 'gate-inconclusive', 'deadline']);

export const RolloutPaused = defineEvent({
  family: 'saga-progress',
  type: 'RolloutPaused',
  description: 'Dispatch stopped until an explicit resume; nodes in flight run on to a safe point.',
  schema: z.object({ rolloutId, reason: pauseReasonSchema, detail }),
});

export const RolloutHalted = defineEvent({
  family: 'saga-progress',
  type: 'RolloutHalted',
  description: 'The rollout stopped itself (a failure budget exceeded or a gate failed); resuming needs an operator acknowledgement.',
  schema: z.object({ rolloutId, reason: z.enum(['canary-failed', 'wave-budget', 'cumulative-budget', 'gate-failed']), detail }),
});

export const RolloutResumed = defineEvent({
  family: 'saga-progress',
  type: 'RolloutResumed',
  description: 'An operator resumed a paused or halted rollout, acknowledging why it stopped.',
  schema: z.object({ rolloutId, reason, acknowledged: z.string().max(100) }),
});

export const RolloutAborted = defineEvent({
  family: 'saga-progress',
  type: 'RolloutAborted',
  description: 'Final: no node is dispatched again; recovery is a new rollout.',
  schema: z.object({ rolloutId, reason }),
});

export const RolloutCapTightened = defineEvent({
  family: 'saga-progress',
  type: 'RolloutCapTightened',
  description: 'The rollout may hold fewer slots from now on (a cap is tightened live, never loosened).',
  schema: z.object({ rolloutId, cap: z.number().int().min(1), previous: z.number().int().min(1), reason }),
});

export const NodeVerbApplied = defineEvent({
  family: 'saga-progress',
  type: 'NodeVerbApplied',
  description: 'An operator retried, skipped, released or quarantined one node of the rollout.',
  schema: z.object({ rolloutId, nodeId: nodeIdSchema, verb: z.enum(['retry', 'skip', 'release', 'quarantine']), reason }),
});

export const RolloutCompleted = defineEvent({
  family: 'saga-progress',
  type: 'RolloutCompleted',
  description: 'Every target has an outcome and the last gate passed.',
  schema: z.object({ rolloutId, updated: z.number().int().min(0), alreadyAtTarget: z.number().int().min(0), failed: z.number().int().min(0), quarantined: z.number().int().min(0), skipped: z.number().int().min(0) }),
});

// ---- node step stream: fwstep-<rolloutId>-<nodeId> ----

const key = z.string().min(1).max(400);
const taskMonitor = z.string().min(1).max(2000);

export const StepStarted = defineEvent({
  family: 'saga-progress',
  type: 'StepStarted',
  description: "A node's firmware update step began, holding a capacity slot.",
  schema: z.object({ rolloutId, nodeId: nodeIdSchema, slotId: z.string().min(1).max(300), component: z.string().max(200), targetVersion: z.string().max(200) }),
});

export const UpdateIntentRecorded = defineEvent({
  family: 'saga-progress',
  type: 'UpdateIntentRecorded',
  description: 'Recorded BEFORE the update request is sent: after a crash an intent without a submission is resolved by reading the BMC.',
  schema: z.object({ idempotencyKey: key, attempt: z.number().int().min(1), method: z.string().max(40), imageUri: z.string().max(2000), applyTime: z.string().max(40), at: instantMs }),
});

export const UpdateSubmitted = defineEvent({
  family: 'saga-progress',
  type: 'UpdateSubmitted',
  description: 'The BMC accepted the update request; its task monitor is the handle every later read uses.',
  schema: z.object({ idempotencyKey: key, taskMonitor, httpStatus: z.number().int(), adopted: z.boolean() }),
});

export const UpdateSubmissionFailed = defineEvent({
  family: 'saga-progress',
  type: 'UpdateSubmissionFailed',
  description:
    'The request was answered with a refusal (busy, bad image, unsupported), or never answered (outcome unknown). `permanent`: the BMC named the request itself as wrong (a 4xx whose Redfish error body names the image or a bad parameter): the same request is never sent again.',
  schema: z.object({
    idempotencyKey: key,
    code: z.string().max(60),
    status: z.number().int().optional(),
    message: detail,
    outcomeKnown: z.boolean(),
    permanent: z.boolean().optional(),
    /** The Redfish message ids of the refusal, the evidence `permanent` was judged from. */
    messageIds: z.array(z.string().max(200)).max(20).optional(),
  }),
});

export const BmcTaskObserved = defineEvent({
  family: 'saga-progress',
  type: 'BmcTaskObserved',
  description: 'A read of the update task (recorded on change only): state, status, percent and messages.',
  schema: z.object({ taskMonitor, taskState: z.string().max(60), taskStatus: z.string().max(60), percent: z.number().min(0).max(100).optional(), messages: z.array(z.string().max(300)).max(20) }),
});

export const BmcTaskVanished = defineEvent({
  family: 'saga-progress',
  type: 'BmcTaskVanished',
  description: 'The task monitor answered 404: the BMC purged or forgot it. Neither success nor failure: the BMC is read to find out.',
  schema: z.object({ taskMonitor }),
});

export const ActivationRequested = defineEvent({
  family: 'saga-progress',
  type: 'ActivationRequested',
  description: 'The image is staged and needs a reset to take effect; the reset was asked for.',
  schema: z.object({ resetType: z.string().max(60), target: z.string().max(2000), at: instantMs }),
});

export const VersionObserved = defineEvent({
  family: 'saga-progress',
  type: 'VersionObserved',
  description: "One read of the component's installed version after the update.",
  schema: z.object({ version: z.string().max(200).nullable(), matches: z.boolean(), readNo: z.number().int().min(0) }),
});

export const VersionVerified = defineEvent({
  family: 'saga-progress',
  type: 'VersionVerified',
  description: 'The target version was read N consecutive times: the only proof an update happened.',
  schema: z.object({ version: z.string().max(200), reads: z.number().int().min(1) }),
});

export const ReconcileProbed = defineEvent({
  family: 'saga-progress',
  type: 'ReconcileProbed',
  description:
    "A read-only look at the BMC to settle an intent whose outcome is unknown: its tasks and the installed version. `attempt-lost`: the BMC had acknowledged the attempt (202, a task reading) and now shows neither its task nor the version after the quiet period: the attempt failed and counts against the retry budget. `not-accepted`: no sign the BMC ever saw it.",
  schema: z.object({
    reachable: z.boolean(),
    version: z.string().max(200).nullable(),
    matchingTask: taskMonitor.nullable(),
    verdict: z.enum(['at-target', 'adopt-task', 'not-accepted', 'attempt-lost', 'wait', 'ambiguous']),
  }),
});

export const RetryScheduled = defineEvent({
  family: 'saga-progress',
  type: 'RetryScheduled',
  description: 'A new attempt (with a new idempotency key) is due; the attempt counts against the retry budget.',
  schema: z.object({ attempt: z.number().int().min(2), notBefore: instantMs, cause: detail }),
});

export const StepHeld = defineEvent({
  family: 'saga-progress',
  type: 'StepHeld',
  description: 'A named hold: the step cannot decide safely on its own (deadline passed, outcome ambiguous); it keeps its slot until an operator acts.',
  schema: z.object({ hold: z.enum(['reconcile-required', 'deadline-exceeded']), reason: detail, nodeId: nodeIdSchema.optional() }),
});

export const StepSucceeded = defineEvent({
  family: 'saga-progress',
  type: 'StepSucceeded',
  description: 'The node runs the target version (verified) and passed its bake.',
  schema: z.object({ outcome: z.enum(['updated', 'already-at-target']), version: z.string().max(200) }),
});

export const StepFailed = defineEvent({
  family: 'saga-progress',
  type: 'StepFailed',
  description: 'The update failed for good on this node (retries exhausted or refused); the node still runs a known version.',
  schema: z.object({ cause: detail }),
});

export const StepQuarantined = defineEvent({
  family: 'saga-progress',
  type: 'StepQuarantined',
  description: 'The node is set aside with its evidence; its slot stays held until an operator releases it.',
  schema: z.object({ evidence: detail }),
});

export const StepOperatorAction = defineEvent({
  family: 'saga-progress',
  type: 'StepOperatorAction',
  description: "An operator's verb reached the node's step: retry (new attempt), skip, release (slot) or quarantine.",
  schema: z.object({ verb: z.enum(['retry', 'skip', 'release', 'quarantine']), reason }),
});

// ---- capacity stream: capacity-<site> ----

export const SiteCapSet = defineEvent({
  family: 'saga-progress',
  type: 'SiteCapSet',
  description: 'How many nodes of the site every saga together may disrupt at once.',
  schema: z.object({ site: siteIdSchema, cap: z.number().int().min(1), reason }),
});

export const SlotAcquired = defineEvent({
  family: 'saga-progress',
  type: 'SlotAcquired',
  description: 'A saga took one of the site\'s disruption slots for a node (and with it the node\'s single-owner lease).',
  schema: z.object({
    site: siteIdSchema,
    slotId: z.string().min(1).max(300),
    sagaId: z.string().min(1).max(200),
    nodeId: nodeIdSchema,
    rack: z.string().max(64),
    pdu: z.string().max(64),
    tor: z.string().max(64),
    cdu: z.string().max(64),
  }),
});

export const SlotReleased = defineEvent({
  family: 'saga-progress',
  type: 'SlotReleased',
  description: 'A slot came back after its node reached an observed terminal state, or an operator declared the node idle.',
  schema: z.object({ site: siteIdSchema, slotId: z.string().min(1).max(300), sagaId: z.string().min(1).max(200), nodeId: nodeIdSchema, why: detail }),
});


// ---- provisioning stream: provision-<nodeId> ----

const stage = z.enum(['registering', 'inventorying', 'validating', 'baselining', 'burn-in', 'ready']);
export const provisioningStageSchema = stage;

export const declaredBomSchema = z.object({
  manufacturer: z.string().max(200).optional(),
  model: z.string().max(200).optional(),
  cpuCount: z.number().int().min(0).optional(),
  gpuCount: z.number().int().min(0).optional(),
  memoryGiB: z.number().min(0).optional(),
});

export const ProvisioningStarted = defineEvent({
  family: 'saga-progress',
  type: 'ProvisioningStarted',
  description: 'A node enters provisioning with its declared bill of materials, firmware baseline and burn-in period.',
  schema: z.object({
    nodeId: nodeIdSchema,
    site: siteIdSchema,
    rack: z.string().max(64),
    declared: declaredBomSchema,
    baseline: z.array(firmwareImageSchema).max(20),
    burnInMs: z.number().int().min(0),
    burnInIntervalMs: z.number().int().min(100),
  }),
});

export const BmcAccessVerified = defineEvent({
  family: 'saga-progress',
  type: 'BmcAccessVerified',
  description: 'The BMC answered with the credentials on record.',
  schema: z.object({ nodeId: nodeIdSchema }),
});

export const BmcAccessFailed = defineEvent({
  family: 'saga-progress',
  type: 'BmcAccessFailed',
  description: 'The BMC could not be reached or refused the credentials.',
  schema: z.object({ nodeId: nodeIdSchema, code: z.string().max(60), message: detail }),
});

export const InventoryCollected = defineEvent({
  family: 'saga-progress',
  type: 'InventoryCollected',
  description: 'What the BMC reports the node holds, and its firmware versions.',
  schema: z.object({ nodeId: nodeIdSchema, observed: declaredBomSchema, firmware: z.record(z.string().max(200), z.string().max(200)) }),
});

export const BomValidated = defineEvent({
  family: 'saga-progress',
  type: 'BomValidated',
  description: 'The node holds what its bill of materials declares.',
  schema: z.object({ nodeId: nodeIdSchema }),
});

export const BomMismatchDetected = defineEvent({
  family: 'saga-progress',
  type: 'BomMismatchDetected',
  description: 'The node differs from its bill of materials; the differences are the evidence.',
  schema: z.object({ nodeId: nodeIdSchema, differences: z.array(z.object({ field: z.string().max(60), declared: z.string().max(200), observed: z.string().max(200) })).max(50) }),
});

export const BaselineComponentSettled = defineEvent({
  family: 'saga-progress',
  type: 'BaselineComponentSettled',
  description: 'One component of the firmware baseline ended its update step (stream fwstep-<saga>-<node>).',
  schema: z.object({ nodeId: nodeIdSchema, component: z.string().max(200), outcome: nodeOutcomeSchema, detail: detail.optional() }),
});

export const BurnInStarted = defineEvent({
  family: 'saga-progress',
  type: 'BurnInStarted',
  description: 'Burn-in began: the node must stay healthy until the given instant.',
  schema: z.object({ nodeId: nodeIdSchema, until: instantMs }),
});

export const BurnInObserved = defineEvent({
  family: 'saga-progress',
  type: 'BurnInObserved',
  description: 'One reading during burn-in: the BMC answered, and what it reported unhealthy.',
  schema: z.object({ nodeId: nodeIdSchema, reachable: z.boolean(), problems: z.array(z.string().max(300)).max(50) }),
});

export const NodeReady = defineEvent({
  family: 'saga-progress',
  type: 'NodeReady',
  description: 'The node passed every stage and may receive work.',
  schema: z.object({ nodeId: nodeIdSchema }),
});

export const ProvisioningQuarantined = defineEvent({
  family: 'saga-progress',
  type: 'ProvisioningQuarantined',
  description: 'The node is set aside at a stage with its evidence; only an operator releases it, at a stage they name.',
  schema: z.object({ nodeId: nodeIdSchema, stage, reason: detail, keepsSlot: z.boolean().default(false) }),
});

export const QuarantineReleased = defineEvent({
  family: 'saga-progress',
  type: 'QuarantineReleased',
  description: 'An operator released a quarantined node to re-enter at a named stage.',
  schema: z.object({ nodeId: nodeIdSchema, resumeAt: stage, reason }),
});

export const ProvisioningAbandoned = defineEvent({
  family: 'saga-progress',
  type: 'ProvisioningAbandoned',
  description: 'Final: the node will not be provisioned (to be decommissioned or returned).',
  schema: z.object({ nodeId: nodeIdSchema, reason }),
});

/** The events of a rollout's own stream (`rollout-<id>`). */
export const rolloutStreamEvents = [
  RolloutPlanned,
  RolloutApproved,
  RolloutStarted,
  WaveOpened,
  NodeDispatched,
  NodeOutcomeRecorded,
  GateEvaluated,
  WaveAdvanced,
  RolloutPaused,
  RolloutHalted,
  RolloutResumed,
  RolloutAborted,
  RolloutCapTightened,
  NodeVerbApplied,
  RolloutCompleted,
] as const;

/** The events of one node's firmware step stream (`fwstep-<rolloutId>-<nodeId>`). */
export const stepStreamEvents = [
  StepStarted,
  UpdateIntentRecorded,
  UpdateSubmitted,
  UpdateSubmissionFailed,
  BmcTaskObserved,
  BmcTaskVanished,
  ActivationRequested,
  VersionObserved,
  VersionVerified,
  ReconcileProbed,
  RetryScheduled,
  StepHeld,
  StepSucceeded,
  StepFailed,
  StepQuarantined,
  StepOperatorAction,
] as const;

/** The events of a site's capacity stream (`capacity-<site>`). */
export const capacityStreamEvents = [
  SiteCapSet,
  SlotAcquired,
  SlotReleased,
] as const;

/** The events of a node's provisioning stream (`provision-<nodeId>`). */
export const provisionStreamEvents = [
  ProvisioningStarted,
  BmcAccessVerified,
  BmcAccessFailed,
  InventoryCollected,
  BomValidated,
  BomMismatchDetected,
  BaselineComponentSettled,
  BurnInStarted,
  BurnInObserved,
  NodeReady,
  ProvisioningQuarantined,
  QuarantineReleased,
  ProvisioningAbandoned,
] as const;

export const sagaProgressEvents = [...rolloutStreamEvents, ...stepStreamEvents, ...capacityStreamEvents, ...provisionStreamEvents] as const;
