/**
 * The lease shell every saga engine runs inside: stand by until this process holds the saga's lock, run while it
 * holds it, and stop as soon as it is lost.
 *
 * Guarantees: the body runs only with the lease taken (an advisory lock held for the whole run: `saga-ownership.ts`);
 * when the lease is lost, `onLost` is called once (the engine stops and appends nothing more; `SagaLease.stamp` on
 * its appends fences a zombie at the store); the lease is released and a connection opened here is closed whatever
 * the body does. A new saga engine calls `runWithSagaLease` and writes only its body.
 */
import { SagaOwnership, waitForSagaLease, type SagaLease } from './saga-ownership.js';

export interface SagaLeaseShellOptions<T> {
  /** The saga's lock key (`rolloutLockKey`, `provisionLockKey`, ...). */
  lockKey: string;
  /** The database to lock in, when no `ownership` is shared. */
  connectionString: string;
  /** The process's saga locks (a supervisor shares one among its engines); by default one is opened and closed here. */
  ownership?: SagaOwnership | undefined;
  /** How often to try again while another process holds the saga. */
  retryMs: number;
  signal?: AbortSignal | undefined;
  /** True when the engine was asked to stop: standing by ends. */
  stopping: () => boolean;
  /** Called once when the lease is lost while the body runs (or was lost before it started). */
  onLost: () => void;
  /** The answer when the engine stopped before taking the lease. */
  standingBy: () => T | Promise<T>;
  log?: ((message: string, fields?: Record<string, unknown>) => void) | undefined;
}

/** Runs `body` while this process holds the saga's lease (see the module's guarantees). */
export async function runWithSagaLease<T>(options: SagaLeaseShellOptions<T>, body: (lease: SagaLease) => Promise<T>): Promise<T> {
  const ownership = options.ownership ?? new SagaOwnership(options.connectionString, options.log);
  try {
    const lease = await waitForSagaLease(ownership, options.lockKey, {
      retryMs: options.retryMs,
      signal: options.signal,
      stopping: options.stopping,
      ...(options.log ? { log: options.log } : {}),
    });
    if (!lease) return await options.standingBy();
    const onLost = options.onLost;
    lease.lost.addEventListener('abort', onLost, { once: true });
    if (lease.lost.aborted) {
      lease.lost.removeEventListener('abort', onLost);
      onLost();
    }
    try {
      return await body(lease);
    } finally {
      lease.lost.removeEventListener('abort', onLost);
      await lease.release();
    }
  } finally {
    if (!options.ownership) await ownership.close();
  }
}
