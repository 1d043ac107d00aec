/**
 * The poller's timers, injected beside its clock (`PollerOptions.clock`) so that tests and replays drive its time:
 * the dispatch tick, the flush tick, the retry back-off, a visit's outer bound and the stop's grace all go through
 * them. In production they are the process's own timers (`systemTimers`).
 */
export interface TimerHandle {
  unref?(): unknown;
}

export interface PollTimers {
  setTimeout(callback: () => void, ms: number): TimerHandle;
  clearTimeout(handle: TimerHandle | undefined): void;
  setInterval(callback: () => void, ms: number): TimerHandle;
  clearInterval(handle: TimerHandle | undefined): void;
}

/** Node's handles are the only ones handed to `systemTimers`, so giving them back to Node is sound. */
const nodeHandle = (handle: TimerHandle | undefined): NodeJS.Timeout | undefined => handle as NodeJS.Timeout | undefined;

export const systemTimers: PollTimers = {
  setTimeout: (callback, ms) => setTimeout(callback, ms),
  clearTimeout: (handle) => clearTimeout(nodeHandle(handle)),
  setInterval: (callback, ms) => setInterval(callback, ms),
  clearInterval: (handle) => clearInterval(nodeHandle(handle)),
};

/** Resolves after `ms` on the given timers. */
export function delay(timers: PollTimers, ms: number): Promise<void> {
  return new Promise((resolve) => void timers.setTimeout(resolve, ms));
}
