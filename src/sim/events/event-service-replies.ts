/**
 * What a BMC with an EventService answers about it: the service (`ServiceEnabled`, `ServerSentEventUri`, formats,
 * registries), its subscriptions (each SSE stream it still lists, as bmcweb lists them: `SubscriptionType: SSE`), and
 * the stream itself. Heartbeats, where the behaviour gives them, are announced on each subscription as
 * `SendHeartbeat` and `HeartbeatIntervalMinutes` (EventDestination v1.11; fractional here, so tests can run in seconds).
 */
import type { ServerResponse } from 'node:http';
import { canonicalPath } from '../capture.ts';
import type { SimBmc } from '../sim-bmc.ts';

export const EVENT_SERVICE_PATH = '/redfish/v1/EventService';
export const SUBSCRIPTIONS_PATH = '/redfish/v1/EventService/Subscriptions';
export const TEST_EVENT_PATH = '/redfish/v1/EventService/Actions/EventService.SubmitTestEvent';

/** The body of an EventService resource, or undefined when `path` is none of them (or the BMC has no EventService). */
export function eventServiceBody(bmc: SimBmc, path: string, heartbeatMs: number | undefined): string | undefined {
  const events = bmc.events;
  if (!events) return undefined;
  const link = (own: string): { '@odata.id': string } => ({ '@odata.id': `${bmc.linkPrefix}${own}` });
  if (path === EVENT_SERVICE_PATH) {
    return JSON.stringify({
      '@odata.id': `${bmc.linkPrefix}${EVENT_SERVICE_PATH}`,
      '@odata.type': '#EventService.v1_5_0.EventService',
      Id: 'EventService',
      Name: 'Event Service',
      ServiceEnabled: events.spec.serviceEnabled,
      ServerSentEventUri: `${bmc.linkPrefix}${events.spec.sseUri}`,
      EventFormatTypes: ['Event', 'MetricReport'],
      ...(events.spec.registryPrefixes.length > 0 ? { RegistryPrefixes: [...events.spec.registryPrefixes] } : {}),
      DeliveryRetryAttempts: 3,
      DeliveryRetryIntervalSeconds: 30,
      Subscriptions: link(SUBSCRIPTIONS_PATH),
      Actions: { '#EventService.SubmitTestEvent': { target: `${bmc.linkPrefix}${TEST_EVENT_PATH}` } },
    });
  }
  const listed = events.listed();
  if (path === SUBSCRIPTIONS_PATH) {
    return JSON.stringify({
      '@odata.id': `${bmc.linkPrefix}${SUBSCRIPTIONS_PATH}`,
      '@odata.type': '#EventDestinationCollection.EventDestinationCollection',
      Name: 'Event Destination Collections',
      Members: listed.map((stream) => link(`${SUBSCRIPTIONS_PATH}/${stream.id}`)),
      'Members@odata.count': listed.length,
    });
  }
  const stream = listed.find((candidate) => path === `${SUBSCRIPTIONS_PATH}/${candidate.id}`);
  if (!stream) return undefined;
  return JSON.stringify({
    '@odata.id': `${bmc.linkPrefix}${path}`,
    '@odata.type': '#EventDestination.v1_11_0.EventDestination',
    Id: stream.id,
    Name: 'Event Destination',
    SubscriptionType: 'SSE',
    Protocol: 'Redfish',
    EventFormatType: 'Event',
    ...(heartbeatMs !== undefined ? { SendHeartbeat: true, HeartbeatIntervalMinutes: heartbeatMs / 60_000 } : {}),
  });
}

/** True when `path` is the BMC's stream. */
export function isEventStream(bmc: SimBmc, path: string): boolean {
  return bmc.events !== undefined && bmc.events.spec.serviceEnabled && path === canonicalPath(bmc.events.spec.sseUri);
}

/** True when `path` is the BMC's `SubmitTestEvent` action. */
export function isTestEventAction(bmc: SimBmc, path: string): boolean {
  return bmc.events !== undefined && path === TEST_EVENT_PATH;
}

/**
 * `EventService.SubmitTestEvent`: the BMC sends the event described (its `MessageId` and `Message`, else a
 * `Base.1.0.Success`) to its streams, as any event: a silent, stalled or forgotten stream does not get it.
 */
export function submitTestEvent(bmc: SimBmc, body: unknown): void {
  const fields = body !== null && typeof body === 'object' && !Array.isArray(body) ? Object.fromEntries(Object.entries(body)) : {};
  const text = (value: unknown, otherwise: string): string => (typeof value === 'string' && value.length > 0 && value.length <= 1024 ? value : otherwise);
  bmc.events?.emit(text(fields.MessageId, 'Base.1.0.Success'), text(fields.Message, 'Test event.'), 'OK', `${bmc.linkPrefix}/redfish/v1/EventService`);
}

/** Opens the stream, or answers 503 when the BMC's event connections are all taken. */
export function openEventStream(bmc: SimBmc, response: ServerResponse): void {
  if (bmc.events?.open(response)) return;
  const body = { error: { code: 'Base.1.8.ServiceTemporarilyUnavailable', message: 'The service is temporarily unavailable: no more event connections.', '@Message.ExtendedInfo': [{ MessageId: 'Base.1.8.ServiceTemporarilyUnavailable', Message: 'The maximum number of event connections is reached.', Severity: 'Critical', Resolution: 'Close an event connection and retry.' }] } };
  response.writeHead(503, { 'Content-Type': 'application/json; charset=utf-8', 'Retry-After': '60' }).end(JSON.stringify(body));
}
