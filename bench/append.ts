/**
 * Append throughput and latency: fleet-ledger against @event-driven-io/emmett-postgresql on the same
 * PostgreSQL, identical ~300-byte payloads to distinct streams. One JSON object per scenario and line.
 *
 *   npm run bench:append -- --json [--seconds 5]
 */
import { randomUUID } from 'node:crypto';
import { parseArgs } from 'node:util';
import { getPostgreSQLEventStore } from '@event-driven-io/emmett-postgresql';
import { EventStore } from '../src/ledger/index.js';
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
const batch = await measure(ours, 1, 1000);
const peerBatch = await measure(peer, 1, 1000);
lines.push({ scenario: 'batch1000', backend: postgres.kind, ours_eps: Math.round(batch.eps), peer_eps: Math.round(peerBatch.eps), ratio: round(batch.eps / peerBatch.eps), ours_p50_ms: round(batch.p50), ours_p99_ms: round(batch.p99) });

for (const line of lines) process.stdout.write(values.json ? `${JSON.stringify(line)}\n` : `${Object.entries(line).map(([k, v]) => `${k}=${v}`).join(' ')}\n`);
await ours.close();
await peer.close();
await postgres.close();
