import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  decideStep,
  defaultStepTiming,
  evolveStep,
  initialStep,
  isNewTaskReading,
  isPermanentRefusal,
  probeVerdict,
  type SagaEvent,
  type StepContext,
  type StepState,
} from '../../sagas/index.js';

/**
 * How a node's update step judges its attempts, driven through the pure step decider against a model BMC: each
 * attempt the BMC answers with one of the behaviours seen on real BMCs (a task that runs then is lost, a reset
 * mid-update, Completed with Critical status, Exception, a refusal naming the image), and the model counts what a BMC
 * would count: POSTs, resets.
 */

const firmware = { component: 'BMC', version: '9.9.9', imageUri: 'http://img/fw/bmc-9.9.9.bin', method: 'SimpleUpdate' as const, applyTime: 'Immediate' as const };
const actor = { kind: 'saga' as const, id: 'test' };
const ev = (type: string, data: unknown, recordedAt: number): SagaEvent => ({ type, data, actor, recordedAt });
const quietPeriodMs = 60_000;
const contextWith = (retryBudget: number): StepContext => ({
  rolloutId: 'r',
  nodeId: 'n1',
  plan: { firmware, verifyReads: 3, retryBudget, stepDeadlineMs: 24 * 3_600_000, quietPeriodMs },
  timing: defaultStepTiming,
});

/** What the BMC does with one update request. */
type Fate =
  | 'task-lost-after-running' // 202, task Running, then 404; version unchanged; the BMC answers throughout
  | 'reset-mid-update' // 202, task Running, then the BMC resets (dark for a few probes) and comes back at the old version with no task
  | 'completed-critical' // 202, task Running, then Completed + Critical; version unchanged
  | 'exception' // 202, task Running, then Exception + Critical
  | 'killed' // 202, task Running, then Killed
  | 'refused-permanent' // 400 with a Redfish body naming the image
  | 'refused-while-booting' // 400 Base.GeneralError, no word about the image: worth another try
  | 'accepted-without-task-monitor'; // 202 with neither a Location nor an @odata.id; nothing ever changes

interface Run {
  posts: number;
  resets: number;
  final: StepState;
  /** For each task reading that ended an attempt as failed: the decisions taken before the next POST or the verdict. */
  afterFailedReading: string[][];
}

/** Runs one step to its end against the model BMC: every decision goes through `decideStep`, every fact through `evolveStep`. */
function runStep(fates: readonly Fate[], retryBudget: number, darkProbes = 2): Run {
  const context = contextWith(retryBudget);
  let now = 1_000;
  let state = initialStep();
  const apply = (type: string, data: unknown): void => {
    state = evolveStep(state, ev(type, data, now));
  };
  let posts = 0;
  let resets = 0;
  let fate: Fate | undefined;
  let polls = 0;
  let dark = 0;
  const afterFailedReading: string[][] = [];
  let watching: string[] | undefined;
  for (let turn = 0; turn < 2_000; turn++) {
    const { action, due } = decideStep(state, now, context);
    now = Math.max(now, due) + 1_000;
    watching?.push(action.kind);
    switch (action.kind) {
      case 'done':
      case 'held':
        return { posts, resets, final: state, afterFailedReading };
      case 'start':
        apply('StepStarted', { rolloutId: 'r', nodeId: 'n1', slotId: 'r:n1', component: 'BMC', targetVersion: firmware.version });
        break;
      case 'preflight':
        apply('VersionObserved', { version: '1.0', matches: false, readNo: 0 });
        break;
      case 'submit': {
        apply('UpdateIntentRecorded', { idempotencyKey: action.key, attempt: action.attempt, method: 'SimpleUpdate', imageUri: firmware.imageUri, applyTime: 'Immediate', at: now });
        posts++;
        watching = undefined;
        fate = fates[Math.min(posts, fates.length) - 1]!;
        polls = 0;
        if (fate === 'refused-permanent') {
          apply('UpdateSubmissionFailed', { idempotencyKey: action.key, code: 'DRIVER_REJECTED', status: 400, message: 'ImageURI invalid', outcomeKnown: true, permanent: true, messageIds: ['Base.1.8.ActionParameterValueFormatError'] });
        } else if (fate === 'accepted-without-task-monitor') {
          apply('UpdateSubmissionFailed', { idempotencyKey: action.key, code: 'DRIVER_PROTOCOL', status: 202, message: 'the update was accepted without a task monitor', outcomeKnown: false, permanent: false });
        } else if (fate === 'refused-while-booting') {
          apply('UpdateSubmissionFailed', { idempotencyKey: action.key, code: 'DRIVER_REJECTED', status: 400, message: 'general error', outcomeKnown: true, permanent: false, messageIds: ['Base.1.8.GeneralError'] });
        } else {
          apply('UpdateSubmitted', { idempotencyKey: action.key, taskMonitor: `/t/${posts}`, httpStatus: 202, adopted: false });
        }
        break;
      }
      case 'poll-task': {
        polls++;
        if (polls === 1) {
          apply('BmcTaskObserved', { taskMonitor: action.taskMonitor, taskState: 'Running', taskStatus: 'OK', percent: 40, messages: ['Update.1.0.UpdateInProgress: in progress'] });
        } else if (fate === 'task-lost-after-running' || fate === 'reset-mid-update') {
          if (fate === 'reset-mid-update') dark = darkProbes;
          apply('BmcTaskVanished', { taskMonitor: action.taskMonitor });
        } else {
          const [taskState, taskStatus] = fate === 'completed-critical' ? ['Completed', 'Critical'] : fate === 'killed' ? ['Killed', 'Warning'] : ['Exception', 'Critical'];
          apply('BmcTaskObserved', { taskMonitor: action.taskMonitor, taskState, taskStatus, percent: 100, messages: ['Base.1.8.InternalError: failed'] });
          watching = [];
          afterFailedReading.push(watching);
        }
        break;
      }
      case 'probe': {
        const observed = dark > 0 ? { reachable: false, version: null, matchingTask: null } : { reachable: true, version: '1.0', matchingTask: null };
        if (dark > 0) dark--;
        const verdict = probeVerdict(state, observed, now, context);
        apply('ReconcileProbed', { ...observed, verdict });
        break;
      }
      case 'activate':
        resets++;
        apply('ActivationRequested', { resetType: 'GracefulRestart', target: '/redfish/v1/Managers/1/Actions/Manager.Reset', at: now });
        break;
      case 'read-version':
        apply('VersionObserved', { version: '1.0', matches: false, readNo: state.readNo + 1 });
        break;
      case 'verified':
      case 'succeed':
        throw new Error('the model BMC never installs the image');
      case 'retry':
        apply('RetryScheduled', { attempt: action.attempt, notBefore: action.notBefore, cause: action.cause });
        break;
      case 'fail':
        apply('StepFailed', { cause: action.cause });
        break;
      case 'hold':
        apply('StepHeld', { nodeId: 'n1', hold: action.hold, reason: action.reason });
        break;
      default:
        throw new Error(`unexpected action ${JSON.stringify(action)}`);
    }
  }
  throw new Error('the step never ended');
}

const failingFate = fc.constantFrom<Fate>('task-lost-after-running', 'reset-mid-update', 'completed-critical', 'exception', 'killed', 'refused-while-booting', 'accepted-without-task-monitor');

describe('an update attempt the BMC acknowledged', () => {
  it('spends the retry budget whatever becomes of its task: the BMC never sees more POSTs than 1 + the budget, and the node fails (never an endless hold)', () => {
    fc.assert(
      fc.property(fc.array(failingFate, { minLength: 1, maxLength: 12 }), fc.integer({ min: 0, max: 4 }), fc.integer({ min: 0, max: 5 }), (fates, retryBudget, darkProbes) => {
        const run = runStep(fates, retryBudget, darkProbes);
        expect(run.posts).toBeLessThanOrEqual(1 + retryBudget);
        expect(run.posts).toBe(1 + retryBudget);
        expect(run.final.phase).toBe('failed');
      }),
    );
  });

  it('a task lost after Running (404) with the version unchanged is judged a lost attempt, not an untraced one', () => {
    const run = runStep(['task-lost-after-running'], 1);
    expect(run.posts).toBe(2);
    expect(run.final.untracedAttempts).toBe(0);
    expect(run.final.cause).toMatch(/acknowledged the update, then lost its task/);
  });
});

describe('a task that ends failed', () => {
  it('Completed with Critical status, Exception or Killed fails the attempt at the reading that says so, and never resets the BMC', () => {
    fc.assert(
      fc.property(fc.array(fc.constantFrom<Fate>('completed-critical', 'exception', 'killed'), { minLength: 1, maxLength: 6 }), fc.integer({ min: 0, max: 4 }), (fates, retryBudget) => {
        const run = runStep(fates, retryBudget);
        expect(run.resets).toBe(0);
        expect(run.final.phase).toBe('failed');
        // The decision right after the failed reading is the verdict on the attempt: a retry or the step's failure.
        for (const decisions of run.afterFailedReading) expect(['retry', 'fail']).toContain(decisions[0]);
      }),
    );
  });
});

describe('a refusal the BMC calls permanent', () => {
  it('is not retried: one POST, and the node fails with the refusal as its cause', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 5 }), (retryBudget) => {
        const run = runStep(['refused-permanent'], retryBudget);
        expect(run.posts).toBe(1);
        expect(run.final.phase).toBe('failed');
        expect(run.final.cause).toMatch(/refused as permanent/);
      }),
    );
  });

  it('a 400 with a generic body (a BMC still booting) is retried within the budget', () => {
    expect(runStep(['refused-while-booting'], 2).posts).toBe(3);
  });

  it('is judged from the answer: a 4xx whose Redfish body names the image or a bad parameter; never 401/403/409/429 or a 5xx', () => {
    const image = 'http://img/fw/bmc-9.9.9.bin';
    expect(isPermanentRefusal({ status: 400, messageIds: ['Base.1.8.ActionParameterValueFormatError'], text: 'The value for the parameter ImageURI is invalid.' }, image)).toBe(true);
    expect(isPermanentRefusal({ status: 404, messageIds: ['Base.1.8.ResourceNotFound'], text: '' }, image)).toBe(true);
    expect(isPermanentRefusal({ status: 400, messageIds: ['Base.1.8.GeneralError'], text: 'Image bmc-9.9.9.bin is not a valid firmware image.' }, image)).toBe(true);
    expect(isPermanentRefusal({ status: 400, messageIds: ['Base.1.8.GeneralError'], text: 'The service is starting; try again later.' }, image)).toBe(false);
    for (const status of [401, 403, 409, 429, 500, 503]) expect(isPermanentRefusal({ status, messageIds: ['Base.1.8.ActionParameterValueFormatError'], text: image }, image)).toBe(false);
    expect(isPermanentRefusal({ status: undefined, messageIds: [], text: image }, image)).toBe(false);
  });
});

describe('task readings after a restart', () => {
  it('a reading already in the log is recorded once: a restarted engine, folding the step from the log, sees it as known', () => {
    const reading = { taskState: 'Running', taskStatus: 'OK', messages: ['Update.1.0.UpdateInProgress: in progress'] };
    fc.assert(
      fc.property(fc.array(fc.constantFrom('New', 'Running', 'Completed'), { minLength: 1, maxLength: 8 }), fc.nat({ max: 100 }), (states, percent) => {
        const log: SagaEvent[] = [
          ev('StepStarted', { rolloutId: 'r', nodeId: 'n1', slotId: 'r:n1', component: 'BMC', targetVersion: '9.9.9' }, 1),
          ev('UpdateIntentRecorded', { idempotencyKey: 'r:n1:BMC:9.9.9:1', attempt: 1, method: 'SimpleUpdate', imageUri: firmware.imageUri, applyTime: 'Immediate', at: 2 }, 2),
          ev('UpdateSubmitted', { idempotencyKey: 'r:n1:BMC:9.9.9:1', taskMonitor: '/t/1', httpStatus: 202, adopted: false }, 3),
          ...states.map((taskState, i) => ev('BmcTaskObserved', { taskMonitor: '/t/1', ...reading, taskState, percent }, 4 + i)),
        ];
        // A restart: nothing but the log.
        const restarted = log.reduce(evolveStep, initialStep());
        const last = states[states.length - 1]!;
        expect(isNewTaskReading(restarted, { ...reading, taskState: last })).toBe(false);
        expect(isNewTaskReading(restarted, { ...reading, taskState: last, taskStatus: 'Warning' })).toBe(true);
      }),
    );
  });

  it('a new attempt starts with no reading known, so its first reading is recorded even if it reads like the last one', () => {
    const log = [
      ev('UpdateSubmitted', { idempotencyKey: 'k1', taskMonitor: '/t/1', httpStatus: 202, adopted: false }, 3),
      ev('BmcTaskObserved', { taskMonitor: '/t/1', taskState: 'Running', taskStatus: 'OK', messages: [] }, 4),
      ev('UpdateIntentRecorded', { idempotencyKey: 'k2', attempt: 2, method: 'SimpleUpdate', imageUri: firmware.imageUri, applyTime: 'Immediate', at: 5 }, 5),
    ];
    expect(isNewTaskReading(log.reduce(evolveStep, initialStep()), { taskState: 'Running', taskStatus: 'OK', messages: [] })).toBe(true);
  });
});
