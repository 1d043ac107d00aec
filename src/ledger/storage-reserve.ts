import { statfsSync } from 'node:fs';
import { LedgerError } from './ledger-error.js';

/** PostgreSQL's `disk_full` (53100), or the operating system's ENOSPC text in an error it relayed. */
export function isDiskFullError(error: unknown): boolean {
  const candidate = error as { code?: unknown; message?: unknown };
  return candidate?.code === '53100' || (typeof candidate?.message === 'string' && /No space left on device/.test(candidate.message));
}

/**
 * The free space kept on the disk under `path` so PostgreSQL never meets a full disk through our appends: on
 * ENOSPC it cannot write its WAL, aborts every session, and its restart fails until space returns. The answer
 * is cached for 250 ms: a statfs per append would be cheap, one per group is enough.
 */
export class StorageReserve {
  #checkedAt = -Infinity;
  #freeBytes: number | null = null;

  constructor(
    readonly path: string,
    readonly minFreeBytes: number,
  ) {}

  /** Free bytes on the disk now (or as of the last check within 250 ms); null when the disk cannot be asked. */
  freeBytes(fresh = false): number | null {
    const now = performance.now();
    if (fresh || now - this.#checkedAt >= 250) {
      try {
        const stats = statfsSync(this.path);
        this.#freeBytes = Number(stats.bavail) * Number(stats.bsize);
      } catch {
        this.#freeBytes = null;
      }
      this.#checkedAt = now;
    }
    return this.#freeBytes;
  }

  /** The error an append gets while the disk is below the reserve (or, with `fresh`, a refusal in any case). */
  refusal(fresh = false): LedgerError<'LEDGER_STORAGE_FULL'> | undefined {
    const free = this.freeBytes(fresh);
    if (!fresh && (free === null || free >= this.minFreeBytes)) return undefined;
    const mib = (bytes: number) => `${(bytes / 2 ** 20).toFixed(1)} MiB`;
    const left = free === null ? 'an unknown amount' : mib(free);
    return new LedgerError(
      'LEDGER_STORAGE_FULL',
      { location: this.path, freeBytes: free, minFreeBytes: this.minFreeBytes },
      fresh
        ? `append failed, nothing was committed: PostgreSQL could not write to the disk holding ${this.path} (${left} free); free space and retry`
        : `append refused, nothing was committed: the disk holding ${this.path} has ${left} free, below the ${mib(this.minFreeBytes)} kept for PostgreSQL; free space and retry`,
    );
  }
}
