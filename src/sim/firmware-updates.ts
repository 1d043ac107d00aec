/**
 * Firmware updates as real BMCs perform them, per vendor profile:
 * - one update at a time: a second request while a task runs gets 503 and `UpdateService.HttpPushUriTargetsBusy`
 *   reads true;
 * - `SimpleUpdate` (ImageURI, Targets, `@Redfish.OperationApplyTime`) and a multipart push to the tree's
 *   `MultipartHttpPushUri` (`UpdateParameters` JSON part plus `UpdateFile`);
 * - the task runs New, Running, then Completed or Exception over the profile's update time;
 * - the version changes only after activation: the BMC's own firmware activates by the controller resetting itself
 *   (dark for `resetDarkMs`); any other component stays "awaiting reset" (`Update.1.0.AwaitToActivate`) until a
 *   `ComputerSystem.Reset`;
 * - faults scripted per BMC, rack or image (`update-fault` with a `mode`): fail, task purged (404) the moment it
 *   ends, Completed with Critical status and nothing applied, the BMC resetting mid-update and forgetting the task,
 *   the task read Running and then lost (404) with nothing applied and no reset, the request accepted but its answer
 *   lost, the request refused with a 400 naming the image; plus a failure rate per image.
 *
 * Every accepted request is counted per intent key (the `X-Fleet-Ledger-Intent` header a client may send) and the
 * number of BMCs with an update in flight (accepted and not yet settled) is tracked, so a test can check a saga
 * from the BMCs' side: duplicate submissions per intent, and the most nodes ever disrupted at once.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { canonicalPath } from './capture.ts';
import { baseError } from './redfish-replies.ts';
import { renderResource, storedPath } from './render.ts';
import type { SimBehaviour } from './behaviour.ts';
import type { SimClock } from './clock.ts';
import type { Random } from './random.ts';
import type { SimBmc, UpdateTask } from './sim-bmc.ts';
import type { VendorFamily, VendorProfile } from './vendor-profile.ts';

export type UpdateFaultMode = 'fail' | 'purge-task' | 'completed-critical' | 'reset-mid-update' | 'lost-after-running' | 'lost-response' | 'refuse-image';

export interface UpdateFault {
  mode: UpdateFaultMode;
  /** Only images whose URI contains this text. */
  image?: string | undefined;
  remaining: number;
}

export interface UpdateStats {
  accepted: number;
  refusedBusy: number;
  /** Accepted requests that carried an intent key already seen: a saga sent the same intent twice. */
  duplicateSubmissions: number;
  keyed: number;
  unkeyed: number;
  completed: number;
  failed: number;
  completedCritical: number;
  lostInReset: number;
  lostAfterRunning: number;
  refusedImage: number;
  purgedEarly: number;
  lostResponses: number;
  activations: number;
  /** BMCs with an update accepted and not yet settled (applied, failed or lost). */
  inFlight: number;
  maxInFlight: number;
}

export interface UpdateContext {
  clock: SimClock;
  behaviour: SimBehaviour;
  random: Random;
  seed: number;
  stats: UpdateStats;
  keys: Map<string, number>;
  inFlight: Set<SimBmc>;
  onReset?: ((bmc: SimBmc) => void) | undefined;
}

export function newUpdateStats(): UpdateStats {
  return {
    accepted: 0,
    refusedBusy: 0,
    duplicateSubmissions: 0,
    keyed: 0,
    unkeyed: 0,
    completed: 0,
    failed: 0,
    completedCritical: 0,
    lostInReset: 0,
    lostAfterRunning: 0,
    refusedImage: 0,
    purgedEarly: 0,
    lostResponses: 0,
    activations: 0,
    inFlight: 0,
    maxInFlight: 0,
  };
}

/** Update task times by family, from vendor documentation and field reports (iDRAC minutes, HMC bundles longer). */
const TASK_MS: Record<VendorFamily, number> = { dell: 240_000, hpe: 300_000, supermicro: 420_000, openbmc: 900_000, unknown: 300_000 };
/** Completed tasks stay readable this long before the BMC purges them. */
export const TASK_RETENTION_MS = 600_000;
const INTENT_HEADER = 'x-fleet-ledger-intent';

export function updateTaskMs(profile: VendorProfile, behaviour: SimBehaviour): number {
  return behaviour.firmwareUpdateMs ?? TASK_MS[profile.family];
}

const multipartPaths = new WeakMap<object, string | null>();

/** The tree's `MultipartHttpPushUri`, if it has one. */
export function multipartPathOf(bmc: SimBmc, seed: number): string | undefined {
  let path = multipartPaths.get(bmc.capture);
  if (path === undefined) {
    const template = bmc.capture.resources.get('/redfish/v1/UpdateService');
    const body = template ? (JSON.parse(renderResource(template, bmc, seed)) as Record<string, unknown>) : {};
    const uri = body['MultipartHttpPushUri'];
    path = typeof uri === 'string' ? canonicalPath(bmc.linkPrefix && uri.startsWith(bmc.linkPrefix) ? uri.slice(bmc.linkPrefix.length) : uri) : null;
    multipartPaths.set(bmc.capture, path);
  }
  return path ?? undefined;
}

/** Answers SimpleUpdate and multipart pushes. */
export async function acceptUpdate(
  context: UpdateContext,
  bmc: SimBmc,
  request: IncomingMessage,
  response: ServerResponse,
  kind: 'simple' | 'multipart',
  send: (status: number, body: unknown, headers?: Record<string, string>) => void,
  versionOf: (image: string) => string | undefined,
): Promise<void> {
  const { clock, behaviour, stats } = context;
  const submitted = updateRequestOf(await readBody(request), kind, String(request.headers['content-type'] ?? ''));
  bmc.counters.updateRequests++;
  if ('refusal' in submitted) return send(400, submitted.refusal);
  const { imageUri, targets, applyTime } = submitted;
  if (bmc.activeUpdate && !bmc.activeUpdate.finished) {
    stats.refusedBusy++;
    return send(503, baseError('ServiceTemporarilyUnavailable', 'An update is already in progress; the service is busy (HttpPushUriTargetsBusy).', 'Wait for the running update to finish and resubmit the request.'), { 'Retry-After': '30' });
  }

  countIntentKey(context, request);

  const withoutPrefix = (target: string): string => (bmc.linkPrefix && target.startsWith(bmc.linkPrefix) ? target.slice(bmc.linkPrefix.length) : target);
  const targetPath = targets
    .map((target) => storedPath(canonicalPath(withoutPrefix(target)), bmc, context.seed))
    .find((target) => !isOwnFirmware(bmc, target, context.seed));
  const version = versionOf(imageUri);
  const fault = takeFault(bmc, imageUri);
  if (fault === 'refuse-image') {
    // A BMC that will never take this image says so, naming it: nothing starts, and the same request is refused again.
    stats.refusedImage++;
    return send(400, {
      error: {
        code: 'Base.1.8.ActionParameterValueFormatError',
        message: `The value '${imageUri}' for the parameter ImageURI in the action SimpleUpdate is of a different format than the parameter can accept.`,
        '@Message.ExtendedInfo': [
          {
            MessageId: 'Base.1.8.ActionParameterValueFormatError',
            Message: `The value '${imageUri}' for the parameter ImageURI in the action SimpleUpdate is of a different format than the parameter can accept.`,
            MessageArgs: [imageUri, 'ImageURI', 'SimpleUpdate'],
            Severity: 'Warning',
            Resolution: 'Correct the value for the parameter in the request body and resubmit the request if the operation failed.',
          },
        ],
      },
    });
  }
  const fate = fateOf(context, bmc, imageUri, version, fault);

  // A duration the scenario sets is exact (tests time it); the vendors' own vary by ±20% from update to update.
  const durationMs = behaviour.firmwareUpdateMs ?? updateTaskMs(bmc.profile, behaviour) * (0.8 + 0.4 * context.random());
  const task: UpdateTask = {
    id: `JID_${String(bmc.nextId++).padStart(6, '0')}`,
    imageUri,
    targetPath,
    version: version ?? 'unknown',
    startedAt: clock.now(),
    durationMs,
    willFail: fate === 'fail',
    finished: false,
    fate,
    status: 'OK',
    awaitingActivation: false,
    purgeEarly: fault === 'purge-task',
    onReset: applyTime === 'OnReset',
  };
  (bmc.tasks ??= new Map()).set(task.id, task);
  if (bmc.activeUpdate?.awaitingActivation) settle(context, bmc, bmc.activeUpdate); // a new image replaces the staged one
  bmc.activeUpdate = task;
  bmc.counters.updates++;
  stats.accepted++;
  if (!context.inFlight.has(bmc)) {
    context.inFlight.add(bmc);
    stats.inFlight = context.inFlight.size;
    stats.maxInFlight = Math.max(stats.maxInFlight, stats.inFlight);
  }

  scheduleTask(context, bmc, task);

  if (fault === 'lost-response') {
    stats.lostResponses++;
    request.socket.destroy();
    return;
  }
  send(202, taskBodyOf(bmc, task, clock.now()), { Location: `${bmc.linkPrefix}/redfish/v1/TaskService/Tasks/${task.id}` });
}

/** What an update request asks for (image, targets, apply time), or the 400 body that refuses it. */
function updateRequestOf(
  raw: Buffer,
  kind: 'simple' | 'multipart',
  contentType: string,
): { imageUri: string; targets: string[]; applyTime: string | undefined } | { refusal: unknown } {
  let imageUri: string | undefined;
  let targets: string[] = [];
  let applyTime: string | undefined;
  if (kind === 'simple') {
    let body: Record<string, unknown> | undefined;
    try {
      body = JSON.parse(raw.toString('utf8')) as Record<string, unknown>;
    } catch {
      body = undefined;
    }
    imageUri = typeof body?.['ImageURI'] === 'string' ? (body['ImageURI'] as string) : undefined;
    targets = stringArray(body?.['Targets']);
    applyTime = typeof body?.['@Redfish.OperationApplyTime'] === 'string' ? (body['@Redfish.OperationApplyTime'] as string) : undefined;
  } else {
    const parts = parseMultipart(raw, contentType);
    const parameters = parts.find((part) => part.name === 'UpdateParameters');
    const file = parts.find((part) => part.name === 'UpdateFile');
    if (parameters) {
      try {
        const json = JSON.parse(parameters.body.toString('utf8')) as Record<string, unknown>;
        targets = stringArray(json['Targets']);
        applyTime = typeof json['@Redfish.OperationApplyTime'] === 'string' ? (json['@Redfish.OperationApplyTime'] as string) : undefined;
      } catch {
        return { refusal: baseError('MalformedJSON', 'The UpdateParameters part is not valid JSON.', 'Correct the request body and resubmit the request.') };
      }
    }
    if (!file || file.body.length === 0) {
      return { refusal: baseError('PropertyMissing', 'The multipart request has no UpdateFile part.', 'Include the image in an UpdateFile part and resubmit the request.') };
    }
    imageUri = file.filename;
  }
  if (!imageUri) {
    return { refusal: baseError('PropertyMissing', 'The property ImageURI is a required property and must be included in the request.', 'Ensure that the property is in the request body and has a valid value and resubmit the request if the operation failed.') };
  }
  return { imageUri, targets, applyTime };
}

/** Counts the request's intent key (an idempotency key seen before is a duplicate submission). */
function countIntentKey(context: UpdateContext, request: IncomingMessage): void {
  const { stats } = context;
  const key = request.headers[INTENT_HEADER];
  if (typeof key === 'string' && key.length > 0) {
    stats.keyed++;
    const seen = context.keys.get(key) ?? 0;
    if (seen > 0) stats.duplicateSubmissions++;
    context.keys.set(key, seen + 1);
  } else stats.unkeyed++;
}

/** How the update will end: an unknown image, a scripted fault, or the scenario's failure rates decide it. */
function fateOf(context: UpdateContext, bmc: SimBmc, imageUri: string, version: string | undefined, fault: ReturnType<typeof takeFault>): UpdateTask['fate'] {
  const { behaviour } = context;
  const imageRate = Object.entries(behaviour.imageFailureRates ?? {}).find(([pattern]) => imageUri.includes(pattern))?.[1] ?? 0;
  let fate: UpdateTask['fate'] = 'ok';
  if (version === undefined || fault === 'fail' || context.random() < behaviour.firmwareFailureRate || context.random() < imageRate) fate = 'fail';
  else if (fault === 'completed-critical') fate = 'critical';
  else if (fault === 'reset-mid-update') fate = 'reset-mid-update';
  else if (fault === 'lost-after-running') fate = 'lost-after-running';
  if (bmc.failingUpdates > 0) {
    bmc.failingUpdates--;
    fate = 'fail';
  }

  return fate;
}

/**
 * Schedules what happens next to a running task, from its start time: its end, or its loss halfway (a reset, a
 * dropped job). Used when the task is accepted, and when a restarted simulator takes back a task it had running.
 */
export function scheduleTask(context: UpdateContext, bmc: SimBmc, task: UpdateTask): void {
  const { clock, behaviour, stats } = context;
  const after = (simulatedMs: number): number => Math.max(0, task.startedAt + simulatedMs - clock.now());
  if (task.fate === 'reset-mid-update') {
    clock.schedule(after(task.durationMs / 2), () => {
      // The controller resets and forgets the job: the task is gone and nothing changed.
      bmc.tasks?.delete(task.id);
      task.finished = true;
      stats.lostInReset++;
      settle(context, bmc, task);
      bmc.reset(clock, behaviour.resetDarkMs);
      context.onReset?.(bmc);
    });
  } else if (task.fate === 'lost-after-running') {
    clock.schedule(after(task.durationMs / 2), () => {
      // The BMC drops the job it showed Running (its task monitor answers 404 from now on); nothing is applied and
      // the controller does not reset.
      bmc.tasks?.delete(task.id);
      task.finished = true;
      stats.lostAfterRunning++;
      settle(context, bmc, task);
    });
  } else clock.schedule(after(task.durationMs), () => finish(context, bmc, task));
}

function finish(context: UpdateContext, bmc: SimBmc, task: UpdateTask): void {
  const { clock, behaviour, stats } = context;
  task.finished = true;
  task.endedAt = clock.now();
  if (task.fate === 'fail') {
    stats.failed++;
    bmc.counters.updatesFailed++;
    task.status = 'Critical';
    settle(context, bmc, task);
  } else if (task.fate === 'critical') {
    stats.completedCritical++;
    task.status = 'Critical';
    settle(context, bmc, task);
  } else if (task.targetPath === undefined && !task.onReset) {
    // The BMC's own firmware: the controller resets itself to activate it, and comes back on the new version.
    stats.completed++;
    task.status = 'OK';
    clock.schedule(1_000, () => {
      bmc.reset(clock, behaviour.resetDarkMs);
      context.onReset?.(bmc);
      clock.schedule(behaviour.resetDarkMs, () => {
        bmc.firmware = task.version;
        settle(context, bmc, task);
      });
    });
  } else {
    stats.completed++;
    task.status = 'OK';
    task.awaitingActivation = true;
  }
  const purgeAfter = task.purgeEarly ? 0 : TASK_RETENTION_MS;
  if (task.purgeEarly) stats.purgedEarly++;
  if (!task.awaitingActivation || task.purgeEarly) clock.schedule(purgeAfter, () => bmc.tasks?.delete(task.id));
}

/** The update no longer disrupts the node: applied, failed or lost. */
export function settle(context: UpdateContext, bmc: SimBmc, task: UpdateTask): void {
  task.awaitingActivation = false;
  if (bmc.activeUpdate === task) bmc.activeUpdate = undefined;
  if (!bmc.activeUpdate && context.inFlight.delete(bmc)) context.stats.inFlight = context.inFlight.size;
}

/** `ComputerSystem.Reset` or `Manager.Reset`: activates a staged image (the host reboots; the BMC goes dark). */
export function resetAction(context: UpdateContext, bmc: SimBmc, which: 'system' | 'manager'): void {
  const { clock, behaviour, stats } = context;
  const staged = bmc.activeUpdate?.awaitingActivation ? bmc.activeUpdate : undefined;
  if (which === 'manager') {
    bmc.reset(clock, behaviour.resetDarkMs);
    context.onReset?.(bmc);
  }
  if (!staged) return;
  stats.activations++;
  const rebootMs = which === 'manager' ? behaviour.resetDarkMs : Math.max(1_000, behaviour.resetDarkMs / 2);
  clock.schedule(rebootMs, () => {
    if (staged.targetPath === undefined) bmc.firmware = staged.version;
    else (bmc.inventoryVersions ??= new Map()).set(staged.targetPath, staged.version);
    settle(context, bmc, staged);
    clock.schedule(TASK_RETENTION_MS, () => bmc.tasks?.delete(staged.id));
  });
}

function takeFault(bmc: SimBmc, imageUri: string): UpdateFaultMode | undefined {
  const faults = bmc.updateFaults;
  if (!faults) return undefined;
  const index = faults.findIndex((fault) => fault.remaining > 0 && (fault.image === undefined || imageUri.includes(fault.image)));
  if (index < 0) return undefined;
  const fault = faults[index]!;
  fault.remaining--;
  if (fault.remaining <= 0) faults.splice(index, 1);
  return fault.mode;
}

export type TaskStateName = 'New' | 'Running' | 'Completed' | 'Exception';

export function taskBodyOf(bmc: SimBmc, task: UpdateTask, now: number): unknown {
  const elapsed = now - task.startedAt;
  const state: TaskStateName = !task.finished ? (elapsed < Math.min(2_000, task.durationMs / 10) ? 'New' : 'Running') : task.fate === 'fail' ? 'Exception' : 'Completed';
  const percent = task.finished ? 100 : Math.min(99, Math.floor((elapsed / task.durationMs) * 100));
  const messages =
    state === 'New' || state === 'Running'
      ? [{ MessageId: 'Update.1.0.UpdateInProgress', Message: `An update is in progress for ${task.imageUri}.`, Severity: 'OK' }]
      : state === 'Exception'
        ? [{ MessageId: 'Update.1.0.ApplyFailed', Message: `Installing or applying the image ${task.imageUri} failed.`, Severity: 'Critical', Resolution: 'Retry the update; if it fails again, check the image and the component.' }]
        : task.fate === 'critical'
          ? [{ MessageId: 'Update.1.0.UpdateSuccessful', Message: `The update of ${task.imageUri} completed.`, Severity: 'OK' }, { MessageId: 'Base.1.8.InternalError', Message: 'The request failed due to an internal service error.', Severity: 'Critical' }]
          : task.awaitingActivation
            ? [{ MessageId: 'Update.1.0.AwaitToActivate', Message: `The image ${task.imageUri} is staged and awaits a reset to activate.`, Severity: 'OK', Resolution: 'Reset the system to activate the image.' }]
            : [{ MessageId: 'Update.1.0.UpdateSuccessful', Message: `The update of ${task.imageUri} completed; version ${task.version} installed.`, Severity: 'OK' }];
  return {
    '@odata.id': `${bmc.linkPrefix}/redfish/v1/TaskService/Tasks/${task.id}`,
    '@odata.type': '#Task.v1_4_3.Task',
    Id: task.id,
    Name: `Firmware update ${task.id}`,
    TaskState: state,
    TaskStatus: task.finished ? task.status : 'OK',
    PercentComplete: percent,
    StartTime: new Date(task.startedAt).toISOString(),
    ...(task.endedAt !== undefined ? { EndTime: new Date(task.endedAt).toISOString() } : {}),
    Messages: messages,
    Payload: { TargetUri: '/redfish/v1/UpdateService/Actions/UpdateService.SimpleUpdate', HttpOperation: 'POST', JsonBody: JSON.stringify({ ImageURI: task.imageUri }) },
  };
}

/** True when `path` names the BMC's own firmware (its manager, or an inventory member showing its version). */
function isOwnFirmware(bmc: SimBmc, path: string, seed: number): boolean {
  if (path.startsWith('/redfish/v1/Managers/')) return true;
  const template = bmc.capture.resources.get(path);
  if (!template) return false;
  return renderResource(template, bmc, seed).includes(`"Version":"${bmc.firmware}"`);
}

function stringArray(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((item): item is string => typeof item === 'string') : [];
}

async function readBody(request: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request) {
    size += (chunk as Buffer).length;
    if (size > 64 * 1024 * 1024) break;
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}

/** A small multipart/form-data reader: enough for `UpdateParameters` and `UpdateFile`. */
export function parseMultipart(body: Buffer, contentType: string): Array<{ name: string; filename: string | undefined; body: Buffer }> {
  const boundary = /boundary="?([^";]+)"?/i.exec(contentType)?.[1];
  if (!boundary) return [];
  const delimiter = Buffer.from(`--${boundary}`);
  const parts: Array<{ name: string; filename: string | undefined; body: Buffer }> = [];
  let start = body.indexOf(delimiter);
  while (start >= 0) {
    const next = body.indexOf(delimiter, start + delimiter.length);
    if (next < 0) break;
    const part = body.subarray(start + delimiter.length + 2, next - 2);
    const headerEnd = part.indexOf('\r\n\r\n');
    if (headerEnd >= 0) {
      const headers = part.subarray(0, headerEnd).toString('utf8');
      const name = /name="([^"]*)"/i.exec(headers)?.[1] ?? '';
      const filename = /filename="([^"]*)"/i.exec(headers)?.[1];
      parts.push({ name, filename, body: part.subarray(headerEnd + 4) });
    }
    start = next;
  }
  return parts;
}
