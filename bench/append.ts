/**
 * Append throughput and latency: fleet-ledger against @event-driven-io/emmett-postgresql on the same
 * PostgreSQL, identical ~300-byte payloads to distinct streams. One JSON object per scenario and line. The batch1000
 * line also carries `raw`: the same rows, hashed beforehand, inserted by a plain set-based INSERT (the floor).
 *
 *   npm run bench:append -- --json [--seconds 5]
 */
import { randomUUID } from 'node:crypto';
import { parseArgs } from 'node:util';
import { getPostgreSQLEventStore } from '@event-driven-io/emmett-postgresql';
import pg from 'pg';
import { canonicalJson, chainHash, EventStore, genesisHash } from '../src/ledger/index.js';
import { canonicalEvent } from '../src/ledger/event-row.js';
import { benchPostgres, percentile, round } from './support/bench-database.js';

const { values } = parseArgs({ options: { json: { type: 'boolean' }, seconds: { type: 'string', default: '5' } } });
const seconds = Number(values.seconds);

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

/** `callers` concurrent loops, each appending `perAppend` events per call to a new stream, for `seconds`. */
async function measure(appender: Appender, callers: number, perAppend: number): Promise<{ eps: number; p50: number; p99: number }> {
  const latencies: number[] = [];
  let events = 0;
  const deadline = performance.now() + seconds * 1000;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: callers }, async (_, c) => {
      let seq = 0;
      while (performance.now() < deadline) {
        const t0 = performance.now();
        await appender.append(`node-${c}-${randomUUID()}`, perAppend, seq);
        latencies.push(performance.now() - t0);
        events += perAppend;
        seq += perAppend;
      }
    }),
  );
  const elapsed = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  return { eps: events / elapsed, p50: percentile(latencies, 50), p99: percentile(latencies, 99) };
}

/**
 * PostgreSQL itself, the floor under any append path: the same rows as `store.append` writes them (same table, same
 * indexes and triggers), chained and hashed beforehand, inserted `perBatch` at a time by one plain
 * `INSERT ... SELECT FROM unnest(...)` in a transaction of their own, for `seconds`.
 */
async function measureRaw(url: string, perBatch: number): Promise<{ eps: number; p50: number }> {
  const schema = await EventStore.open({ connectionString: url, poolSize: 1 });
  await schema.close();
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const batches = Math.ceil(seconds * 60); // more than this machine can insert in `seconds` (60,000 rows/s)
  const recordedAt = new Date();
  let prev = genesisHash;
  let position = 0;
  const prepared = Array.from({ length: batches }, (_, b) => {
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
  });
  const latencies: number[] = [];
  let events = 0;
  const started = performance.now();
  const deadline = started + seconds * 1000;
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
    latencies.push(performance.now() - t0);
    events += perBatch;
  }
  const elapsed = (performance.now() - started) / 1000;
  await client.end();
  latencies.sort((a, b) => a - b);
  return { eps: events / elapsed, p50: percentile(latencies, 50) };
}

const postgres = await benchPostgres();
const ours = await oursAppender(await postgres.freshDatabase());
const peer = await peerAppender(await postgres.freshDatabase());
// Warm both up (connections, plans) before measuring.
await measure(ours, 4, 1).catch(() => undefined);
await measure(peer, 4, 1).catch(() => undefined);

const scenarios: Array<[string, number, number]> = [
  ['1x1', 1, 1],
  ['16x1', 16, 1],
  ['16x10', 16, 10],
];
const lines: object[] = [];
for (const [scenario, callers, perAppend] of scenarios) {
  const o = await measure(ours, callers, perAppend);
  const p = await measure(peer, callers, perAppend);
  lines.push({
    scenario,
    backend: postgres.kind,
    ours_eps: Math.round(o.eps),
    peer_eps: Math.round(p.eps),
    ratio: round(o.eps / p.eps),
    ours_p50_ms: round(o.p50),
    ours_p99_ms: round(o.p99),
    peer_p50_ms: round(p.p50),
    peer_p99_ms: round(p.p99),
  });
}
// All three on fresh databases of their own: `raw` always had one, while ours and emmett's inserted into tables (and
// indexes) that the scenarios above had filled, so the floor was measured under easier conditions than what it judged.
const oursFresh = await oursAppender(await postgres.freshDatabase());
const peerFresh = await peerAppender(await postgres.freshDatabase());
const batch = await measure(oursFresh, 1, 1000);
const peerBatch = await measure(peerFresh, 1, 1000);
const raw = await measureRaw(await postgres.freshDatabase(), 1000);
await oursFresh.close();
await peerFresh.close();
lines.push({
  scenario: 'batch1000',
  backend: postgres.kind,
  ours_eps: Math.round(batch.eps),
  peer_eps: Math.round(peerBatch.eps),
  ratio: round(batch.eps / peerBatch.eps),
  raw_eps: Math.round(raw.eps),
  ratio_to_raw: round(batch.eps / raw.eps),
  ours_p50_ms: round(batch.p50),
  ours_p99_ms: round(batch.p99),
  raw_p50_ms: round(raw.p50),
});

for (const line of lines) process.stdout.write(values.json ? `${JSON.stringify(line)}\n` : `${Object.entries(line).map(([k, v]) => `${k}=${v}`).join(' ')}\n`);
await ours.close();
await peer.close();
await postgres.close();
