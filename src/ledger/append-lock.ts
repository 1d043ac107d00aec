/**
 * What every append holds and announces: the log-wide advisory lock (transaction-scoped), under which an append takes
 * its global positions, so commit order is log order; and the channel its NOTIFY goes on, which wakes followers.
 */

/** The key of the transaction-scoped advisory lock every append takes: one writer at a time, log-wide. */
export const APPEND_LOCK_KEY = 0x0f1ee7_1ed6;
export const APPENDED_CHANNEL = 'fleet_ledger_appended';
