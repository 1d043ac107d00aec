/**
 * The simulator's sense of time. Every duration the simulator models (latency, overload, dark periods, task
 * progress, scenario events, session idle timeouts) is expressed in simulated milliseconds and goes through a
 * `SimClock`, so a test can run a ten-minute scenario in seconds by speeding the clock up.
 */
export interface SimClock {
  /** Simulated time, in milliseconds since the Unix epoch. */
  now(): number;
  /** Calls `callback` after `simulatedMs` of simulated time. The timer never keeps the process alive. */
  schedule(simulatedMs: number, callback: () => void): { cancel(): void };
  /** Resolves after `simulatedMs` of simulated time. */
  sleep(simulatedMs: number): Promise<void>;
}

/**
 * A clock that runs `factor` times faster than the wall clock: one real second is `factor` simulated seconds.
 * With `factor` 1 it is the wall clock.
 */
export function scaledClock(factor = 1, startAt: number = Date.now()): SimClock {
  if (!(factor > 0) || !Number.isFinite(factor)) throw new RangeError(`clock factor must be a positive number, got ${factor}`);
  const realStart = performance.now();
  const realMs = (simulatedMs: number): number => Math.max(0, simulatedMs / factor);
  const schedule = (simulatedMs: number, callback: () => void): { cancel(): void } => {
    const timer = setTimeout(callback, realMs(simulatedMs));
    timer.unref();
    return { cancel: () => clearTimeout(timer) };
  };
  return {
    now: () => startAt + (performance.now() - realStart) * factor,
    schedule,
    sleep: (simulatedMs) =>
      simulatedMs <= 0 ? Promise.resolve() : new Promise<void>((resolve) => void schedule(simulatedMs, resolve)),
  };
}
