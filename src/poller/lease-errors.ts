/** An error of a request the lease guard refused (the shard's lease not held). */
export function isFenced(error: unknown): boolean {
  return (error as { code?: unknown } | undefined)?.code === 'DRIVER_FENCED';
}

/** An append the ledger refused for a superseded lease epoch. */
export function isStaleEpoch(error: unknown): boolean {
  return (error as { code?: unknown } | undefined)?.code === 'LEDGER_STALE_EPOCH';
}
