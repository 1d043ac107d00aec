/**
 * A faster reader of PostgreSQL timestamps for the as-of engine's own connections. Materializing liveness loads every
 * node's row (six timestamp columns) and the alarm and drift questions return tens of thousands of rows; `pg`'s
 * parser (`postgres-date`, three regular expressions a value) took about a third of the Node time of a question at
 * 25,000 nodes. The parser is the ledger's (`src/ledger/timestamp-parser.ts`, which the event store also installs for
 * the whole process); these connections name it themselves, so they read the same whichever module loads first.
 */
import pg from 'pg';
import { parseIsoTimestamptz } from '../../src/ledger/index.js';

export { parseIsoTimestamptz };

const TIMESTAMPTZ = 1184;

/** Type parsers for a `pg` client: timestamps with a zone read by `parseIsoTimestamptz`, everything else as `pg` reads it. */
export const asOfTypes = {
  getTypeParser(oid: number, format?: 'text' | 'binary'): (value: string) => unknown {
    const standard = pg.types.getTypeParser(oid, format as 'text');
    if (oid !== TIMESTAMPTZ || format === 'binary') return standard as (value: string) => unknown;
    return (value: string) => parseIsoTimestamptz(value) ?? (standard as (value: string) => unknown)(value);
  },
};
