/**
 * The KurrentDB face against the ledger's other doors, in one run over one database: appends per second with 16
 * concurrent callers appending one event each (the in-process store, the HTTP API's cordon intent, and
 * `@eventstore/db-client` over gRPC, which uses BatchAppend), and events per second read from the whole log
 * (`EventStore.readAll` pages; `GET /v1/events` pages and the client's `readAll` stream, each read by a consumer in a
 * process of its own, and again in the server's process: `in_process`). One JSON object per line.
 *
 *   npm run bench:kurrent -- --json [--seconds 4] [--events 50000]
 */
import { spawn } from 'node:child_process';
import { rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { EventStoreDBClient, jsonEvent } from '@eventstore/db-client';
import { buildApi, TokenTable } from '../src/api/index.js';
import { EventStore } from '../src/ledger/index.js';
import { serveKurrent } from '../src/kurrent/index.js';
import { testCertificate } from '../test/kurrent/support/tls-certificate.js';
import { benchPostgres, round } from './support/bench-database.js';

const { values } = parseArgs({ options: { json: { type: 'boolean' }, seconds: { type: 'string', default: '4' }, events: { type: 'string', default: '50000' } } });
const seconds = Number(values.seconds);
const readEvents = Number(values.events);
const callers = 16;
const token = 'bench-operator-token-000001';
const auditorToken = 'bench-auditor-token-0000001';

const postgres = await benchPostgres();
const store = await EventStore.open({ connectionString: await postgres.freshDatabase() });
const api = await buildApi({ store, tokens: new TokenTable([{ token, principal: 'bench', role: 'operator' }, { token: auditorToken, principal: 'bench-auditor', role: 'auditor' }]) });
const apiUrl = await api.listen({ port: 0, host: '127.0.0.1' });
// Over TLS with an admin's credentials: a plaintext face appends nothing (its callers are anonymous), so the figures
// include what a real deployment pays for TLS.
const adminToken = 'bench-admin-token-00000001';
const certificate = testCertificate();
const face = await serveKurrent({ store, tokens: new TokenTable([{ token: adminToken, principal: 'bench', role: 'admin' }]), port: 0, tls: { certChain: certificate.certChain, privateKey: certificate.privateKey } });
const client = EventStoreDBClient.connectionString(`esdb://bench:${adminToken}@127.0.0.1:${face.port}?tls=true&tlsCAFile=${encodeURIComponent(certificate.caPath)}`);

const nodeIds = Array.from({ length: callers }, (_, index) => `bench-r01-n${String(index + 1).padStart(2, '0')}`);
// The API's intents are decided on their node's intents: nodes of their own, so each decision folds only the intents
// the HTTP phase recorded (not the thousands of cordons the store's phase appends to bench-r01).
const intentNodeIds = Array.from({ length: callers }, (_, index) => `bench-r02-n${String(index + 1).padStart(2, '0')}`);
for (const nodeId of [...nodeIds, ...intentNodeIds]) {
  await store.append(`node-${nodeId}`, [{ type: 'NodeRegistered', data: { nodeId, site: 'bench', rack: nodeId.slice(6, 9), bmc: { protocol: 'redfish', address: `https://${nodeId}.bmc`, credentialRef: 'bench' }, expectedIntervalS: 60 }, actor: { kind: 'operator', id: 'bench' } }]);
}
const reason = 'Replacing the failed DIMM B4 reported by the BMC SEL; ticket OPS-48213.';

/** Events per second and latency percentiles of `append` called by 16 callers in a loop for `seconds`. */
async function appendRate(append: (nodeId: string) => Promise<void>, nodes: readonly string[] = nodeIds): Promise<{ eps: number; p50: number; p99: number }> {
  const latencies: number[] = [];
  const until = performance.now() + seconds * 1000;
  const started = performance.now();
  await Promise.all(
    nodes.map(async (nodeId) => {
      while (performance.now() < until) {
        const at = performance.now();
        await append(nodeId);
        latencies.push(performance.now() - at);
      }
    }),
  );
  latencies.sort((a, b) => a - b);
  const at = (q: number): number => round(latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))]!);
  return { eps: Math.round(latencies.length / ((performance.now() - started) / 1000)), p50: at(0.5), p99: at(0.99) };
}

const uncordonNext = new Map<string, boolean>();
const appends = {
  store: await appendRate(async (nodeId) => {
    await store.append(`node-${nodeId}`, [{ type: 'NodeCordoned', data: { nodeId, reason }, actor: { kind: 'operator', id: 'bench' } }]);
  }),
  // Cordon and uncordon in turn: a repeated intent that changes nothing is answered without being recorded (200), so
  // each call changes the node (each starts uncordoned, on nodes of its own) and records one event (201).
  http: await appendRate(async (nodeId) => {
    const verb = (uncordonNext.get(nodeId) ?? false) ? 'uncordon' : 'cordon';
    uncordonNext.set(nodeId, verb === 'cordon');
    const response = await fetch(`${apiUrl}/v1/nodes/${nodeId}/${verb}`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify({ reason }) });
    if (response.status !== 201) throw new Error(`HTTP append answered ${response.status}: ${await response.text()}`);
  }, intentNodeIds),
  grpc: await appendRate(async (nodeId) => {
    await client.appendToStream(`node-${nodeId}`, jsonEvent({ type: 'NodeCordoned', data: { nodeId, reason } }));
  }),
};
const appendLine = {
  scenario: 'append 16x1',
  backend: postgres.kind,
  seconds,
  store_eps: appends.store.eps,
  http_eps: appends.http.eps,
  grpc_eps: appends.grpc.eps,
  grpc_vs_http: round(appends.grpc.eps / appends.http.eps),
  grpc_vs_store: round(appends.grpc.eps / appends.store.eps),
  p50_p99_ms: { store: [appends.store.p50, appends.store.p99], http: [appends.http.p50, appends.http.p99], grpc: [appends.grpc.p50, appends.grpc.p99] },
};

// Reads: fill the log up to `readEvents`, then read all of it through each door (best of three).
for (let head = (await store.head()).position; head < readEvents; head = (await store.head()).position) {
  const count = Math.min(1000, readEvents - head);
  await store.append(`node-${nodeIds[head % callers]}`, Array.from({ length: count }, () => ({ type: 'NodeCordoned', data: { nodeId: nodeIds[head % callers], reason }, actor: { kind: 'operator' as const, id: 'bench' } })));
}
const total = (await store.head()).position;

async function readRate(read: () => Promise<number>): Promise<number> {
  let best = 0;
  for (let attempt = 0; attempt < 3; attempt += 1) {
    const started = performance.now();
    const count = await read();
    if (count !== total) throw new Error(`read ${count} events of ${total}`);
    best = Math.max(best, count / ((performance.now() - started) / 1000));
  }
  return Math.round(best);
}

const reads = {
  store: await readRate(async () => {
    let count = 0;
    for (let from = 1; ; ) {
      const page = await store.readAll({ fromPosition: from, limit: 1000 });
      count += page.length;
      if (page.length < 1000) return count;
      from = page[page.length - 1]!.position + 1;
    }
  }),
  http: await readRate(async () => {
    let count = 0;
    for (let url: string | null = `${apiUrl}/v1/events?from=1&limit=1000`; url; ) {
      const response = await fetch(url, { headers: { authorization: `Bearer ${auditorToken}` } });
      if (response.status !== 200) throw new Error(`HTTP read answered ${response.status}: ${await response.text()}`);
      const body = (await response.json()) as { items: unknown[]; nextCursor: string | null };
      count += body.items.length;
      url = body.nextCursor ? `${apiUrl}/v1/events?cursor=${encodeURIComponent(body.nextCursor)}&limit=1000` : null;
    }
    return count;
  }),
  grpc: await readRate(async () => {
    let count = 0;
    for await (const _event of client.readAll({ fromPosition: 'start' })) count += 1;
    return count;
  }),
};
// As consumers read: each reader in a process of its own (bench/support/log-reader-child.ts), so the server's
// process pays for serving only, as it does in production; three rounds each, the best counted.
async function readerProcess(kind: 'http' | 'grpc', target: string, bearer: string): Promise<number> {
  const child = spawn(process.execPath, ['--import', 'tsx', fileURLToPath(new URL('./support/log-reader-child.ts', import.meta.url)), kind, target, bearer, '3'], { stdio: ['ignore', 'pipe', 'inherit'] });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  if (code !== 0) throw new Error(`the ${kind} reader exited with ${code}`);
  const rounds = JSON.parse(output) as Array<{ events: number; seconds: number }>;
  for (const round of rounds) if (round.events !== total) throw new Error(`the ${kind} reader read ${round.events} events of ${total}`);
  return Math.round(Math.max(...rounds.map((round) => round.events / round.seconds)));
}
const consumers = {
  http: await readerProcess('http', apiUrl, auditorToken),
  grpc: await readerProcess('grpc', `esdb://bench:${adminToken}@127.0.0.1:${face.port}?tls=true&tlsCAFile=${encodeURIComponent(certificate.caPath)}`, '-'),
};
const readLine = {
  scenario: 'read $all',
  backend: postgres.kind,
  events: total,
  store_eps: reads.store,
  http_eps: consumers.http,
  grpc_eps: consumers.grpc,
  grpc_vs_http: round(consumers.grpc / consumers.http),
  grpc_vs_store: round(consumers.grpc / reads.store),
  // The same reads with the client in the server's own process (it then pays for the client's decoding too).
  in_process: { http_eps: reads.http, grpc_eps: reads.grpc, grpc_vs_http: round(reads.grpc / reads.http) },
};

for (const line of [appendLine, readLine]) process.stdout.write(values.json ? `${JSON.stringify(line)}\n` : `${Object.entries(line).map(([k, v]) => `${k}=${JSON.stringify(v)}`).join(' ')}\n`);
await client.dispose();
await face.close();
rmSync(certificate.dir, { recursive: true, force: true });
await api.close();
await store.close();
await postgres.close();
