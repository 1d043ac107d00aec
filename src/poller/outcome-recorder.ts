import type { PollOutcomeKind, PollOutcomesBatch } from '../../events/index.js';
import type { EventStore } from '../ledger/index.js';
import type { PollWork } from './poll-target.js';

interface SiteBuffer {
  windowStart: number;
  nodeIds: string[];
  work: PollWork[];
  outcomes: PollOutcomeKind[];
  latencyMs: number[];
  offsetMs: number[];
}

/**
 * Buffers every poll outcome and appends them as one columnar `PollOutcomesRecorded` per site per flush
 * (stream `polls-<site>`). A failed flush keeps its outcomes and tries again on the next one.
 */
export class OutcomeRecorder {
  readonly #buffers = new Map<string, SiteBuffer>();
  #flushing: Promise<void> | null = null;
  bytesAppended = 0;
  outcomesRecorded = 0;
  readonly counts: Record<PollOutcomeKind, number> = { success: 0, 'not-modified': 0, timeout: 0, refused: 0, 'session-limit': 0, auth: 0, protocol: 0, latched: 0 };

  constructor(
    private readonly store: EventStore,
    private readonly maxBatch = 20_000,
  ) {}

  record(site: string, nodeId: string, work: PollWork, outcome: PollOutcomeKind, latencyMs: number, at: number): void {
    let buffer = this.#buffers.get(site);
    if (!buffer) {
      buffer = { windowStart: at, nodeIds: [], work: [], outcomes: [], latencyMs: [], offsetMs: [] };
      this.#buffers.set(site, buffer);
    }
    buffer.nodeIds.push(nodeId);
    buffer.work.push(work);
    buffer.outcomes.push(outcome);
    buffer.latencyMs.push(Math.max(0, Math.round(latencyMs)));
    buffer.offsetMs.push(Math.max(0, Math.round(at - buffer.windowStart)));
    this.counts[outcome] += 1;
    if (buffer.nodeIds.length >= this.maxBatch) void this.flush();
  }

  /** Appends what is buffered; concurrent calls share one flush. */
  flush(): Promise<void> {
    this.#flushing ??= this.#flush().finally(() => {
      this.#flushing = null;
    });
    return this.#flushing;
  }

  async #flush(): Promise<void> {
    const buffers = [...this.#buffers.entries()];
    this.#buffers.clear();
    await Promise.all(
      buffers.map(async ([site, buffer]) => {
        const data: PollOutcomesBatch = {
          site,
          windowStart: new Date(buffer.windowStart).toISOString(),
          nodeIds: buffer.nodeIds,
          work: buffer.work,
          outcomes: buffer.outcomes,
          latencyMs: buffer.latencyMs,
          offsetMs: buffer.offsetMs,
        };
        try {
          await this.store.append(`polls-${site}`, [{ type: 'PollOutcomesRecorded', data, actor: { kind: 'system', id: 'poller' } }]);
          this.bytesAppended += JSON.stringify(data).length;
          this.outcomesRecorded += buffer.nodeIds.length;
        } catch {
          // Keep them, ahead of anything recorded since: they go out with the next flush.
          const current = this.#buffers.get(site);
          if (current) {
            const shift = current.windowStart - buffer.windowStart;
            buffer.nodeIds.push(...current.nodeIds);
            buffer.work.push(...current.work);
            buffer.outcomes.push(...current.outcomes);
            buffer.latencyMs.push(...current.latencyMs);
            buffer.offsetMs.push(...current.offsetMs.map((offset) => offset + shift));
          }
          this.#buffers.set(site, buffer);
        }
      }),
    );
  }
}
