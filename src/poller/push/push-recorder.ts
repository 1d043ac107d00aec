/**
 * Writes what push learns to the node's stream: each event once (`RedfishEventObserved`, origin `pushed`), each
 * stream opened, each gap. Appends of one node are chained, so they are stored in the order they arrived; an append
 * that fails is logged and counted, and the stream's audit still catches what it missed (the BMC is read again).
 */
import { unstorableInstant } from '../../../events/index.js';
import { storableValue, type PushedEventRecord } from '../../drivers/index.js';
import type { EventStore } from '../../ledger/index.js';
import type { PushGap } from './push-node.js';

export interface PushRecorderCounters {
  eventsRecorded: number;
  appendFailures: number;
}

export class PushRecorder {
  readonly counters: PushRecorderCounters = { eventsRecorded: 0, appendFailures: 0 };
  readonly #chains = new Map<string, Promise<void>>();

  constructor(
    private readonly store: EventStore,
    private readonly log?: (message: string, fields?: Record<string, unknown>) => void,
  ) {}

  /** Records a pushed event; `recorded` is called with the time it was stored. */
  event(nodeId: string, record: PushedEventRecord, receivedAt: number, recorded?: (at: number) => void): void {
    // A BMC's clock can be anywhere: a timestamp the ledger cannot store is left out, never the event.
    const parsed = record.timestamp !== undefined ? Date.parse(record.timestamp) : Number.NaN;
    const timestamp = !Number.isNaN(parsed) && unstorableInstant(new Date(parsed).toISOString()) === null ? new Date(parsed).toISOString() : undefined;
    const data = {
      nodeId,
      origin: 'pushed' as const,
      eventId: record.eventId.slice(0, 256),
      messageId: record.messageId.slice(0, 256),
      ...(record.message !== undefined ? { message: record.message.slice(0, 4096) } : {}),
      ...(record.severity !== undefined ? { severity: record.severity.slice(0, 64) } : {}),
      ...(record.origin !== undefined ? { resource: record.origin.slice(0, 1024) } : {}),
      ...(timestamp ? { eventTimestamp: timestamp } : {}),
      receivedAt: new Date(receivedAt).toISOString(),
    };
    this.#append(nodeId, 'RedfishEventObserved', data, timestamp ? new Date(timestamp) : new Date(receivedAt), () => {
      this.counters.eventsRecorded += 1;
      recorded?.(Date.now());
    });
  }

  opened(nodeId: string, uri: string, heartbeatMs: number | undefined, at: number): void {
    this.#append(nodeId, 'PushStreamOpened', { nodeId, uri: uri.slice(0, 1024), heartbeatMs: heartbeatMs === undefined ? null : Math.max(1, Math.round(heartbeatMs)), at: new Date(at).toISOString() }, new Date(at));
  }

  gap(nodeId: string, gap: PushGap, detectedAt: number): void {
    this.#append(nodeId, 'PushGapOpened', { nodeId, kind: gap.kind, since: new Date(gap.since).toISOString(), detectedAt: new Date(detectedAt).toISOString(), detail: gap.detail.slice(0, 1024) }, new Date(detectedAt));
  }

  /** Resolves when everything handed over so far is stored (or failed). */
  async settled(): Promise<void> {
    await Promise.all([...this.#chains.values()]);
  }

  #append(nodeId: string, type: string, data: unknown, observedAt: Date, stored?: () => void): void {
    const previous = this.#chains.get(nodeId) ?? Promise.resolve();
    const next = previous.then(async () => {
      try {
        await this.store.append(`node-${nodeId}`, [{ type, data: storableValue(data), observedAt, actor: { kind: 'driver' as const, id: `redfish-push:${nodeId}` } }]);
        stored?.();
      } catch (error) {
        this.counters.appendFailures += 1;
        this.log?.('could not record a push event', { nodeId, type, error: String(error) });
      }
    });
    this.#chains.set(nodeId, next);
    void next.finally(() => {
      if (this.#chains.get(nodeId) === next) this.#chains.delete(nodeId);
    });
  }
}
