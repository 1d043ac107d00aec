/**
 * Read throughput: `readAll` (rows mapped to envelopes, data upcast) against a raw SELECT of the same rows
 * through the same pg pool. One JSON object per line.
 *
 *   npm run bench:read -- --json [--events 200000]
 */
import { parseArgs } from 'node:util';
import { EventStore } from '../src/ledger/index.js';
import { benchPostgres, round } from './support/bench-database.js';

const { values } = parseArgs({ options: { json: { type: 'boolean' }, events: { type: 'string', default: '200000' } } });
const total = Number(values.events);
const postgres = await benchPostgres();
const store = await EventStore.open({ connectionString: await postgres.freshDatabase() });
const reason = 'Replacing the failed DIMM B4 reported by the BMC SEL; ticket OPS-48213. '.padEnd(230, '.');
for (let written = 0; written < total; written += 1000) {
  await store.append(`node-${written % 5000}`, Array.from({ length: 1000 }, (_, k) => ({ type: 'NodeCordoned', data: { nodeId: `n${k}`, reason }, actor: { kind: 'operator' as const, id: 'bench' } })));
}
const page = 1000;

async function timed(read: (from: number) => Promise<number>): Promise<number> {
  const started = performance.now();
  let from = 1;
  let count = 0;
  for (;;) {
    const got = await read(from);
    if (got === 0) break;
    count += got;
    from += got;
  }
  return count / ((performance.now() - started) / 1000);
}

const results: Array<{ ours: number; raw: number }> = [];
for (let round_ = 0; round_ < 3; round_ += 1) {
  const ours = await timed(async (from) => (await store.readAll({ fromPosition: from, limit: page })).length);
  const raw = await timed(async (from) => (await store.pool.query('SELECT * FROM ledger_events WHERE position >= $1 ORDER BY position LIMIT $2', [from, page])).rowCount ?? 0);
  results.push({ ours, raw });
}
const best = (key: 'ours' | 'raw'): number => Math.max(...results.map((r) => r[key]));
const line = { scenario: 'readAll', backend: postgres.kind, events: total, page, ours_eps: Math.round(best('ours')), raw_select_eps: Math.round(best('raw')), ratio: round(best('ours') / best('raw')) };
process.stdout.write(values.json ? `${JSON.stringify(line)}\n` : `${Object.entries(line).map(([k, v]) => `${k}=${v}`).join(' ')}\n`);
await store.close();
await postgres.close();
