import pino from 'pino';
import { chooseLogFormat, formatLogLine, logRedaction } from './log-format.js';

/**
 * The process logger, to stderr, level from FLEET_LEDGER_LOG_LEVEL (default info). On a terminal the lines are
 * formatted for people; otherwise (and with FLEET_LEDGER_LOG_FORMAT=json) they are JSON lines for log shippers.
 * Redaction happens before either: no credential reaches a line in any format.
 */
const format = chooseLogFormat(process.env.FLEET_LEDGER_LOG_FORMAT, process.stderr.isTTY === true);
const json = pino.destination(2);
const destination =
  format === 'json' ? json : { write: (line: string): void => void process.stderr.write(formatLogLine(line, { color: process.stderr.isTTY === true })) };

export const logger = pino(
  {
    name: 'fleet-ledger',
    level: process.env.FLEET_LEDGER_LOG_LEVEL ?? 'info',
    redact: logRedaction,
  },
  destination,
);
