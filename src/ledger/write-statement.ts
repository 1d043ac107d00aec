/**
 * The statement that writes one group commit (rows, stream versions, the head and the NOTIFY) and the columns it is
 * bound to. One statement whatever the batch's size, so it is parsed and planned once per connection.
 */
import { APPENDED_CHANNEL } from './append-lock.js';
import { arrayParameter } from './sql-literal.js';

/** The name of the group commit's write: parsed and planned once per connection, not at every commit. */
const WRITE_STATEMENT = 'fleet-ledger-append-write';

/** The columns of one group commit's new rows, as the arrays its one INSERT unnests. */
export interface WriteColumns {
  position: number[];
  eventId: string[];
  stream: string[];
  version: number[];
  type: string[];
  schemaVersion: number[];
  observedAt: Array<string | null>;
  actor: string[];
  correlationId: Array<string | null>;
  causationId: Array<string | null>;
  data: string[];
  /** The chain: the head's hash, then each row's, 32 bytes each (row k's prev_hash is hash k-1). */
  hashes: Buffer[];
}

export function emptyColumns(): WriteColumns {
  return { position: [], eventId: [], stream: [], version: [], type: [], schemaVersion: [], observedAt: [], actor: [], correlationId: [], causationId: [], data: [], hashes: [] };
}

/**
 * One parameterised statement that writes a group commit: the rows (no SQL text grows with the batch, and nothing in it
 * is escaped by hand), the streams' versions, the head, and the NOTIFY. Scalar columns are arrays zipped by
 * `ROWS FROM`; `data` and `actor`, already canonical JSON, go as one JSON array each (joined, not escaped element by
 * element as a text array would be); the hashes as one binary parameter of 32 bytes per row after the head's.
 * Data-modifying CTEs all run, to completion, whether or not the final SELECT reads them.
 */
export function writeStatement(
  columns: WriteColumns,
  touched: Map<string, { version: number; lastPosition: number }>,
  position: number,
  headHash: Buffer,
  recordedAt: Date,
  maxJsonArrayChars: number,
  guard: WriteGuard | null = null,
): { name: string; text: string; values: unknown[] } {
  const streams = [...touched.entries()];
  // PostgreSQL refuses a jsonb array past 256 MB, and a jsonb can be several times its text (numbers, headers): a
  // batch whose JSON is larger sends one text per row instead, as a text array.
  let chars = 0;
  for (const text of columns.data) chars += text.length;
  for (const text of columns.actor) chars += text.length;
  const asArrays = chars <= maxJsonArrayChars;
  const elements = (parameter: number): string => (asArrays ? `jsonb_array_elements($${parameter}::jsonb)` : `unnest($${parameter}::text[])`);
  // A guarded write (one round trip, see `speculation.ts`) writes only if the head and the clock are as the batch
  // was assembled against; every part is conditioned on the guard, evaluated once under the lock. (The streams' versions
  // need no guard: the unique index on (stream, stream_version) refuses a row whose version is taken.)
  const onlyIf = guard ? ' WHERE (SELECT ok FROM guard)' : '';
  return {
    name: `${WRITE_STATEMENT}${asArrays ? '' : '-texts'}${guard ? '-guarded' : ''}`,
    text: `WITH ${guard ? `guard AS (
        SELECT (SELECT position = $20::bigint AND hash = substring($13::bytea FROM 1 FOR 32) FROM ledger_head)
           AND abs(extract(epoch FROM clock_timestamp() - $7::timestamptz)) <= $21::float8 AS ok
      ), ` : ''}written AS (
        INSERT INTO ledger_events (position, event_id, stream, stream_version, type, schema_version, recorded_at, observed_at, actor, correlation_id, causation_id, data, prev_hash, hash)
        SELECT p, i, s, v, t, sv, $7::timestamptz, o, a::jsonb, c, ca, d::jsonb, substring($13::bytea FROM (n::int - 1) * 32 + 1 FOR 32), substring($13::bytea FROM n::int * 32 + 1 FOR 32)
          FROM ROWS FROM (unnest($1::bigint[]), unnest($2::uuid[]), unnest($3::text[]), unnest($4::int[]), unnest($5::text[]), unnest($6::int[]), unnest($8::timestamptz[]),
                          ${elements(9)}, unnest($10::text[]), unnest($11::text[]), ${elements(12)}) WITH ORDINALITY
            AS u(p, i, s, v, t, sv, o, a, c, ca, d, n)${onlyIf}
      ), versions AS (
        INSERT INTO ledger_streams (stream, version, last_position, created_at, updated_at)
        SELECT s, v, l, $7::timestamptz, $7::timestamptz FROM unnest($14::text[], $15::int[], $16::bigint[]) AS u(s, v, l)${onlyIf}
        ON CONFLICT (stream) DO UPDATE SET version = EXCLUDED.version, last_position = EXCLUDED.last_position, updated_at = EXCLUDED.updated_at
      ), head AS (
        UPDATE ledger_head SET position = $17::bigint, hash = $18::bytea, recorded_at = $7::timestamptz${onlyIf}
      )${guard ? `, notified AS (
        SELECT pg_notify('${APPENDED_CHANNEL}', $19::text) FROM guard WHERE ok
      )
      SELECT CASE WHEN ok THEN 'written' ELSE 'refused' END AS outcome, (SELECT count(*) FROM notified) AS notified FROM guard` : `
      SELECT pg_notify('${APPENDED_CHANNEL}', $19::text)`}`,
    values: [
      arrayParameter(columns.position), arrayParameter(columns.eventId), arrayParameter(columns.stream), arrayParameter(columns.version), arrayParameter(columns.type),
      arrayParameter(columns.schemaVersion), recordedAt.toISOString(), arrayParameter(columns.observedAt),
      asArrays ? `[${columns.actor.join(',')}]` : arrayParameter(columns.actor), arrayParameter(columns.correlationId), arrayParameter(columns.causationId),
      asArrays ? `[${columns.data.join(',')}]` : arrayParameter(columns.data), Buffer.concat(columns.hashes),
      streams.map(([stream]) => stream), streams.map(([, t]) => t.version), streams.map(([, t]) => t.lastPosition),
      position, headHash, String(position),
      ...(guard ? [guard.headPosition, guard.clockBoundS] : []),
    ],
  };
}

/** What a one-round-trip write checks under the lock before it writes anything (see `speculation.ts`). */
export interface WriteGuard {
  /** The head the batch was chained onto (its hash is the first of the write's hashes). */
  headPosition: number;
  /** How far `recorded_at` may be from the database's clock, in seconds (Infinity with a clock given for tests). */
  clockBoundS: number;
}
