/**
 * Firmware update over Redfish `UpdateService`, as the sagas use it: submit (SimpleUpdate, or a multipart push to
 * `MultipartHttpPushUri` where the BMC has no SimpleUpdate), read the task, find a task after a crash, activate a
 * staged image with a reset, and read the installed version back (the only proof an update happened).
 *
 * Outcomes are typed: a refusal is a `DriverError` with its code (`DRIVER_UPDATE_BUSY` while another update runs,
 * `DRIVER_REJECTED` for a bad request, `DRIVER_UNSUPPORTED` when the BMC offers no update method); a request whose
 * answer never came is `DRIVER_TIMEOUT` or `DRIVER_UNREACHABLE`, and the caller must treat its outcome as unknown.
 */
import { request } from 'undici';
import { DriverError } from '../driver-error.js';
import { normalizeRedfishError } from './redfish-error.js';
import type { RedfishClient } from './redfish-client.js';
import { asResource } from './resource-reader.js';

export interface FirmwareUpdateRequest {
  imageUri: string;
  /** `BMC` for the controller's own firmware, else a firmware inventory member's Id (or a word of its Name). */
  component: string;
  applyTime: 'Immediate' | 'OnReset';
  /** The preferred method; the other is used when the BMC lacks it. */
  method: 'SimpleUpdate' | 'MultipartHttpPush';
  /** Sent as `X-Fleet-Ledger-Intent` so the BMC side (or a proxy) can see which intent a request belongs to. */
  intentKey: string;
  /** Largest image pushed (multipart). Default 1 GiB. */
  maxImageBytes?: number;
}

export interface FirmwareSubmission {
  taskMonitor: string;
  httpStatus: number;
  method: 'SimpleUpdate' | 'MultipartHttpPush';
}

export interface UpdateTaskReading {
  taskState: string;
  taskStatus: string;
  percent: number | undefined;
  messages: string[];
}

type Get = (path: string) => Promise<Record<string, unknown> | undefined>;

function get(client: RedfishClient): Get {
  return async (path) => asResource((await client.get(path)).body);
}

async function updateService(client: RedfishClient): Promise<{ simpleTarget?: string; multipartUri?: string; inventory?: string }> {
  const root = await get(client)('/redfish/v1');
  const servicePath = asResource(root?.UpdateService)?.['@odata.id'];
  if (typeof servicePath !== 'string') throw new DriverError('DRIVER_UNSUPPORTED', 'the service root has no UpdateService');
  const service = await get(client)(servicePath);
  const simple = asResource(asResource(service?.Actions)?.['#UpdateService.SimpleUpdate'])?.target;
  const multipart = service?.MultipartHttpPushUri;
  const inventory = asResource(service?.FirmwareInventory ?? service?.SoftwareInventory)?.['@odata.id'];
  return {
    ...(typeof simple === 'string' ? { simpleTarget: simple } : {}),
    ...(typeof multipart === 'string' ? { multipartUri: multipart } : {}),
    ...(typeof inventory === 'string' ? { inventory } : {}),
  };
}

async function firstMember(client: RedfishClient, collection: string): Promise<Record<string, unknown> | undefined> {
  const list = await get(client)(collection);
  const first = Array.isArray(list?.Members) ? asResource(list.Members[0])?.['@odata.id'] : undefined;
  return typeof first === 'string' ? get(client)(first) : undefined;
}

/** The inventory member (or manager) that holds the component's version, and the path to target it by. */
async function locateComponent(client: RedfishClient, component: string): Promise<{ path: string; version: string | null } | undefined> {
  if (component.toUpperCase() === 'BMC') {
    const manager = await firstMember(client, '/redfish/v1/Managers');
    const path = manager?.['@odata.id'];
    if (typeof path !== 'string') return undefined;
    return { path, version: typeof manager?.FirmwareVersion === 'string' ? manager.FirmwareVersion : null };
  }
  const { inventory } = await updateService(client);
  if (!inventory) return undefined;
  const list = await get(client)(inventory);
  const members = Array.isArray(list?.Members) ? list.Members.map((member) => asResource(member)?.['@odata.id']).filter((id): id is string => typeof id === 'string') : [];
  const wanted = component.toLowerCase();
  const exact = members.find((path) => path.split('/').pop()?.toLowerCase() === wanted);
  const candidates = exact ? [exact] : members.filter((path) => path.toLowerCase().includes(wanted));
  for (const path of candidates.slice(0, 20)) {
    const entry = await get(client)(path);
    if (!entry) continue;
    const name = String(entry.Name ?? '').toLowerCase();
    if (exact || name.includes(wanted) || path.toLowerCase().includes(wanted)) {
      return { path, version: typeof entry.Version === 'string' ? entry.Version : null };
    }
  }
  return undefined;
}

export async function readFirmwareVersion(client: RedfishClient, component: string): Promise<string | null> {
  return (await locateComponent(client, component))?.version ?? null;
}

export async function submitFirmwareUpdate(client: RedfishClient, update: FirmwareUpdateRequest): Promise<FirmwareSubmission> {
  const service = await updateService(client);
  const located = await locateComponent(client, update.component);
  if (!located) throw new DriverError('DRIVER_NOT_FOUND', `no firmware component ${update.component} on this BMC`);
  const parameters: Record<string, unknown> = { Targets: [located.path], '@Redfish.OperationApplyTime': update.applyTime };
  const headers = { 'x-fleet-ledger-intent': update.intentKey };
  const useSimple = service.simpleTarget && (update.method === 'SimpleUpdate' || !service.multipartUri);
  let answer;
  let method: FirmwareSubmission['method'];
  if (useSimple) {
    method = 'SimpleUpdate';
    const protocol = /^(https?|ftp|nfs|cifs|tftp|sftp):/i.exec(update.imageUri)?.[1]?.toUpperCase();
    answer = await client.postRaw(service.simpleTarget!, JSON.stringify({ ImageURI: update.imageUri, ...(protocol ? { TransferProtocol: protocol } : {}), ...parameters }), 'application/json', headers);
  } else if (service.multipartUri) {
    method = 'MultipartHttpPush';
    const image = await fetchImage(update.imageUri, update.maxImageBytes ?? 1024 * 1024 * 1024);
    const boundary = `fleet-ledger-${Date.now().toString(36)}`;
    const filename = update.imageUri.split(/[/\\]/).pop() || 'image.bin';
    const body = Buffer.concat([
      Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="UpdateParameters"\r\nContent-Type: application/json\r\n\r\n${JSON.stringify(parameters)}\r\n`),
      Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="UpdateFile"; filename="${filename.replace(/"/g, '')}"\r\nContent-Type: application/octet-stream\r\n\r\n`),
      image,
      Buffer.from(`\r\n--${boundary}--\r\n`),
    ]);
    answer = await client.postRaw(service.multipartUri, body, `multipart/form-data; boundary=${boundary}`, headers);
  } else {
    throw new DriverError('DRIVER_UNSUPPORTED', 'the UpdateService offers neither SimpleUpdate nor MultipartHttpPushUri');
  }
  if (answer.status === 503 && /busy|in progress|TargetsBusy|ServiceTemporarilyUnavailable/i.test(answer.text)) {
    throw new DriverError('DRIVER_UPDATE_BUSY', 'the BMC is already running an update', { status: 503, method: 'POST', url: answer.url });
  }
  if (answer.status < 200 || answer.status >= 300) {
    throw normalizeRedfishError({ status: answer.status, bodyText: answer.text, method: 'POST', url: answer.url, phase: 'read' });
  }
  const location = Array.isArray(answer.headers.location) ? answer.headers.location[0] : answer.headers.location;
  let taskMonitor = location;
  if (!taskMonitor) {
    try {
      const id = (JSON.parse(answer.text) as Record<string, unknown>)['@odata.id'];
      if (typeof id === 'string') taskMonitor = id;
    } catch {
      // no body either
    }
  }
  if (!taskMonitor) throw new DriverError('DRIVER_PROTOCOL', 'the update was accepted without a task monitor (no Location, no @odata.id)', { status: answer.status, url: answer.url, method: 'POST' });
  return { taskMonitor: new URL(taskMonitor, client.origin).pathname, httpStatus: answer.status, method };
}

/** Reads a task; `vanished` when the BMC answers 404 (purged or forgotten). */
export async function readUpdateTask(client: RedfishClient, taskMonitor: string): Promise<UpdateTaskReading | 'vanished'> {
  let body: Record<string, unknown> | undefined;
  try {
    body = await get(client)(taskMonitor);
  } catch (error) {
    if (error instanceof DriverError && error.code === 'DRIVER_NOT_FOUND') return 'vanished';
    throw error;
  }
  const messages = Array.isArray(body?.Messages)
    ? body.Messages.map((message) => {
        const m = asResource(message);
        return `${String(m?.MessageId ?? '')}: ${String(m?.Message ?? '')}`.slice(0, 300);
      }).slice(0, 20)
    : [];
  const percent = typeof body?.PercentComplete === 'number' ? body.PercentComplete : undefined;
  return { taskState: String(body?.TaskState ?? body?.JobState ?? 'Unknown'), taskStatus: String(body?.TaskStatus ?? 'OK'), percent, messages };
}

/** After a crash: a task on the BMC for this image started no earlier than `since` (ms), else null. Read-only. */
export async function findUpdateTask(client: RedfishClient, imageUri: string, since: number): Promise<string | null> {
  const name = imageUri.split(/[/\\]/).pop() ?? imageUri;
  let list: Record<string, unknown> | undefined;
  try {
    list = await get(client)('/redfish/v1/TaskService/Tasks');
  } catch (error) {
    if (error instanceof DriverError && error.code === 'DRIVER_NOT_FOUND') return null;
    throw error;
  }
  const members = Array.isArray(list?.Members) ? list.Members.map((member) => asResource(member)?.['@odata.id']).filter((id): id is string => typeof id === 'string') : [];
  for (const path of members.slice(-30).reverse()) {
    const task = await get(client)(path).catch(() => undefined);
    if (!task) continue;
    const text = JSON.stringify([task.Payload, task.Messages, task.Name]);
    const started = typeof task.StartTime === 'string' ? Date.parse(task.StartTime) : NaN;
    if (text.includes(name) && (Number.isNaN(started) || started >= since - 120_000)) return new URL(path, client.origin).pathname;
  }
  return null;
}

/** Activates a staged image: `Manager.Reset` for the BMC's own firmware, `ComputerSystem.Reset` otherwise. */
export async function activateFirmware(client: RedfishClient, component: string): Promise<{ resetType: string; target: string }> {
  const bmc = component.toUpperCase() === 'BMC';
  const resource = await firstMember(client, bmc ? '/redfish/v1/Managers' : '/redfish/v1/Systems');
  const action = bmc ? '#Manager.Reset' : '#ComputerSystem.Reset';
  const target = asResource(asResource(resource?.Actions)?.[action])?.target;
  if (typeof target !== 'string') throw new DriverError('DRIVER_UNSUPPORTED', `no ${action} action to activate ${component}`);
  const resetType = bmc ? 'GracefulRestart' : 'ForceRestart';
  await client.post(target, { ResetType: resetType });
  return { resetType, target };
}

async function fetchImage(imageUri: string, maxBytes: number): Promise<Buffer> {
  if (!/^https?:\/\//i.test(imageUri)) throw new DriverError('DRIVER_UNSUPPORTED', `a multipart push needs an http(s) image URI, got ${imageUri.slice(0, 200)}`);
  try {
    const response = await request(imageUri, { signal: AbortSignal.timeout(300_000) });
    if (response.statusCode !== 200) {
      await response.body.dump();
      throw new DriverError('DRIVER_NOT_FOUND', `image ${imageUri} answered ${response.statusCode}`, { status: response.statusCode, url: imageUri });
    }
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of response.body) {
      size += (chunk as Buffer).length;
      if (size > maxBytes) {
        response.body.destroy();
        throw new DriverError('DRIVER_PROTOCOL', `image ${imageUri} is larger than ${maxBytes} bytes`, { url: imageUri });
      }
      chunks.push(chunk as Buffer);
    }
    return Buffer.concat(chunks);
  } catch (error) {
    if (error instanceof DriverError) throw error;
    throw new DriverError('DRIVER_UNREACHABLE', `image ${imageUri} could not be fetched: ${String(error).slice(0, 200)}`, { url: imageUri });
  }
}
