import { DueQueue } from './due-queue.js';

/**
 * First reads (nothing read yet), one queue per kind of BMC (`TargetState.model`; '' when unknown). Taken before
 * later reads, and the kind whose first reads took longest on average first (a kind not read yet counts as
 * slowest): while first reads wait for slots, as when a fleet is brought up, the minutes-long reads start early and
 * the quick ones fill in after, instead of a slow model's last reads starting last and finishing long after
 * everything else (longest processing time first).
 */
export class FirstReadQueues {
  readonly #queues = new Map<string, DueQueue>();
  /** How long the first reads that succeeded took, by kind of BMC: their sum (ms) and count. */
  readonly #times = new Map<string, { totalMs: number; count: number }>();

  push(model: string, nodeId: string, due: number, seq: number): void {
    let queue = this.#queues.get(model);
    if (!queue) this.#queues.set(model, (queue = new DueQueue()));
    queue.push(nodeId, due, seq);
  }

  /** A first read of this kind of BMC succeeded in `latencyMs`. */
  noteRead(model: string, latencyMs: number): void {
    const times = this.#times.get(model) ?? { totalMs: 0, count: 0 };
    this.#times.set(model, { totalMs: times.totalMs + latencyMs, count: times.count + 1 });
  }

  /** The queue of the first read due now of the kind expected to take longest, if any is due. */
  due(now: number): DueQueue | undefined {
    let best: DueQueue | undefined;
    let bestMs = Number.NEGATIVE_INFINITY;
    for (const [model, queue] of this.#queues) {
      const head = queue.peek();
      if (!head || head.due > now) continue;
      const times = this.#times.get(model);
      const expectedMs = times ? times.totalMs / times.count : Number.POSITIVE_INFINITY;
      if (expectedMs > bestMs || (expectedMs === bestMs && head.due < best!.peek()!.due)) {
        best = queue;
        bestMs = expectedMs;
      }
    }
    return best;
  }
}
