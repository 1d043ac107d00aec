/**
 * What a BMC's EventService offers, read as the ledger needs it: whether it is enabled, its SSE stream, its formats
 * and registries, and the SSE subscriptions it lists now (with the heartbeat each announces). Written from the
 * captures: iDRAC 9 and NVIDIA's OpenBMC name a `ServerSentEventUri` (iDRAC 9 at `/redfish/v1/SSE`, sometimes with
 * `ServiceEnabled: false`), iLO 5, X13, GH200 and AMI name none (`redfish/<model>/redfish/v1/EventService`).
 */
import type { RedfishClient } from '../redfish-client.js';
import { isDriverError } from '../../driver-error.js';

export type PushOffer =
  | { kind: 'sse'; sseUri: string; subscriptionsPath: string | undefined; formats: string[]; registries: string[]; testEventTarget: string | undefined }
  | { kind: 'none'; reason: 'no-event-service' | 'disabled' | 'no-sse' };

const EVENT_SERVICE = '/redfish/v1/EventService';

/** The BMC's push offer. A 404 for the EventService is `no-event-service`; any other failure is thrown. */
export async function readPushOffer(client: RedfishClient): Promise<PushOffer> {
  let body: unknown;
  try {
    body = (await client.get(EVENT_SERVICE)).body;
  } catch (error) {
    if (isDriverError(error) && error.code === 'DRIVER_NOT_FOUND') return { kind: 'none', reason: 'no-event-service' };
    throw error;
  }
  const service = objectOf(body);
  if (service.ServiceEnabled === false) return { kind: 'none', reason: 'disabled' };
  const sseUri = service.ServerSentEventUri;
  if (typeof sseUri !== 'string' || sseUri.length === 0) return { kind: 'none', reason: 'no-sse' };
  const testEvent = objectOf(objectOf(service.Actions)['#EventService.SubmitTestEvent']).target;
  return { kind: 'sse', sseUri, subscriptionsPath: linkOf(service.Subscriptions), formats: strings(service.EventFormatTypes), registries: strings(service.RegistryPrefixes), testEventTarget: typeof testEvent === 'string' ? testEvent : undefined };
}

/**
 * Asks the BMC to send a test event to its subscribers (`EventService.SubmitTestEvent`, advertised by every capture
 * that has a stream), carrying `token` in its `Message` so the asker knows it when it comes. Every subscriber of the
 * BMC receives it. Throws the `DriverError` of a refusal.
 */
export async function submitTestEvent(client: RedfishClient, target: string, token: string): Promise<void> {
  await client.post(target, { EventType: 'Alert', MessageId: 'Base.1.0.Success', Message: `fleet-ledger push probe ${token}`, Severity: 'OK', EventTimestamp: new Date().toISOString() });
}

export interface ListedSseSubscription {
  id: string;
  /** The heartbeat it announces (`SendHeartbeat`, `HeartbeatIntervalMinutes`), in milliseconds. */
  heartbeatMs: number | undefined;
}

/** The members of the BMC's subscription collection, by path. */
export async function listSubscriptions(client: RedfishClient, subscriptionsPath: string): Promise<string[]> {
  const collection = objectOf((await client.get(subscriptionsPath)).body);
  const members = Array.isArray(collection.Members) ? collection.Members : [];
  return members.map(linkOf).filter((path): path is string => path !== undefined);
}

/** One subscription: whether it is an SSE one, and the heartbeat it announces (`SendHeartbeat`, `HeartbeatIntervalMinutes`). */
export async function readSubscription(client: RedfishClient, path: string): Promise<{ sse: boolean } & ListedSseSubscription> {
  const subscription = objectOf((await client.get(path)).body);
  const minutes = subscription.HeartbeatIntervalMinutes;
  const heartbeatMs = subscription.SendHeartbeat === true && typeof minutes === 'number' && minutes > 0 ? minutes * 60_000 : undefined;
  return { sse: subscription.SubscriptionType === 'SSE', id: typeof subscription.Id === 'string' ? subscription.Id : path, heartbeatMs };
}

/** The SSE subscriptions the BMC lists now (members of another type are left out). */
export async function readSseSubscriptions(client: RedfishClient, subscriptionsPath: string): Promise<ListedSseSubscription[]> {
  const listed: ListedSseSubscription[] = [];
  for (const path of await listSubscriptions(client, subscriptionsPath)) {
    const { sse, ...subscription } = await readSubscription(client, path);
    if (sse) listed.push(subscription);
  }
  return listed;
}

function objectOf(value: unknown): Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? Object.fromEntries(Object.entries(value)) : {};
}

function linkOf(value: unknown): string | undefined {
  const id = objectOf(value)['@odata.id'];
  return typeof id === 'string' ? id : undefined;
}

function strings(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((item): item is string => typeof item === 'string') : [];
}
