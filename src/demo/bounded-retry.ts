import { isLedgerError } from '../ledger/index.js';
import { DemoSetupError } from './demo-setup-error.js';

/** How often and how patiently the demo's setup asks a busy database again. */
export interface RetryPolicy {
  /** Delays before the 2nd, 3rd, ... attempt; their count + 1 is the number of attempts. */
  delaysMs: readonly number[];
}

/**
 * About 30 s of waits in all, on top of the store's own 10 s connect bound per attempt: long enough for a
 * database that is slow to hand out connections on a loaded machine, short enough that a database that is really
 * gone is reported while the person who started the demo is still watching.
 */
export const defaultRetryPolicy: RetryPolicy = { delaysMs: [500, 1_000, 2_000, 4_000, 8_000, 15_000] };

/**
 * Runs `operation`, again after each delay of `policy` while it fails with an error the ledger calls retryable
 * (unreachable, timed out, commit unknown: every write of the setup carries a deterministic event id, so a repeat
 * is an idempotent replay). A terminal error, or the last retryable one, ends in a `DemoSetupError` naming the
 * operation, the attempts and the cause.
 */
export async function withBoundedRetries<T>(operation: string, run: () => Promise<T>, policy: RetryPolicy = defaultRetryPolicy): Promise<T> {
  const attempts = policy.delaysMs.length + 1;
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await run();
    } catch (error) {
      const cause = error instanceof Error ? error.message : String(error);
      if (!isLedgerError(error) || !error.retryable) {
        throw new DemoSetupError('DEMO_REGISTRATION_REFUSED', { operation, cause }, `${operation} was refused: ${cause}`);
      }
      if (attempt >= attempts) {
        throw new DemoSetupError(
          'DEMO_DATABASE_UNAVAILABLE',
          { operation, attempts, cause },
          `${operation} failed ${attempts} times: the database did not answer in time (${cause}). Is the machine overloaded or PostgreSQL stopped? Try again, with fewer --bmcs on a busy machine`,
        );
      }
      await new Promise((resolve) => setTimeout(resolve, policy.delaysMs[attempt - 1]));
    }
  }
}

/** Runs `work` over `items`, at most `limit` at a time: never more waiting requests than the store's pool can serve. */
export async function inBoundedParallel<T>(items: readonly T[], limit: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const lane = async (): Promise<void> => {
    while (next < items.length) {
      const item = items[next]!;
      next += 1;
      await work(item);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, lane));
}
