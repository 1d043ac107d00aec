/**
 * Drives one node's firmware update step until it is terminal or held: the one flashing path, used by rollouts and
 * by provisioning's firmware baseline. Writes go intent first, request second, submission third; see
 * `rollout-engine.ts` for why that order makes kill -9 safe.
 */
import { assertNever, type ProposedEvent, type SagaLeaseStamp } from '../../events/index.js';
import { DriverError, RedfishDriver, type BmcTlsOptions, type RedfishDriverOptions } from '../../src/drivers/index.js';
import type { EventStore } from '../../src/ledger/index.js';
import type { RolloutPlan } from '../firmware-rollout/rollout-planner.js';
import { decideStep, probeVerdict, versionMatches, type StepContext, type StepTiming } from '../firmware-rollout/step-decide.js';
import { evolveStep, initialStep, isNewTaskReading, stepStream, type StepState } from '../firmware-rollout/step-evolve.js';
import { isPermanentRefusal } from '../firmware-rollout/permanent-refusal.js';
import { nameUuid } from '../../src/ledger/index.js';
import { sagaBmcTls } from './bmc-trust.js';

export interface BmcAccess {
  baseUrl: string;
  username: string;
  password: string;
  insecure?: boolean;
  /** The site's TLS policy for this BMC (default: the certificate the log pinned for the node; `bmc-trust.ts`). */
  tls?: BmcTlsOptions;
}

export interface StepDriverOptions {
  store: EventStore;
  rolloutId: string;
  nodeId: string;
  plan: Pick<RolloutPlan, 'firmware' | 'verifyReads' | 'retryBudget' | 'stepDeadlineMs' | 'quietPeriodMs'>;
  slotId: string;
  timing: StepTiming;
  access: BmcAccess | undefined;
  now: () => number;
  stopping: () => boolean;
  /** False once the saga's lease is lost: the step then appends nothing more (the next owner resumes it). */
  owned?: () => boolean;
  /** The saga's lease (its key and epoch), carried by every event the step appends: a stale one is refused. */
  lease?: SagaLeaseStamp;
  get: () => StepState | undefined;
  set: (step: StepState) => void;
  requestTimeoutMs: number;
  log?: (message: string, fields?: Record<string, unknown>) => void;
}

export async function loadStepState(store: EventStore, rolloutId: string, nodeId: string): Promise<StepState> {
  let state = initialStep();
  for (const event of await store.readStreamToEnd(stepStream(rolloutId, nodeId))) state = evolveStep(state, { type: event.type, data: event.data, actor: event.actor, recordedAt: event.recordedAt.getTime() });
  return state;
}

export async function driveFirmwareStep(options: StepDriverOptions): Promise<void> {
  const { store, rolloutId, nodeId, plan } = options;
  const sleep = (ms: number): Promise<void> => sleepUnless(ms, options.stopping);
  const context: StepContext = { rolloutId, nodeId, plan, timing: options.timing };
  const stream = stepStream(rolloutId, nodeId);
  const actor = { kind: 'saga' as const, id: `rollout:${rolloutId}`, ...(options.lease ? { lease: options.lease } : {}) };
  const access = options.access;
  let driver: RedfishDriver | undefined;
  const bmc = async (): Promise<RedfishDriver> => {
    if (!access) throw new DriverError('DRIVER_UNREACHABLE', `no BMC address or credentials for ${nodeId}`);
    if (driver) return driver;
    // The certificate trusted as the poller trusts it (the pin the log holds); a latched node gets no credential.
    const tls = await sagaBmcTls(store, nodeId, access);
    // Basic auth, not a Redfish session: an engine killed mid-step would leak its session, and a BMC with 4 to 8
    // slots and a 30-minute idle timeout is then locked out of updates (and of polling) for half an hour.
    driver ??= new RedfishDriver({ ...access, ...(tls ? { tls } : {}), authMode: 'basic', requestTimeoutMs: options.requestTimeoutMs } as RedfishDriverOptions);
    return driver;
  };
  const append = async (events: Array<Omit<ProposedEvent, 'actor'>>): Promise<void> => {
    const step = options.get()!;
    if (options.owned && !options.owned()) throw new Error(`step ${stream} is not held by this process (saga lease lost)`);
    const result = await store.append(stream, events.map((event) => ({ ...event, actor })), { expectedVersion: step.version === 0 ? 'no_stream' : step.version });
    if (result.idempotentReplay) {
      options.set(await loadStepState(store, rolloutId, nodeId)); // written before a crash: the stored copy (and its times) is the truth
      return;
    }
    // Acknowledged means committed as written: fold it here instead of reading it back (the recorded time differs
    // from this clock by the commit latency; a restarted engine folds the stored times).
    let next = step;
    const at = options.now();
    for (const event of events) next = evolveStep(next, { type: event.type, data: event.data, actor, recordedAt: at });
    options.set(next);
  };
  try {
    while (!options.stopping()) {
      const step = options.get();
      if (!step) return;
      const now = options.now();
      const { action, due } = decideStep(step, now, context);
      if (due > now) {
        await sleep(Math.min(due - now, 1_000));
        continue;
      }
      try {
        switch (action.kind) {
          case 'done':
          case 'held':
            return;
          case 'start': {
            const slotId = options.slotId;
            await append([{ type: 'StepStarted', data: { rolloutId, nodeId, slotId, component: plan.firmware.component, targetVersion: plan.firmware.version }, eventId: nameUuid(`${stream}:started`) }]);
            break;
          }
          case 'preflight': {
            const version = await (await bmc()).readFirmwareVersion(plan.firmware.component);
            await append([{ type: 'VersionObserved', data: { version, matches: versionMatches(version, plan.firmware.version, plan.firmware.component), readNo: 0 } }]);
            break;
          }
          case 'submit': {
            // Intent first, acknowledged; only then the request.
            await append([{ type: 'UpdateIntentRecorded', data: { idempotencyKey: action.key, attempt: action.attempt, method: plan.firmware.method, imageUri: plan.firmware.imageUri, applyTime: plan.firmware.applyTime, at: options.now() } }]);
            try {
              const submitted = await (await bmc()).submitFirmwareUpdate({ imageUri: plan.firmware.imageUri, component: plan.firmware.component, applyTime: plan.firmware.applyTime, method: plan.firmware.method, intentKey: action.key });
              await append([{ type: 'UpdateSubmitted', data: { idempotencyKey: action.key, taskMonitor: submitted.taskMonitor, httpStatus: submitted.httpStatus, adopted: false } }]);
            } catch (error) {
              if (!(error instanceof DriverError)) throw error;
              const unknown = error.code === 'DRIVER_TIMEOUT' || error.code === 'DRIVER_UNREACHABLE' || error.code === 'DRIVER_PROTOCOL';
              const messages = error.details.messages ?? [];
              const messageIds = messages.flatMap((message) => (message.messageId ? [message.messageId.slice(0, 200)] : [])).slice(0, 20);
              const permanent = !unknown && isPermanentRefusal({ status: error.details.status, messageIds, text: [error.message, ...messages.map((message) => message.message ?? '')].join('\n') }, plan.firmware.imageUri);
              await append([
                {
                  type: 'UpdateSubmissionFailed',
                  data: { idempotencyKey: action.key, code: error.code, ...(error.details.status !== undefined ? { status: error.details.status } : {}), message: error.message.slice(0, 2000), outcomeKnown: !unknown, permanent, ...(messageIds.length ? { messageIds } : {}) },
                },
              ]);
            }
            break;
          }
          case 'poll-task': {
            const reading = await (await bmc()).readUpdateTask(action.taskMonitor);
            if (reading === 'vanished') await append([{ type: 'BmcTaskVanished', data: { taskMonitor: action.taskMonitor } }]);
            else {
              // "Already recorded" is read from the step's state (folded from the log), not kept in this process: a
              // restarted engine reading the same task does not record the same reading again.
              if (isNewTaskReading(step, reading)) {
                await append([{ type: 'BmcTaskObserved', data: { taskMonitor: action.taskMonitor, taskState: reading.taskState, taskStatus: reading.taskStatus, ...(reading.percent !== undefined ? { percent: Math.max(0, Math.min(100, reading.percent)) } : {}), messages: reading.messages } }]);
              }
              if (reading.taskState !== 'Completed' && reading.taskState !== 'Exception') await sleep(options.timing.pollIntervalMs);
            }
            break;
          }
          case 'activate': {
            const activation = await (await bmc()).activateFirmware(plan.firmware.component);
            await append([{ type: 'ActivationRequested', data: { resetType: activation.resetType, target: activation.target, at: options.now() } }]);
            break;
          }
          case 'read-version': {
            const version = await (await bmc()).readFirmwareVersion(plan.firmware.component);
            await append([{ type: 'VersionObserved', data: { version, matches: versionMatches(version, plan.firmware.version, plan.firmware.component), readNo: step.readNo + 1 } }]);
            break;
          }
          case 'verified':
            await append([
              { type: 'VersionVerified', data: { version: action.version, reads: action.reads } },
              { type: 'StepSucceeded', data: { outcome: 'updated', version: action.version } },
            ]);
            break;
          case 'probe': {
            let observed: { reachable: boolean; version: string | null; matchingTask: string | null } = { reachable: false, version: null, matchingTask: null };
            try {
              const version = await (await bmc()).readFirmwareVersion(plan.firmware.component);
              const matchingTask = versionMatches(version, plan.firmware.version, plan.firmware.component) ? null : await (await bmc()).findUpdateTask(plan.firmware.imageUri, step.intentAt ?? step.startedAt ?? 0);
              observed = { reachable: true, version, matchingTask };
            } catch (error) {
              if (!(error instanceof DriverError)) throw error;
            }
            const verdict = probeVerdict(step, observed, options.now(), context);
            await append([{ type: 'ReconcileProbed', data: { ...observed, verdict } }]);
            if (verdict === 'ambiguous') await append([{ type: 'StepHeld', data: { nodeId, hold: 'reconcile-required', reason: `BMC unreachable for ${step.probes + 1} probes with the outcome of ${step.key ?? 'the update'} unknown` } }]);
            break;
          }
          case 'succeed':
            await append([{ type: 'StepSucceeded', data: { outcome: action.outcome, version: action.version } }]);
            break;
          case 'retry':
            await append([{ type: 'RetryScheduled', data: { attempt: action.attempt, notBefore: action.notBefore, cause: action.cause.slice(0, 2000) } }]);
            break;
          case 'fail':
            await append([{ type: 'StepFailed', data: { cause: action.cause.slice(0, 2000) } }]);
            break;
          case 'hold':
            await append([{ type: 'StepHeld', data: { nodeId, hold: action.hold, reason: action.reason.slice(0, 2000) } }]);
            options.log?.('node held', { rolloutId, nodeId, hold: action.hold, reason: action.reason });
            break;
          default:
            assertNever(action, 'step action');
        }
      } catch (error) {
        if (error instanceof DriverError) {
          // The BMC did not answer (resetting, dark, busy): the state did not change; try again later.
          await sleep(options.timing.readIntervalMs);
          continue;
        }
        if ((error as { code?: string }).code === 'LEDGER_WRONG_EXPECTED_VERSION') {
          options.set(await loadStepState(store, rolloutId, nodeId)); // another writer (an operator verb) appended: read and decide again
          continue;
        }
        throw error;
      }
    }
  } finally {
    await driver?.close();
  }
}

/** Sleeps in short slices so a stopping engine is not kept waiting for a long back-off. */
async function sleepUnless(ms: number, stopping: () => boolean): Promise<void> {
  const end = Date.now() + ms;
  while (Date.now() < end && !stopping()) await new Promise((resolve) => setTimeout(resolve, Math.min(200, end - Date.now())));
}
