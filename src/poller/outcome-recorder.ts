import { randomFillSync } from 'node:crypto';
import { uuidV7, type PollOutcomeKind, type PollOutcomesBatch } from '../../events/index.js';
import type { EventStore } from '../ledger/index.js';
import type { PollWork } from './poll-target.js';

interface SiteBuffer {
  site: string;
  lease: { shard: string; epoch: number } | undefined;
  windowStart: number;
  nodeIds: string[];
  work: PollWork[];
  outcomes: PollOutcomeKind[];
  latencyMs: number[];
  offsetMs: number[];
}

/** A flushed batch whose content and event id are fixed: retried as it is, so a retry is a replay, never a duplicate. */
interface SealedBatch {
  site: string;
  /** Cluster mode: the lease the outcomes were recorded under (carried by the event's actor, checked by the ledger). */
  lease: { shard: string; epoch: number } | undefined;
  eventId: string;
  data: PollOutcomesBatch;
}

/**
 * Buffers every poll outcome and appends them as one columnar `PollOutcomesRecorded` per site per flush
 * (stream `polls-<site>`). A flush seals what is buffered into batches with their own event ids; a batch that could
 * not be appended (database down, commit outcome unknown) is retried later with the same id and content, in order,
 * so an outage never duplicates outcomes (duplicated misses could mark nodes dark). What waits is bounded by
 * `maxPendingOutcomes`: past it the oldest sealed batches are dropped and counted (`outcomesDropped`), never the
 * process's memory.
 */
export class OutcomeRecorder {
  readonly #buffers = new Map<string, SiteBuffer>();
  readonly #sealed: SealedBatch[] = [];
  #flushing: Promise<void> | null = null;
  bytesAppended = 0;
  outcomesRecorded = 0;
  outcomesDropped = 0;
  /** Outcomes refused by the ledger because their lease epoch was superseded (another process polls the shard now). */
  outcomesFenced = 0;
  readonly counts: Record<PollOutcomeKind, number> = { success: 0, 'not-modified': 0, timeout: 0, refused: 0, 'session-limit': 0, auth: 0, protocol: 0, latched: 0 };

  constructor(
    private readonly store: EventStore,
    private readonly maxBatch = 20_000,
    private readonly maxPendingOutcomes = 1_000_000,
    private readonly log: (message: string, fields?: Record<string, unknown>) => void = () => undefined,
    private readonly onFenced: (shard: string, epoch: number) => void = () => undefined,
  ) {}

  /** Outcomes recorded but not yet in the log (buffered or sealed and waiting for the database). */
  get pendingOutcomes(): number {
    let pending = 0;
    for (const buffer of this.#buffers.values()) pending += buffer.nodeIds.length;
    for (const batch of this.#sealed) pending += batch.data.nodeIds.length;
    return pending;
  }

  record(site: string, nodeId: string, work: PollWork, outcome: PollOutcomeKind, latencyMs: number, at: number, lease?: { shard: string; epoch: number }): void {
    const key = lease ? `${site}\u0000${lease.shard}\u0000${lease.epoch}` : site;
    let buffer = this.#buffers.get(key);
    if (!buffer) {
      buffer = { site, lease, windowStart: at, nodeIds: [], work: [], outcomes: [], latencyMs: [], offsetMs: [] };
      this.#buffers.set(key, buffer);
    }
    buffer.nodeIds.push(nodeId);
    buffer.work.push(work);
    buffer.outcomes.push(outcome);
    buffer.latencyMs.push(Math.max(0, Math.round(latencyMs)));
    buffer.offsetMs.push(Math.max(0, Math.round(at - buffer.windowStart)));
    this.counts[outcome] += 1;
    if (buffer.nodeIds.length >= this.maxBatch) void this.flush();
  }

  /** Appends what is buffered and what waits from earlier flushes; concurrent calls share one flush. */
  flush(): Promise<void> {
    this.#flushing ??= this.#flush().finally(() => {
      this.#flushing = null;
    });
    return this.#flushing;
  }

  #seal(): void {
    for (const buffer of this.#buffers.values()) {
      const { site, lease } = buffer;
      this.#sealed.push({
        site,
        lease,
        eventId: uuidV7(Date.now(), (bytes) => randomFillSync(bytes)),
        data: {
          site,
          windowStart: new Date(buffer.windowStart).toISOString(),
          nodeIds: buffer.nodeIds,
          work: buffer.work,
          outcomes: buffer.outcomes,
          latencyMs: buffer.latencyMs,
          offsetMs: buffer.offsetMs,
        },
      });
    }
    this.#buffers.clear();
    let over = this.pendingOutcomes - this.maxPendingOutcomes;
    while (over > 0 && this.#sealed.length > 0) {
      const dropped = this.#sealed.shift()!;
      over -= dropped.data.nodeIds.length;
      this.outcomesDropped += dropped.data.nodeIds.length;
      this.log('poll outcomes dropped: the ledger has been unreachable past the pending budget', { site: dropped.site, outcomes: dropped.data.nodeIds.length, windowStart: dropped.data.windowStart });
    }
  }

  async #flush(): Promise<void> {
    this.#seal();
    const sites = [...new Set(this.#sealed.map((batch) => batch.site))];
    await Promise.all(
      sites.map(async (site) => {
        // In order per site; the first failure leaves it and everything after it for the next flush.
        for (const batch of this.#sealed.filter((b) => b.site === site)) {
          try {
            await this.store.append(`polls-${site}`, [{ eventId: batch.eventId, type: 'PollOutcomesRecorded', data: batch.data, actor: { kind: 'system', id: 'poller', ...(batch.lease ? { lease: batch.lease } : {}) } }]);
          } catch (error) {
            if (batch.lease && (error as { code?: unknown }).code === 'LEDGER_STALE_EPOCH') {
              // Recorded under a lease another process has since taken: never written, never retried.
              this.#sealed.splice(this.#sealed.indexOf(batch), 1);
              this.outcomesFenced += batch.data.nodeIds.length;
              this.log('poll outcomes refused: their shard was taken over by another process', { site, shard: batch.lease.shard, epoch: batch.lease.epoch, outcomes: batch.data.nodeIds.length });
              this.onFenced(batch.lease.shard, batch.lease.epoch);
              continue;
            }
            this.log('poll outcomes wait for the ledger', { site, outcomes: batch.data.nodeIds.length, error: String(error) });
            return;
          }
          this.#sealed.splice(this.#sealed.indexOf(batch), 1);
          this.bytesAppended += JSON.stringify(batch.data).length;
          this.outcomesRecorded += batch.data.nodeIds.length;
        }
      }),
    );
  }
}
