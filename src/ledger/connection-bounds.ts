/**
 * Bounds on every connection the ledger opens, so a lost peer or a stalled transaction cannot hold the log:
 * - connecting gives up after `connectMs`;
 * - TCP keepalive on both ends (the client's socket, and the server's `tcp_keepalives_*` for this session), so a
 *   half-open connection is noticed in about a minute instead of the kernel's two hours;
 * - `idle_in_transaction_session_timeout`: a session that holds a transaction (and with it the append lock) without
 *   sending anything is ended by the server, which releases the lock for the next writer.
 * Statement deadlines are set where the work is known (an append sets its own, see `EventStore`), not for the
 * pool as a whole: migrations and rebuilds run long statements on purpose.
 */
export interface ConnectionBounds {
  connectMs: number;
  idleInTransactionMs: number;
  keepAliveIdleS: number;
}

export const defaultConnectionBounds: ConnectionBounds = { connectMs: 10_000, idleInTransactionMs: 60_000, keepAliveIdleS: 30 };

/** `pg` client or pool settings that apply `bounds` to every connection. */
export function boundedConnection(connectionString: string, bounds: Partial<ConnectionBounds> = {}): {
  connectionString: string;
  connectionTimeoutMillis: number;
  keepAlive: true;
  keepAliveInitialDelayMillis: number;
  idle_in_transaction_session_timeout: number;
  options: string;
} {
  const b = { ...defaultConnectionBounds, ...bounds };
  return {
    connectionString,
    connectionTimeoutMillis: b.connectMs,
    keepAlive: true,
    keepAliveInitialDelayMillis: b.keepAliveIdleS * 1000,
    idle_in_transaction_session_timeout: b.idleInTransactionMs,
    options: `-c tcp_keepalives_idle=${b.keepAliveIdleS} -c tcp_keepalives_interval=10 -c tcp_keepalives_count=3`,
  };
}
