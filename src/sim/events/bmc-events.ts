/**
 * One simulated BMC's event service: the SSE streams open on it, what it lists as subscriptions, and the field's
 * failure modes injected as faults. Mutated only from the simulator's one event loop.
 *
 * What a stream is sent: each Redfish event once, in order, as `id: <EventId>` and `data: <Event>` lines; a
 * heartbeat (`HeartbeatEvent.1.0.RedfishServiceFunctional`) every `heartbeatMs` when the behaviour asks for them
 * (no captured controller advertises heartbeats, see `docs/push.md`). Nothing while the BMC is dark. The failure
 * modes bend that:
 * - `silent`: streams are accepted and listed, and nothing is ever sent on them (heartbeats neither);
 * - a reset forgets every subscription (nothing listed afterwards) and leaves its streams open and mute, as a client
 *   reading a stream sends nothing that would meet the rebooted BMC's reset;
 * - `stall()`: the streams open now stop sending for good, still listed;
 * - `cap`: streams beyond it are refused (503);
 * - `duplicate`: every event is sent twice; `reorder`: events are sent in swapped pairs.
 */
import type { ServerResponse } from 'node:http';
import type { SimClock } from '../clock.ts';
import type { SimEventServiceSpec } from './event-service-profiles.ts';

export type StreamMute = 'no' | 'stalled' | 'orphaned';

export interface SimEventStream {
  id: string;
  response: ServerResponse;
  mute: StreamMute;
  heartbeat: { cancel(): void } | undefined;
}

/** One Redfish event record, as it goes in an Event's `Events` array. */
export interface SimEventRecord {
  EventId: string;
  EventTimestamp: string;
  MessageId: string;
  Message: string;
  MessageSeverity: 'OK' | 'Warning' | 'Critical';
  OriginOfCondition: { '@odata.id': string };
}

export interface BmcEventCounters {
  /** Events the BMC meant to send (once each, before duplication), and streams it opened and refused. */
  eventsEmitted: number;
  streamsOpened: number;
  streamsRefused: number;
}

export class BmcEvents {
  readonly streams = new Set<SimEventStream>();
  readonly counters: BmcEventCounters = { eventsEmitted: 0, streamsOpened: 0, streamsRefused: 0 };
  silent = false;
  duplicate = false;
  reorder = false;
  /** Streams beyond this are refused; the profile's cap unless a `push-connection-cap` fault lowered it. */
  cap: number;
  #nextEventId = 1;
  #nextStreamId = 1;
  #heldForReorder: SimEventRecord | undefined;

  constructor(
    readonly spec: SimEventServiceSpec,
    private readonly clock: SimClock,
    private readonly heartbeatMs: number | undefined,
    private readonly dark: () => boolean,
  ) {
    this.cap = spec.maxEventConnections;
  }

  /** The subscriptions the BMC lists: its streams, except those a reset made it forget. */
  listed(): SimEventStream[] {
    return [...this.streams].filter((stream) => stream.mute !== 'orphaned');
  }

  /** Opens a stream on `response`, or returns undefined when the cap is reached (the caller answers 503). */
  open(response: ServerResponse): SimEventStream | undefined {
    if (this.streams.size >= this.cap) {
      this.counters.streamsRefused++;
      return undefined;
    }
    const stream: SimEventStream = { id: `sse-${this.#nextStreamId++}`, response, mute: 'no', heartbeat: undefined };
    this.streams.add(stream);
    this.counters.streamsOpened++;
    response.once('close', () => {
      stream.heartbeat?.cancel();
      this.streams.delete(stream);
    });
    response.writeHead(200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-cache', Connection: 'keep-alive' });
    response.write(': stream open\n\n');
    if (this.heartbeatMs !== undefined) this.#beat(stream, this.heartbeatMs);
    return stream;
  }

  /** The BMC notices a change of its own (`messageId` about `origin`): an event for every stream. */
  emit(messageId: string, message: string, severity: SimEventRecord['MessageSeverity'], origin: string): SimEventRecord {
    this.counters.eventsEmitted++;
    const record: SimEventRecord = {
      EventId: String(this.#nextEventId++),
      EventTimestamp: new Date(this.clock.now()).toISOString(),
      MessageId: messageId,
      Message: message,
      MessageSeverity: severity,
      OriginOfCondition: { '@odata.id': origin },
    };
    if (this.reorder && this.#heldForReorder === undefined) {
      this.#heldForReorder = record;
      return record;
    }
    this.#send(record);
    if (this.#heldForReorder) {
      this.#send(this.#heldForReorder);
      this.#heldForReorder = undefined;
    }
    return record;
  }

  /** A reset: every subscription forgotten, its stream left open and mute. */
  forget(): void {
    for (const stream of this.streams) {
      stream.mute = 'orphaned';
      stream.heartbeat?.cancel();
    }
  }

  /** The streams open now stop sending, for good; they stay listed. */
  stall(): void {
    for (const stream of this.streams) if (stream.mute === 'no') stream.mute = 'stalled';
  }

  close(): void {
    for (const stream of this.streams) {
      stream.heartbeat?.cancel();
      stream.response.destroy();
    }
    this.streams.clear();
  }

  #send(record: SimEventRecord): void {
    const times = this.duplicate ? 2 : 1;
    for (let i = 0; i < times; i += 1) for (const stream of this.streams) this.#write(stream, record);
  }

  #write(stream: SimEventStream, record: SimEventRecord): void {
    if (stream.mute !== 'no' || this.silent || this.dark()) return;
    const event = { '@odata.type': '#Event.v1_7_0.Event', Id: record.EventId, Name: 'Event Array', Events: [record] };
    stream.response.write(`id: ${record.EventId}\ndata: ${JSON.stringify(event)}\n\n`);
  }

  #beat(stream: SimEventStream, everyMs: number): void {
    stream.heartbeat = this.clock.schedule(everyMs, () => {
      if (!this.streams.has(stream) || stream.mute === 'orphaned') return;
      const record: SimEventRecord = {
        EventId: `hb-${this.#nextEventId++}`,
        EventTimestamp: new Date(this.clock.now()).toISOString(),
        MessageId: 'HeartbeatEvent.1.0.RedfishServiceFunctional',
        Message: 'Redfish service is functional.',
        MessageSeverity: 'OK',
        OriginOfCondition: { '@odata.id': '/redfish/v1' },
      };
      this.#write(stream, record);
      this.#beat(stream, everyMs);
    });
  }
}
