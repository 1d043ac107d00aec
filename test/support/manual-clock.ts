import type { PollTimers, TimerHandle } from '../../src/poller/index.js';

interface Pending {
  at: number;
  callback: () => void;
  every: number | null;
  order: number;
}

/** Lets the real event loop run once: promise chains settle and I/O already done (a store's append) is delivered. */
const realTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/**
 * A clock a test moves by hand, with the timers that go with it (the poller's `clock` and `timers`). Virtual time
 * passes only in `advance`, in steps, firing due timers in order and giving the real event loop a turn after each
 * step, so a poller's minute runs in milliseconds while its real I/O (the ledger) still completes.
 */
export class ManualClock implements PollTimers {
  #now: number;
  #order = 0;
  readonly #pending = new Map<TimerHandle, Pending>();

  constructor(start = Date.parse('2026-01-01T00:00:00Z')) {
    this.#now = start;
  }

  readonly now = (): number => this.#now;

  setTimeout(callback: () => void, ms: number): TimerHandle {
    return this.#add(callback, ms, null);
  }

  setInterval(callback: () => void, ms: number): TimerHandle {
    return this.#add(callback, ms, Math.max(1, ms));
  }

  clearTimeout(handle: TimerHandle | undefined): void {
    if (handle) this.#pending.delete(handle);
  }

  clearInterval(handle: TimerHandle | undefined): void {
    if (handle) this.#pending.delete(handle);
  }

  /** Resolves after `ms` of this clock's time. */
  sleep(ms: number): Promise<void> {
    return new Promise((resolve) => void this.setTimeout(resolve, ms));
  }

  /** Moves time forward by `ms`, at most `stepMs` at a time, firing what falls due. */
  async advance(ms: number, stepMs = 10): Promise<void> {
    const end = this.#now + ms;
    while (this.#now < end) {
      const next = this.#nextDue();
      this.#now = Math.min(end, this.#now + stepMs, next ?? Number.POSITIVE_INFINITY);
      await this.#fireDue();
    }
    await this.#fireDue();
  }

  /**
   * Moves time forward until `work` settles (a poller's `stop`, which waits for visits that run on this clock), at
   * most `limitMs` of clock time; its value, or its error.
   */
  async settle<T>(work: Promise<T>, limitMs = 60_000, stepMs = 10): Promise<T> {
    let settled = false;
    void work.then(
      () => (settled = true),
      () => (settled = true),
    );
    for (let spent = 0; !settled && spent < limitMs; spent += stepMs) await this.advance(stepMs, stepMs);
    if (!settled) throw new Error(`not settled within ${limitMs} ms of clock time`);
    return work;
  }

  #add(callback: () => void, ms: number, every: number | null): TimerHandle {
    const handle: TimerHandle = { unref: () => handle };
    this.#pending.set(handle, { at: this.#now + Math.max(0, ms), callback, every, order: (this.#order += 1) });
    return handle;
  }

  #nextDue(): number | null {
    let next: number | null = null;
    for (const timer of this.#pending.values()) if (next === null || timer.at < next) next = timer.at;
    return next;
  }

  async #fireDue(): Promise<void> {
    for (;;) {
      const due = [...this.#pending.entries()].filter(([, timer]) => timer.at <= this.#now).sort(([, a], [, b]) => a.at - b.at || a.order - b.order);
      if (due.length === 0) break;
      for (const [handle, timer] of due) {
        if (!this.#pending.has(handle)) continue; // cleared by a callback fired before it
        if (timer.every === null) this.#pending.delete(handle);
        else this.#pending.set(handle, { ...timer, at: timer.at + timer.every, order: (this.#order += 1) });
        timer.callback();
      }
      await realTurn();
    }
    await realTurn();
  }
}
