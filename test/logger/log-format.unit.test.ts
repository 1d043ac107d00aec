/**
 * Logs read by people on a terminal, by machines elsewhere; never a credential in either.
 */
import { Writable } from 'node:stream';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { chooseLogFormat, formatLogLine, logRedaction } from '../../src/log-format.js';

describe('log lines', () => {
  it('are formatted for people: time, level, message, then the fields', () => {
    const line = JSON.stringify({ level: 30, time: Date.UTC(2026, 11, 2, 14, 3, 7, 412), pid: 1, hostname: 'h', name: 'fleet-ledger', msg: 'ledger up', backend: 'embedded', bmcs: 2000 });
    expect(formatLogLine(line)).toBe('14:03:07.412 INFO  ledger up  backend=embedded bmcs=2000\n');
  });

  it('quote field values with spaces and show nested fields as JSON', () => {
    const line = JSON.stringify({ level: 40, time: 0, msg: 'slow', reason: 'two words', where: { rack: 'r1' } });
    expect(formatLogLine(line)).toBe('00:00:00.000 WARN  slow  reason="two words" where={"rack":"r1"}\n');
  });

  it('pass a line that is not JSON through unchanged', () => {
    expect(formatLogLine('plain text')).toBe('plain text\n');
  });

  it('are pretty on a terminal and JSON elsewhere, unless FLEET_LEDGER_LOG_FORMAT says otherwise', () => {
    expect(chooseLogFormat(undefined, true)).toBe('pretty');
    expect(chooseLogFormat(undefined, false)).toBe('json');
    expect(chooseLogFormat('json', true)).toBe('json');
    expect(chooseLogFormat('pretty', false)).toBe('pretty');
  });

  it('never carry a credential in either format', () => {
    const lines: string[] = [];
    const sink = new Writable({ write: (chunk, _encoding, done) => (lines.push(String(chunk)), done()) });
    const log = pino({ redact: logRedaction }, sink);
    log.info({ password: 'hunter2', target: { token: 's3cr3t' } }, 'login');
    expect(lines.join('')).not.toMatch(/hunter2|s3cr3t/);
    expect(formatLogLine(lines[0]!)).not.toMatch(/hunter2|s3cr3t/);
    expect(formatLogLine(lines[0]!)).toContain('password=***');
  });
});
