/**
 * What is due, in lanes: liveness checks (never-contacted targets first, then by due time, most overdue first), and
 * heavy reads apart (a slow firmware read never delays a liveness check), first reads by the kind of BMC whose first
 * reads take longest. An entry carries the target's sequence number: one superseded by a later enqueue is skipped.
 */
import { DueQueue } from './due-queue.js';
import { FirstReadQueues } from './first-read-queues.js';
import type { PollTarget } from './poll-target.js';
import type { TargetState } from './target-state.js';

export class DispatchQueues {
  readonly #fresh = new DueQueue();
  readonly #queue = new DueQueue();
  readonly #heavy = new DueQueue();
  /** First reads, one queue per kind of BMC, the kind whose first reads take longest first (`FirstReadQueues`). */
  readonly firstReads = new FirstReadQueues();

  constructor(
    private readonly states: ReadonlyMap<string, TargetState>,
    /** Cluster mode: the target's shard lease allows a request now. */
    private readonly leaseAllows: (state: TargetState) => boolean,
    private readonly sessionLimit: (target: PollTarget) => number,
  ) {}

  enqueue(state: TargetState): void {
    state.seq += 1;
    (state.neverContacted ? this.#fresh : this.#queue).push(state.target.nodeId, state.due.liveness, state.seq);
    // A failing, latched or fenced BMC gets no heavy work at all until it answers again.
    if (state.consecutiveFailures === 0 && !state.latch && !state.neverContacted && !state.credential?.fenced) {
      const due = Math.min(state.due.health, state.due.inventory, state.due.firmware);
      if (state.readOnce.size > 0) this.#heavy.push(state.target.nodeId, due, state.seq);
      else this.firstReads.push(state.model ?? '', state.target.nodeId, due, state.seq);
    }
  }

  /** The next target whose liveness check is due at `now`, if any. */
  takeCheck(now: number): TargetState | undefined {
    for (;;) {
      const fresh = this.#fresh.peek();
      const regular = this.#queue.peek();
      const source = fresh && fresh.due <= now ? this.#fresh : regular && regular.due <= now ? this.#queue : null;
      if (!source) return undefined;
      const entry = source.pop()!;
      const state = this.states.get(entry.nodeId);
      if (!state || state.seq !== entry.seq || state.checking) continue;
      if (!this.leaseAllows(state)) {
        source.push(entry.nodeId, now + 1000, entry.seq); // the lease is being renewed or handed over: not now
        continue;
      }
      // Where the BMC has room for one session only, the check waits for the read (which re-enqueues it).
      if (state.reading && this.sessionLimit(state.target) < 2) continue;
      return state;
    }
  }

  /** The next target whose heavy read is due at `now`, if any. */
  takeRead(now: number): TargetState | undefined {
    for (;;) {
      const source = this.#readSource(now);
      const entry = source?.pop();
      if (!source || !entry) return undefined;
      const state = this.states.get(entry.nodeId);
      if (!state || state.seq !== entry.seq || state.reading || state.consecutiveFailures > 0 || state.latch || state.credential?.fenced) continue;
      if (!this.leaseAllows(state)) {
        source.push(entry.nodeId, now + 1000, entry.seq);
        continue;
      }
      // A heavy read holds one session; it may overlap a liveness check only where the BMC has room for two.
      if (state.checking && this.sessionLimit(state.target) < 2) continue;
      return state;
    }
  }

  /** The queue the next heavy read comes from: a first read due, of the kind expected to take longest; else the rest. */
  #readSource(now: number): DueQueue | undefined {
    const best = this.firstReads.due(now);
    if (best) return best;
    const head = this.#heavy.peek();
    return head && head.due <= now ? this.#heavy : undefined;
  }
}
