import pino from 'pino';

/** The process logger: JSON lines to stderr, level from FLEET_LEDGER_LOG_LEVEL (default info). */
export const logger = pino(
  {
    name: 'fleet-ledger',
    level: process.env.FLEET_LEDGER_LOG_LEVEL ?? 'info',
    // Never log a credential, whatever object carries it.
    redact: { paths: ['password', '*.password', 'token', '*.token', 'authorization', '*.authorization', 'connectionString'], censor: '***' },
  },
  pino.destination(2),
);
