/**
 * The append path writes its columns' array parameters itself (`arrayParameter`) instead of through pg's per-element
 * escaping. PostgreSQL must read back exactly the elements given, whatever they hold: quotes, backslashes, braces,
 * commas, spaces, the word NULL as text, empty strings, non-ASCII; and null as SQL NULL.
 */
import fc from 'fast-check';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { arrayParameter } from '../../src/ledger/sql-literal.js';
import { backends } from '../support/backends.js';

const awkwardText = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 20 }).filter((text) => !text.includes('\u0000')),
  fc.constantFrom('', 'NULL', 'null', '"', '\\', '\\"', '{', '}', ',', ' padded ', 'a,b', '{"json":"text"}', 'x\ny', '\t'),
);

describe('array parameters written by the append path', () => {
  for (const backend of backends()) {
    it.skipIf(!backend.adminUrl)(`${backend.name} PostgreSQL reads back every text and number element as given, and null as NULL${backend.unavailable ? ` (skipped: ${backend.unavailable})` : ''}`, async () => {
      const client = new pg.Client({ connectionString: backend.adminUrl! });
      await client.connect();
      try {
        await fc.assert(
          fc.asyncProperty(fc.array(fc.option(awkwardText, { nil: null }), { maxLength: 12 }), fc.array(fc.integer({ min: -(2 ** 52), max: 2 ** 52 }), { maxLength: 12 }), async (texts, numbers) => {
            const { rows } = await client.query<{ texts: Array<string | null>; numbers: string[] }>('SELECT $1::text[] AS texts, $2::bigint[] AS numbers', [arrayParameter(texts), arrayParameter(numbers)]);
            expect(rows[0]!.texts).toEqual(texts);
            expect(rows[0]!.numbers.map(Number)).toEqual(numbers);
          }),
          { numRuns: 300 },
        );
      } finally {
        await client.end();
      }
    });
  }
});
