/**
 * The transparency log's costs, each beside its baseline in the same run:
 *
 * - append_overhead_ratio: 1 - (events appended per second with the Merkle follower and the checkpoint signer running,
 *   at their defaults, divided by the same without them); same workload, runs interleaved (A B A B A B);
 * - proof_p99_ms: inclusion and consistency proofs at `--events` leaves (default 2,000,000), through the tiles;
 * - verify_events_per_s: the offline verifier over an export (`--verify-events` of them, default 500,000), with the
 *   raw SHA-256 rate of this machine over the same bytes as the reference;
 * - follower_leaves_per_s: how fast the tree catches up over a log that grew without it.
 *
 * The large log is loaded directly (rows chained and hashed here, inserted with unnest, as `store.append` would
 * write them) so the run takes minutes, not the hours 2 million API appends would.
 *
 *   npx tsx bench/audit.ts --json [--events 2000000] [--append-events 100000] [--verify-events 500000]
 */
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync, createWriteStream } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { AuditService, consistencyProof, exportLines, inclusionProof, verifyExport } from '../replay/audit/index.js';
import { verifyConsistency, verifyInclusion } from '../replay/merkle/rfc9162.js';
import { canonicalJson, chainHash, EventStore, genesisHash } from '../src/ledger/index.js';
import { canonicalEvent } from '../src/ledger/event-row.js';
import { cordonEvent } from './support/audit-events.js';
import { benchPostgres, percentile, round } from './support/bench-database.js';

const { values } = parseArgs({
  options: {
    json: { type: 'boolean' },
    events: { type: 'string', default: '2000000' },
    'append-events': { type: 'string', default: '100000' },
    'verify-events': { type: 'string', default: '500000' },
    proofs: { type: 'string', default: '1000' },
  },
});
const totalEvents = Number(values.events);
const appendEvents = Number(values['append-events']);
const verifyEvents = Math.min(Number(values['verify-events']), totalEvents);
const proofs = Number(values.proofs);
const log = (line: string): void => void process.stderr.write(`${line}\n`);

const postgres = await benchPostgres();
const folder = mkdtempSync(join(tmpdir(), 'fleet-ledger-bench-audit-'));
try {
  // 1. Append throughput with and without the transparency log, interleaved.
  async function appendRun(withAudit: boolean): Promise<number> {
    const url = await postgres.freshDatabase();
    const store = await EventStore.open({ connectionString: url });
    const audit = withAudit ? await AuditService.start({ connectionString: url, dataDir: folder, keyPath: join(folder, 'signer.key'), publishDir: join(folder, `pub-${Date.now()}`) }) : null;
    const writers = 16;
    const perAppend = 10;
    const started = performance.now();
    await Promise.all(
      Array.from({ length: writers }, async (_, writer) => {
        for (let i = 0; i < appendEvents / writers / perAppend; i++) {
          await store.append(`node-w${writer}-${i % 50}`, Array.from({ length: perAppend }, (_, j) => cordonEvent(`n${writer}`, `r${i}-${j}`)));
        }
      }),
    );
    const seconds = (performance.now() - started) / 1000;
    if (audit) {
      await audit.checkpointNow();
      const status = await audit.status();
      if (status.treeSize !== appendEvents) throw new Error(`the tree has ${status.treeSize} leaves, the log ${appendEvents}`);
      await audit.stop();
    }
    await store.close();
    return appendEvents / seconds;
  }
  const without: number[] = [];
  const withLog: number[] = [];
  for (let round = 0; round < 3; round++) {
    without.push(await appendRun(false));
    withLog.push(await appendRun(true));
    log(`append round ${round + 1}: without ${Math.round(without[round]!)} events/s, with the transparency log ${Math.round(withLog[round]!)} events/s`);
  }
  const mean = (xs: number[]): number => xs.reduce((a, b) => a + b, 0) / xs.length;

  // 2. A large log, loaded directly, then the tree caught up over it.
  const url = await postgres.freshDatabase();
  const store = await EventStore.open({ connectionString: url });
  await store.close();
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const loadStarted = performance.now();
  let prev = genesisHash;
  const recordedAt = new Date('2026-11-01T00:00:00Z');
  for (let from = 1; from <= totalEvents; from += 10_000) {
    const to = Math.min(totalEvents, from + 9_999);
    const cols = { position: [] as number[], id: [] as string[], stream: [] as string[], version: [] as number[], actor: [] as string[], data: [] as string[], prev: [] as Buffer[], hash: [] as Buffer[], at: [] as Date[] };
    for (let position = from; position <= to; position++) {
      const event = cordonEvent(`n${position % 25_000}`, `reason ${position}`);
      const row = { position, eventId: event.eventId!, stream: `node-n${position % 25_000}`, streamVersion: Math.floor(position / 25_000) + 1, type: event.type, schemaVersion: 1, recordedAt: new Date(recordedAt.getTime() + position), observedAt: null, actor: event.actor, correlationId: null, causationId: null, data: event.data };
      const hash = chainHash(prev, canonicalEvent(row));
      cols.position.push(position);
      cols.id.push(row.eventId);
      cols.stream.push(row.stream);
      cols.version.push(row.streamVersion);
      cols.actor.push(canonicalJson(row.actor));
      cols.data.push(canonicalJson(row.data));
      cols.prev.push(Buffer.from(prev, 'hex'));
      cols.hash.push(Buffer.from(hash, 'hex'));
      cols.at.push(row.recordedAt);
      prev = hash;
    }
    await client.query(
      `INSERT INTO ledger_events (position, event_id, stream, stream_version, type, schema_version, recorded_at, observed_at, actor, correlation_id, causation_id, data, prev_hash, hash)
       SELECT p, i, s, v, 'NodeCordoned', 1, t, NULL, a::jsonb, NULL, NULL, d::jsonb, ph, h FROM unnest($1::bigint[], $2::uuid[], $3::text[], $4::int[], $5::timestamptz[], $6::text[], $7::text[], $8::bytea[], $9::bytea[]) AS u(p, i, s, v, t, a, d, ph, h)`,
      [cols.position, cols.id, cols.stream, cols.version, cols.at, cols.actor, cols.data, cols.prev, cols.hash],
    );
  }
  await client.query('UPDATE ledger_head SET position = $1, hash = $2, recorded_at = $3', [totalEvents, Buffer.from(prev, 'hex'), new Date(recordedAt.getTime() + totalEvents)]);
  log(`loaded ${totalEvents} events in ${round((performance.now() - loadStarted) / 1000, 1)} s`);
  const audit = await AuditService.start({ connectionString: url, dataDir: folder, keyPath: join(folder, 'signer.key'), publishDir: false, checkpointIntervalMs: 3_600_000 });
  const followStarted = performance.now();
  await audit.checkpointNow();
  const followerRate = totalEvents / ((performance.now() - followStarted) / 1000);
  log(`tree caught up over ${totalEvents} leaves at ${Math.round(followerRate)} leaves/s, checkpoint signed`);
  // A log that grew over weeks has been vacuumed and checkpointed as it grew; one bulk-loaded a minute ago has not, and
  // autovacuum and the checkpointer would then run during the proofs below, on the same two cores. Settle first.
  const settleStarted = performance.now();
  await client.query('VACUUM (ANALYZE) ledger_events, ledger_merkle_tiles, ledger_merkle_state');
  await client.query('CHECKPOINT');
  log(`vacuumed and checkpointed in ${round((performance.now() - settleStarted) / 1000, 1)} s`);

  // 3. Proofs at that size, each verified.
  const pool = audit.pool;
  const seed = { x: 12345 };
  const random = (): number => ((seed.x = (seed.x * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
  const inclusionMs: number[] = [];
  const consistencyMs: number[] = [];
  for (let i = 0; i < proofs; i++) {
    const position = 1 + Math.floor(random() * totalEvents);
    let started = performance.now();
    const inclusion = await inclusionProof(pool, position, totalEvents);
    inclusionMs.push(performance.now() - started);
    if (!verifyInclusion(inclusion.leafHash, inclusion.leafIndex, totalEvents, inclusion.proof, inclusion.root)) throw new Error(`inclusion proof of ${position} does not verify`);
    const m = 1 + Math.floor(random() * (totalEvents - 1));
    started = performance.now();
    const consistency = await consistencyProof(pool, m, totalEvents);
    consistencyMs.push(performance.now() - started);
    if (!verifyConsistency(m, totalEvents, consistency.fromRoot, consistency.toRoot, consistency.proof)) throw new Error(`consistency proof ${m} -> ${totalEvents} does not verify`);
  }
  inclusionMs.sort((a, b) => a - b);
  consistencyMs.sort((a, b) => a - b);
  const all = [...inclusionMs, ...consistencyMs].sort((a, b) => a - b);

  // 4. Offline verification of an export, beside the raw hashing rate of the same bytes.
  const file = join(folder, 'export.txt');
  const out = createWriteStream(file);
  let bytes = 0;
  for await (const chunk of exportLines(pool, { from: totalEvents - verifyEvents + 1, to: totalEvents })) {
    bytes += chunk.length;
    if (!out.write(chunk)) await new Promise<void>((resolve) => out.once('drain', () => resolve()));
  }
  await new Promise<void>((resolve) => out.end(() => resolve()));
  const report = await verifyExport(file, { key: audit.signer.verifierKey });
  if (!report.ok) throw new Error(`the export does not verify: ${report.reason}`);
  const hashStarted = performance.now();
  const sample = Buffer.alloc(Math.round(bytes / verifyEvents));
  for (let i = 0; i < verifyEvents; i++) createHash('sha256').update(sample).digest();
  const rawHashRate = verifyEvents / ((performance.now() - hashStarted) / 1000);
  await audit.stop();
  await client.end();

  const result = {
    events: totalEvents,
    append_events_per_s_without: Math.round(mean(without)),
    append_events_per_s_with: Math.round(mean(withLog)),
    append_overhead_ratio: round(1 - mean(withLog) / mean(without), 3),
    follower_leaves_per_s: Math.round(followerRate),
    proof_p50_ms: round(percentile(all, 50), 2),
    proof_p99_ms: round(percentile(all, 99), 2),
    inclusion_p99_ms: round(percentile(inclusionMs, 99), 2),
    consistency_p99_ms: round(percentile(consistencyMs, 99), 2),
    verify_events: report.events,
    verify_events_per_s: report.eventsPerSecond,
    sha256_only_events_per_s: Math.round(rawHashRate),
    export_bytes_per_event: Math.round(bytes / verifyEvents),
    backend: postgres.kind,
  };
  writeFileSync(join(folder, 'result.json'), JSON.stringify(result));
  process.stdout.write(values.json ? `${JSON.stringify(result)}\n` : `${JSON.stringify(result, null, 2)}\n`);
} finally {
  await postgres.close();
  rmSync(folder, { recursive: true, force: true });
}
