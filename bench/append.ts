/**
 * Append throughput and latency: fleet-ledger against @event-driven-io/emmett-postgresql on the same
 * PostgreSQL, identical ~300-byte payloads to distinct streams. One JSON object per scenario and line. The batch1000
 * line also carries `raw`: the same rows, hashed beforehand, inserted by a plain set-based INSERT (the floor).
 *
 * The contenders of a scenario take turns: `--rounds` rounds, each giving every contender `seconds / rounds` in an
 * order that rotates from round to round, so a checkpoint, an autovacuum or the machine slowing down lands on all of
 * them alike instead of on whichever ran during it. Each figure is the sum of its rounds (events over time).
 *
 *   npm run bench:append -- --json [--seconds 5] [--rounds 5]
 */
import { randomUUID } from 'node:crypto';
import { parseArgs } from 'node:util';
import { getPostgreSQLEventStore } from '@event-driven-io/emmett-postgresql';
import pg from 'pg';
import { canonicalJson, chainHash, EventStore, genesisHash } from '../src/ledger/index.js';
import { canonicalEvent } from '../src/ledger/event-row.js';
import { benchPostgres, percentile, round } from './support/bench-database.js';

const { values } = parseArgs({ options: { json: { type: 'boolean' }, seconds: { type: 'string', default: '5' }, rounds: { type: 'string', default: '5' } } });
const seconds = Number(values.seconds);
const rounds = Math.max(1, Math.floor(Number(values.rounds)));

const reason = 'Replacing the failed DIMM B4 reported by the BMC SEL; ticket OPS-48213; the node stays cordoned until the burn-in completes and the memory test passes on all channels. '.padEnd(230, '.');
const payload = (i: number) => ({ nodeId: `dc1-r${String(i % 400).padStart(3, '0')}-n${i % 40}`, reason });
const actor = { kind: 'operator', id: 'bench@fleet' } as const;

interface Appender {
  append(stream: string, count: number, seq: number): Promise<void>;
  close(): Promise<void>;
}

async function oursAppender(url: string): Promise<Appender> {
  const store = await EventStore.open({ connectionString: url, poolSize: 4 });
  return {
    async append(stream, count, seq) {
      await store.append(stream, Array.from({ length: count }, (_, k) => ({ type: 'NodeCordoned', data: payload(seq + k), actor })));
    },
    close: () => store.close(),
  };
}

async function peerAppender(url: string): Promise<Appender> {
  const store = getPostgreSQLEventStore(url);
  await store.schema.migrate();
  return {
    async append(stream, count, seq) {
      await store.appendToStream(stream, Array.from({ length: count }, (_, k) => ({ type: 'NodeCordoned', data: { ...payload(seq + k), actor } })));
    },
    close: () => store.close(),
  };
}

/** What one contender did in one or more slices of time: events, seconds, each call's latency in ms. */
interface Tally {
  events: number;
  seconds: number;
  latencies: number[];
}

const emptyTally = (): Tally => ({ events: 0, seconds: 0, latencies: [] });

/** `callers` concurrent loops, each appending `perAppend` events per call to a new stream, for `slice` seconds. */
async function measure(appender: Appender, callers: number, perAppend: number, slice: number, into: Tally): Promise<void> {
  let events = 0;
  const started = performance.now();
  const deadline = started + slice * 1000;
  await Promise.all(
    Array.from({ length: callers }, async (_, c) => {
      let seq = 0;
      while (performance.now() < deadline) {
        const t0 = performance.now();
        await appender.append(`node-${c}-${randomUUID()}`, perAppend, seq);
        into.latencies.push(performance.now() - t0);
        events += perAppend;
        seq += perAppend;
      }
    }),
  );
  into.events += events;
  into.seconds += (performance.now() - started) / 1000;
}

/**
 * PostgreSQL itself, the floor under any append path: the same rows as `store.append` writes them (same table, same
 * indexes and triggers), chained and hashed beforehand, inserted `perBatch` at a time by one plain
 * `INSERT ... SELECT FROM unnest(...)` in a transaction of their own. The chain goes on from slice to slice; each
 * slice's batches are made before its clock starts.
 */
async function rawInserter(url: string, perBatch: number): Promise<{ insert: (slice: number, into: Tally) => Promise<void>; close: () => Promise<void> }> {
  const schema = await EventStore.open({ connectionString: url, poolSize: 1 });
  await schema.close();
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const recordedAt = new Date();
  let prev = genesisHash;
  let position = 0;
  let batchNo = 0;
  const makeBatch = () => {
    const b = (batchNo += 1);
    const rows = { position: [] as number[], id: [] as string[], stream: [] as string[], version: [] as number[], actor: [] as string[], data: [] as string[], prev: [] as Buffer[], hash: [] as Buffer[] };
    for (let k = 0; k < perBatch; k += 1) {
      position += 1;
      const row = { position, eventId: randomUUID(), stream: `node-raw-${b}`, streamVersion: k + 1, type: 'NodeCordoned', schemaVersion: 1, recordedAt, observedAt: null, actor, correlationId: null, causationId: null, data: payload(position) };
      const hash = chainHash(prev, canonicalEvent(row));
      rows.position.push(position);
      rows.id.push(row.eventId);
      rows.stream.push(row.stream);
      rows.version.push(row.streamVersion);
      rows.actor.push(canonicalJson(actor));
      rows.data.push(canonicalJson(row.data));
      rows.prev.push(Buffer.from(prev, 'hex'));
      rows.hash.push(Buffer.from(hash, 'hex'));
      prev = hash;
    }
    return rows;
  };
  return {
    async insert(slice, into) {
      // More than this machine can insert in the slice (60,000 rows/s); what is left over is thrown away, and the
      // next slice's chain starts after it (positions are only required to rise).
      const prepared = Array.from({ length: Math.ceil((slice * 60_000) / perBatch) }, makeBatch);
      let events = 0;
      const started = performance.now();
      const deadline = started + slice * 1000;
      for (const rows of prepared) {
        if (performance.now() >= deadline) break;
        const t0 = performance.now();
        await client.query('BEGIN');
        await client.query(
          `INSERT INTO ledger_events (position, event_id, stream, stream_version, type, schema_version, recorded_at, observed_at, actor, correlation_id, causation_id, data, prev_hash, hash)
           SELECT p, i, s, v, 'NodeCordoned', 1, $9, NULL, a::jsonb, NULL, NULL, d::jsonb, ph, h FROM unnest($1::bigint[], $2::uuid[], $3::text[], $4::int[], $5::text[], $6::text[], $7::bytea[], $8::bytea[]) AS u(p, i, s, v, a, d, ph, h)`,
          [rows.position, rows.id, rows.stream, rows.version, rows.actor, rows.data, rows.prev, rows.hash, recordedAt],
        );
        await client.query('COMMIT');
        into.latencies.push(performance.now() - t0);
        events += perBatch;
      }
      into.events += events;
      into.seconds += (performance.now() - started) / 1000;
    },
    close: () => client.end(),
  };
}

/** Runs the contenders `rounds` times, each for `seconds / rounds` per round, the order rotating; one tally each. */
async function takeTurns(contenders: Array<(slice: number, into: Tally) => Promise<void>>): Promise<{ tallies: Tally[]; perRound: Tally[][] }> {
  const tallies = contenders.map(emptyTally);
  const perRound: Tally[][] = [];
  const slice = seconds / rounds;
  for (let round = 0; round < rounds; round += 1) {
    const these = contenders.map(emptyTally);
    for (let turn = 0; turn < contenders.length; turn += 1) {
      const index = (round + turn) % contenders.length;
      await contenders[index]!(slice, these[index]!);
    }
    these.forEach((tally, index) => {
      const total = tallies[index]!;
      total.events += tally.events;
      total.seconds += tally.seconds;
      total.latencies.push(...tally.latencies);
    });
    perRound.push(these);
  }
  for (const tally of tallies) tally.latencies.sort((a, b) => a - b);
  return { tallies, perRound };
}

const eps = (tally: Tally): number => tally.events / tally.seconds;
/** The lowest and highest of one ratio over the rounds, so a line shows how far a single round could have misled. */
const spread = (perRound: Tally[][], a: number, b: number): [number, number] => {
  const ratios = perRound.map((round) => eps(round[a]!) / eps(round[b]!));
  return [round(Math.min(...ratios)), round(Math.max(...ratios))];
};

const postgres = await benchPostgres();
const ours = await oursAppender(await postgres.freshDatabase());
const peer = await peerAppender(await postgres.freshDatabase());
// Warm both up (connections, plans) before measuring.
await measure(ours, 4, 1, seconds, emptyTally()).catch(() => undefined);
await measure(peer, 4, 1, seconds, emptyTally()).catch(() => undefined);

const scenarios: Array<[string, number, number]> = [
  ['1x1', 1, 1],
  ['16x1', 16, 1],
  ['16x10', 16, 10],
];
const lines: object[] = [];
for (const [scenario, callers, perAppend] of scenarios) {
  const { tallies: [o, p], perRound } = await takeTurns([(slice, into) => measure(ours, callers, perAppend, slice, into), (slice, into) => measure(peer, callers, perAppend, slice, into)]);
  lines.push({
    scenario,
    backend: postgres.kind,
    rounds,
    ours_eps: Math.round(eps(o!)),
    peer_eps: Math.round(eps(p!)),
    ratio: round(eps(o!) / eps(p!)),
    ratio_rounds: spread(perRound, 0, 1),
    ours_p50_ms: round(percentile(o!.latencies, 50)),
    ours_p99_ms: round(percentile(o!.latencies, 99)),
    peer_p50_ms: round(percentile(p!.latencies, 50)),
    peer_p99_ms: round(percentile(p!.latencies, 99)),
  });
}
// All three on fresh databases of their own: `raw` always had one, while ours and emmett's inserted into tables (and
// indexes) that the scenarios above had filled, so the floor was measured under easier conditions than what it judged.
const oursFresh = await oursAppender(await postgres.freshDatabase());
const peerFresh = await peerAppender(await postgres.freshDatabase());
const raw = await rawInserter(await postgres.freshDatabase(), 1000);
const {
  tallies: [batch, peerBatch, rawBatch],
  perRound,
} = await takeTurns([(slice, into) => measure(oursFresh, 1, 1000, slice, into), (slice, into) => measure(peerFresh, 1, 1000, slice, into), raw.insert]);
await oursFresh.close();
await peerFresh.close();
await raw.close();
lines.push({
  scenario: 'batch1000',
  backend: postgres.kind,
  rounds,
  ours_eps: Math.round(eps(batch!)),
  peer_eps: Math.round(eps(peerBatch!)),
  ratio: round(eps(batch!) / eps(peerBatch!)),
  ratio_rounds: spread(perRound, 0, 1),
  raw_eps: Math.round(eps(rawBatch!)),
  ratio_to_raw: round(eps(batch!) / eps(rawBatch!)),
  ratio_to_raw_rounds: spread(perRound, 0, 2),
  ours_p50_ms: round(percentile(batch!.latencies, 50)),
  ours_p99_ms: round(percentile(batch!.latencies, 99)),
  raw_p50_ms: round(percentile(rawBatch!.latencies, 50)),
});

for (const line of lines) process.stdout.write(values.json ? `${JSON.stringify(line)}\n` : `${Object.entries(line).map(([k, v]) => `${k}=${v}`).join(' ')}\n`);
await ours.close();
await peer.close();
await postgres.close();
