/**
 * The ledger's timestamptz parser must give the very `Date` pg's own parser gives, for every form PostgreSQL sends:
 * checked against pg's parser on generated text, and against real servers' answers under time zones whose offsets
 * have minutes and (before 1900) seconds.
 */
import fc from 'fast-check';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { fastTimestamptzParser, pgTimestamptzParser } from '../../src/ledger/index.js';
import { backends } from '../support/backends.js';

const pgParser = pgTimestamptzParser;
const parse = fastTimestamptzParser(pgParser);
const pad = (value: number, width: number): string => String(value).padStart(width, '0');

/** A timestamptz as PostgreSQL writes it in DateStyle ISO. */
const pgText = fc
  .record({
    year: fc.integer({ min: 1, max: 9999 }),
    month: fc.integer({ min: 1, max: 12 }),
    day: fc.integer({ min: 1, max: 28 }),
    hour: fc.integer({ min: 0, max: 23 }),
    minute: fc.integer({ min: 0, max: 59 }),
    second: fc.integer({ min: 0, max: 59 }),
    fraction: fc.option(fc.stringMatching(/^[0-9]{1,6}$/), { nil: undefined }),
    sign: fc.constantFrom('+', '-'),
    offsetHours: fc.integer({ min: 0, max: 15 }),
    offsetMinutes: fc.option(fc.integer({ min: 0, max: 59 }), { nil: undefined }),
    offsetSeconds: fc.option(fc.integer({ min: 0, max: 59 }), { nil: undefined }),
    bc: fc.boolean(),
  })
  .map((t) => {
    const offset = `${t.sign}${pad(t.offsetHours, 2)}${t.offsetMinutes === undefined ? '' : `:${pad(t.offsetMinutes, 2)}${t.offsetSeconds === undefined ? '' : `:${pad(t.offsetSeconds, 2)}`}`}`;
    return `${pad(t.year, 4)}-${pad(t.month, 2)}-${pad(t.day, 2)} ${pad(t.hour, 2)}:${pad(t.minute, 2)}:${pad(t.second, 2)}${t.fraction === undefined ? '' : `.${t.fraction}`}${offset}${t.bc ? ' BC' : ''}`;
  });

const same = (a: unknown, b: unknown): boolean => (a instanceof Date && b instanceof Date ? Object.is(a.getTime(), b.getTime()) : Object.is(a, b));

describe('timestamptz parser', () => {
  it('gives the same Date as pg\'s parser for every timestamptz PostgreSQL writes in DateStyle ISO', () => {
    fc.assert(
      fc.property(pgText, (text) => {
        const ours = parse(text);
        const theirs = pgParser(text);
        expect(same(ours, theirs), `${text}: ${String(ours)} against ${String(theirs)}`).toBe(true);
      }),
      { numRuns: 20_000 },
    );
  });

  it('truncates fractions to milliseconds exactly as pg\'s parser does, for every three-digit fraction and its extensions', () => {
    for (let ms = 0; ms < 1000; ms += 1) {
      for (const tail of ['', '0', '999', '5', '000']) {
        const text = `2026-12-01 03:00:00.${pad(ms, 3)}${tail}+00`;
        expect(same(parse(text), pgParser(text)), text).toBe(true);
      }
    }
  });

  it('hands what is not the common form to pg\'s parser: infinity, BC, other DateStyles, malformed text', () => {
    for (const text of ['infinity', '-infinity', '0044-03-15 12:00:00+00 BC', '2026-12-01T03:00:00Z', '2026-12-01', 'Tue Dec 01 03:00:00 2026 UTC', '2026-12-01 03:00:00+0', '2026-12-01 03:00:00.+00', '2026-12-01 03:00:00.1234567+00', '2026-12-01 03:00:00+00:5']) {
      expect(same(parse(text), pgParser(text)), text).toBe(true);
    }
  });

  it('the ledger installs it for the whole process: every pg connection, the as-of engine\'s among them, reads timestamps with it', () => {
    const installed = pg.types.getTypeParser(pg.types.builtins.TIMESTAMPTZ);
    expect(installed).not.toBe(pgTimestamptzParser);
    // The common form read by the fast path; `infinity` handed to pg's parser.
    expect((installed('2026-12-01 03:00:00.123456+05:30') as Date).toISOString()).toBe('2026-11-30T21:30:00.123Z');
    expect(installed('infinity')).toBe(Number.POSITIVE_INFINITY);
  });

  for (const backend of backends()) {
    it.skipIf(!backend.adminUrl)(`reads ${backend.name} PostgreSQL's answers as the instants they are, whatever the session's time zone${backend.unavailable ? ` (skipped: ${backend.unavailable})` : ''}`, async () => {
      const client = new pg.Client({ connectionString: backend.adminUrl!, types: { getTypeParser: (oid: number, format?: string) => (oid === 1184 ? parse : pg.types.getTypeParser(oid, format as 'text')) } as never });
      await client.connect();
      try {
        const instants = ['2026-12-01T03:00:00.123Z', '1999-12-31T23:59:59.999Z', '1850-06-01T12:00:00.5Z', '2026-03-29T01:30:00Z', '1000-01-01T00:00:00Z'];
        for (const zone of ['UTC', 'Asia/Kolkata', 'America/St_Johns', 'Europe/Amsterdam', 'Pacific/Chatham', 'America/Los_Angeles']) {
          await client.query(`SET TIME ZONE '${zone}'`);
          const rows = await client.query<{ at: Date; text: string }>('SELECT t::timestamptz AS at, t::timestamptz::text AS text FROM unnest($1::text[]) AS t', [instants]);
          rows.rows.forEach((row, i) => expect(row.at.toISOString(), `${zone}: ${row.text}`).toBe(new Date(instants[i]!).toISOString()));
        }
      } finally {
        await client.end();
      }
    });
  }
});
