import { isStoreUnavailable } from './store-outage.js';

/**
 * A failure of the database rather than of the projection: connection lost or refused, server shutting
 * down or starting (SQLSTATE classes 08, 57P, 53), or the store reporting itself unavailable or its disk full.
 */
export function isTransientDatabaseError(error: unknown): boolean {
  const candidate = error as { code?: unknown; message?: unknown; details?: { cause?: unknown } };
  if (candidate?.code === 'LEDGER_STORE_UNAVAILABLE' || candidate?.code === 'LEDGER_STORAGE_FULL') return true;
  if (typeof candidate?.code === 'string' && /^(08|57P|53)/.test(candidate.code)) return true;
  if (typeof candidate?.code === 'string' && ['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT'].includes(candidate.code)) return true;
  // A connection lost or a server restarting (store-outage.ts names the signs) means "wait", never the projection's fault.
  return isStoreUnavailable(error);
}
