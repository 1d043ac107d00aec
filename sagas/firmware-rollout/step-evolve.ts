/**
 * One node's firmware update step (`fwstep-<rolloutId>-<nodeId>`), folded from its events. The phases follow the
 * design in `docs/sagas.md`: an intent is recorded before the request, a submission after it, the task is read
 * until it ends, the image is activated where it needs a reset, and only N consecutive reads of the target version
 * complete the node. `intent` (an intent with no submission) is only ever seen after a crash: the engine never
 * decides between recording an intent and sending it.
 */
import { assertNever, isStepStreamEvent } from '../../events/index.js';
import type { SagaEvent } from '../saga-event.js';

export type StepPhase =
  | 'new'
  | 'started'
  | 'preflighted'
  | 'intent'
  | 'submitted'
  | 'activating'
  | 'verifying'
  | 'retry-needed'
  | 'retry-wait'
  | 'reconcile'
  | 'held'
  | 'succeeded'
  | 'failed'
  | 'quarantined'
  | 'skipped';

export const terminalPhases: ReadonlySet<StepPhase> = new Set(['succeeded', 'failed', 'quarantined', 'skipped']);

export interface StepState {
  version: number;
  phase: StepPhase;
  slotId?: string;
  startedAt?: number;
  attempt: number;
  key?: string;
  intentAt?: number;
  taskMonitor?: string;
  taskState?: string;
  taskStatus?: string;
  /** The task's messages asked for a reset (AwaitToActivate, ResetRequired) or the image applies on reset. */
  needsActivation: boolean;
  activationAt?: number;
  /** Consecutive reads of the target version. */
  matchingReads: number;
  /** Reads of another version since the task ended (or since activation). */
  mismatchedReads: number;
  readNo: number;
  /** When the last version read and the last probe were recorded (spacing of the next ones). */
  lastReadAt?: number;
  /** The last sign that the BMC was working on an update (submission, task reading, task gone, reset asked). */
  lastActivityAt?: number;
  lastProbeAt?: number;
  lastVersion?: string | null;
  notBefore?: number;
  probes: number;
  /**
   * Attempts that left no trace on the BMC (a probe found neither a task nor the version after the quiet period):
   * most often an engine killed between recording the intent and sending it. They do not spend the retry budget.
   */
  untracedAttempts: number;
  /** The current attempt is one of those. */
  lastAttemptUntraced: boolean;
  /**
   * The BMC acknowledged the current attempt (answered 2xx, or showed a task for it): it has been touched, so the
   * attempt spends the retry budget whatever becomes of its task (lost, purged, forgotten in a reset).
   */
  acknowledged: boolean;
  /** The BMC refused the current attempt's request as wrong in itself (`UpdateSubmissionFailed.permanent`): no retry. */
  permanentRefusal: boolean;
  /**
   * What the last recorded task reading said (`taskReadingSignature`): a reading is appended only when it differs,
   * and since this is folded from the log, a restarted engine does not record the same reading again.
   */
  taskSignature?: string;
  cause?: string;
  hold?: string;
  outcome?: 'updated' | 'already-at-target' | 'failed' | 'quarantined' | 'skipped';
  /** Submissions recorded per idempotency key (the engine refuses a second one). */
  submittedKeys: string[];
  /** The slot was given back by an operator (`release`): the node no longer counts as in flight. */
  released: boolean;
}

export function initialStep(): StepState {
  return { version: 0, phase: 'new', attempt: 0, needsActivation: false, matchingReads: 0, mismatchedReads: 0, readNo: 0, probes: 0, untracedAttempts: 0, lastAttemptUntraced: false, acknowledged: false, permanentRefusal: false, submittedKeys: [], released: false };
}

export function stepStream(rolloutId: string, nodeId: string): string {
  return `fwstep-${rolloutId}-${nodeId}`;
}

// Redfish TaskState values that end a task as failed, and Dell's JobState ones where a BMC reports a job instead.
const failedTaskStates = new Set(['Exception', 'Killed', 'Cancelled', 'Interrupted', 'Failed', 'CompletedWithErrors']);
/**
 * A task that ends with one of these statuses failed, whatever its state says: `Completed` + `Critical` is a BMC
 * reporting that it finished the job and the job went wrong (nothing to activate, nothing to wait for).
 */
const failedTaskStatuses = new Set(['Critical']);

/** The part of a task reading that is recorded on change: state, status and messages (not the percentage). */
export function taskReadingSignature(reading: { taskState: string; taskStatus: string; messages: readonly string[] }): string {
  return JSON.stringify([reading.taskState, reading.taskStatus, reading.messages]);
}

/** True when a task reading says something the step has not recorded yet (the last recorded one differs). */
export function isNewTaskReading(state: StepState, reading: { taskState: string; taskStatus: string; messages: readonly string[] }): boolean {
  return state.taskSignature !== taskReadingSignature(reading);
}
const activationMessages = /AwaitToActivate|ResetRequired|ActivityRequired|reboot|reset/i;

export function evolveStep(state: StepState, event: SagaEvent): StepState {
  const next: StepState = { ...state, version: state.version + 1 };
  const at = event.recordedAt;
  // Events of other types in the stream count toward its version only.
  if (!isStepStreamEvent(event)) return next;
  switch (event.type) {
    case 'StepStarted':
      next.phase = 'started';
      next.slotId = event.data.slotId;
      next.startedAt = at;
      break;
    case 'VersionObserved': {
      const data = event.data;
      next.lastVersion = data.version;
      next.readNo = data.readNo;
      next.lastReadAt = at;
      if (state.phase === 'started') {
        // The preflight read: equal means nothing to do (the step then succeeds as already at target).
        if (data.matches) {
          next.matchingReads = 1;
        } else next.phase = 'preflighted';
      } else if (data.matches) {
        next.matchingReads = state.matchingReads + 1;
        next.mismatchedReads = 0;
        if (state.phase !== 'verifying') next.phase = 'verifying';
      } else {
        next.matchingReads = 0;
        next.mismatchedReads = state.mismatchedReads + 1;
      }
      break;
    }
    case 'UpdateIntentRecorded': {
      const data = event.data;
      next.phase = 'intent';
      next.key = data.idempotencyKey;
      next.attempt = data.attempt;
      next.intentAt = data.at;
      next.probes = 0;
      next.lastAttemptUntraced = false;
      next.acknowledged = false;
      next.permanentRefusal = false;
      next.taskSignature = undefined;
      next.taskMonitor = undefined;
      next.taskState = undefined;
      next.taskStatus = undefined;
      next.needsActivation = data.applyTime === 'OnReset';
      next.activationAt = undefined;
      next.matchingReads = 0;
      next.mismatchedReads = 0;
      break;
    }
    case 'UpdateSubmitted': {
      const data = event.data;
      next.phase = 'submitted';
      next.taskMonitor = data.taskMonitor;
      next.probes = 0;
      next.lastActivityAt = at;
      next.acknowledged = true;
      if (!data.adopted) next.submittedKeys = [...state.submittedKeys, data.idempotencyKey];
      break;
    }
    case 'UpdateSubmissionFailed': {
      const data = event.data;
      next.cause = `${data.code}: ${data.message}`;
      next.phase = data.outcomeKnown ? 'retry-needed' : 'reconcile';
      next.permanentRefusal = data.outcomeKnown && data.permanent === true;
      // A 2xx the driver could not use (no task monitor in it) is still the BMC acknowledging the request.
      if (data.status !== undefined && data.status >= 200 && data.status < 300) {
        next.acknowledged = true;
        next.lastActivityAt = at;
      }
      break;
    }
    case 'BmcTaskObserved': {
      const data = event.data;
      next.taskState = data.taskState;
      next.taskStatus = data.taskStatus;
      next.lastActivityAt = at;
      next.acknowledged = true;
      next.taskSignature = taskReadingSignature(data);
      if (data.messages.some((message) => activationMessages.test(message))) next.needsActivation = true;
      if (failedTaskStates.has(data.taskState) || (data.taskState === 'Completed' && failedTaskStatuses.has(data.taskStatus))) {
        next.phase = 'retry-needed';
        next.cause = `task ${data.taskState} (${data.taskStatus}): ${data.messages.join('; ').slice(0, 500)}`;
      }
      break;
    }
    case 'BmcTaskVanished':
      next.phase = 'reconcile';
      next.lastActivityAt = at;
      next.probes = 0;
      next.cause = 'the task monitor answered 404';
      break;
    case 'ActivationRequested':
      next.phase = 'activating';
      next.activationAt = event.data.at;
      next.lastActivityAt = at;
      next.mismatchedReads = 0;
      break;
    case 'VersionVerified':
      next.phase = 'verifying';
      break;
    case 'ReconcileProbed': {
      const data = event.data;
      next.probes = state.probes + 1;
      next.lastProbeAt = at;
      next.lastVersion = data.version;
      if (data.verdict === 'at-target') {
        next.phase = 'verifying';
        next.matchingReads = 1;
        next.mismatchedReads = 0;
      } else if (data.verdict === 'adopt-task' && data.matchingTask) {
        next.phase = 'submitted';
        next.taskMonitor = data.matchingTask;
        next.taskState = undefined;
        next.taskSignature = undefined;
        next.acknowledged = true;
      } else if (data.verdict === 'attempt-lost' || (data.verdict === 'not-accepted' && state.acknowledged)) {
        // The BMC saw this attempt and lost it: a failed attempt like any other, never an untraced one.
        next.phase = 'retry-needed';
        next.cause = `the BMC acknowledged the update, then lost its task; the version is still ${data.version ?? 'unreadable'}`;
      } else if (data.verdict === 'not-accepted') {
        next.phase = 'retry-needed';
        next.cause = 'the BMC shows neither the update nor a task for it';
        if (!state.lastAttemptUntraced) next.untracedAttempts = state.untracedAttempts + 1;
        next.lastAttemptUntraced = true;
      } else {
        next.phase = 'reconcile';
      }
      break;
    }
    case 'RetryScheduled': {
      const data = event.data;
      next.phase = 'retry-wait';
      next.notBefore = data.notBefore;
      next.attempt = data.attempt - 1; // the attempt number is taken when its intent is recorded
      next.cause = data.cause;
      break;
    }
    case 'StepHeld': {
      const data = event.data;
      next.phase = 'held';
      next.hold = data.hold;
      next.cause = data.reason;
      break;
    }
    case 'StepSucceeded':
      next.phase = 'succeeded';
      next.outcome = event.data.outcome;
      break;
    case 'StepFailed':
      next.phase = 'failed';
      next.outcome = 'failed';
      next.cause = event.data.cause;
      break;
    case 'StepQuarantined':
      next.phase = 'quarantined';
      next.outcome = 'quarantined';
      next.cause = event.data.evidence;
      break;
    case 'StepOperatorAction': {
      const verb = event.data.verb;
      if (verb === 'retry' && !terminalPhases.has(state.phase)) {
        next.phase = 'retry-wait';
        next.notBefore = at;
        next.hold = undefined;
      } else if (verb === 'skip' && !terminalPhases.has(state.phase)) {
        next.phase = 'skipped';
        next.outcome = 'skipped';
      } else if (verb === 'quarantine' && !terminalPhases.has(state.phase)) {
        next.phase = 'quarantined';
        next.outcome = 'quarantined';
      } else if (verb === 'release') {
        next.released = true;
        if (!terminalPhases.has(state.phase)) {
          next.phase = 'skipped';
          next.outcome = 'skipped';
        }
      }
      break;
    }
    default:
      return assertNever(event);
  }
  return next;
}
