/**
 * One Redfish Server-Sent Events stream held open to a BMC (`EventService.ServerSentEventUri`): a long GET,
 * authenticated with basic auth (no session to leak: the BMC's slot is freed when the connection closes), read as it
 * comes and handed on record by record.
 *
 * Guarantees: `openEventStream` resolves once the BMC answered 200, or throws a `DriverError` (a refusal is
 * normalized like any Redfish answer: a 503 for the event-connection cap is `DRIVER_BMC_UNAVAILABLE`); headers have a
 * deadline, the stream itself none (silence is judged by the caller, against heartbeats and audits). `ended` settles
 * exactly once, with why; `close()` ends it and frees the connection. A message that cannot be read is reported and
 * skipped; a message larger than 1 MiB ends the stream (`DRIVER_PROTOCOL`).
 */
import { request, type Dispatcher } from 'undici';
import { DriverError, toDriverError } from '../../driver-error.js';
import { normalizeRedfishError } from '../redfish-error.js';
import { readRedfishEvent, type PushedEventRecord } from './redfish-event.js';
import { SseParser } from './sse-parser.js';

export interface EventStreamOptions {
  baseUrl: string;
  /** The stream's path, as the EventService names it. */
  uri: string;
  username: string;
  password: string;
  dispatcher?: Dispatcher;
  /** Deadline for the BMC's answer (status and headers). */
  connectTimeoutMs: number;
  headers?: Record<string, string>;
  onRecord: (record: PushedEventRecord) => void;
  onMalformed?: (reason: string) => void;
}

export type EventStreamEnd = { kind: 'closed' } | { kind: 'ended-by-bmc' } | { kind: 'failed'; error: DriverError };

export interface EventStream {
  readonly ended: Promise<EventStreamEnd>;
  close(): void;
}

export async function openEventStream(options: EventStreamOptions): Promise<EventStream> {
  const url = new URL(options.uri, options.baseUrl).toString();
  if (new URL(url).origin !== new URL(options.baseUrl).origin) {
    throw new DriverError('DRIVER_REDIRECT_REFUSED', `the stream ${options.uri} is not on the BMC's own origin`, { url });
  }
  const controller = new AbortController();
  const deadline = setTimeout(() => controller.abort(new DriverError('DRIVER_TIMEOUT', `GET ${url}: no answer within ${options.connectTimeoutMs} ms`, { url })), options.connectTimeoutMs);
  let response: Dispatcher.ResponseData;
  try {
    response = await request(url, {
      method: 'GET',
      headers: { accept: 'text/event-stream', authorization: `Basic ${Buffer.from(`${options.username}:${options.password}`).toString('base64')}`, ...options.headers },
      signal: controller.signal,
      ...(options.dispatcher ? { dispatcher: options.dispatcher } : {}),
    });
  } catch (error) {
    throw controller.signal.reason instanceof DriverError ? controller.signal.reason : toDriverError(error, { url });
  } finally {
    clearTimeout(deadline);
  }
  if (response.statusCode !== 200) {
    const bodyText = await response.body.text().catch(() => '');
    throw normalizeRedfishError({ status: response.statusCode, bodyText, method: 'GET', url, phase: 'read' });
  }
  let closedByUs = false;
  const ended = readMessages(response.body, options).then(
    (end): EventStreamEnd => (closedByUs ? { kind: 'closed' } : end),
    (error: unknown): EventStreamEnd => (closedByUs ? { kind: 'closed' } : { kind: 'failed', error: toDriverError(error, { url }) }),
  );
  return {
    ended,
    close: () => {
      closedByUs = true;
      controller.abort();
      response.body.destroy();
    },
  };
}

async function readMessages(body: Dispatcher.ResponseData['body'], options: EventStreamOptions): Promise<EventStreamEnd> {
  const parser = new SseParser();
  body.setEncoding('utf8');
  for await (const chunk of body) {
    const messages = parser.push(String(chunk));
    if (messages === 'oversize') {
      body.destroy();
      return { kind: 'failed', error: new DriverError('DRIVER_PROTOCOL', 'an event message larger than 1 MiB', {}) };
    }
    for (const message of messages) {
      const reading = readRedfishEvent(message.data, message.id);
      if (!reading.ok) options.onMalformed?.(reading.reason);
      else for (const record of reading.records) options.onRecord(record);
    }
  }
  return { kind: 'ended-by-bmc' };
}
