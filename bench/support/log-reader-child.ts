/**
 * A reader of the whole log in a process of its own, as a consumer is: through the HTTP API (`GET /v1/events` pages
 * of 1,000) or through the KurrentDB face with `@eventstore/db-client` (`readAll` from the start). It reads the log
 * `rounds` times and prints one JSON line: the events of each round and its seconds, timed from its first request
 * to its last event (the process's start and the client's connection are not counted).
 *
 *   node --import tsx bench/support/log-reader-child.ts http <api-url> <token> <rounds>
 *   node --import tsx bench/support/log-reader-child.ts grpc <esdb-connection-string> - <rounds>
 */
import { EventStoreDBClient } from '@eventstore/db-client';

const [kind, target, token, roundsText] = process.argv.slice(2);
if ((kind !== 'http' && kind !== 'grpc') || !target) throw new Error('usage: log-reader-child http|grpc <url> <token|-> <rounds>');
const rounds = Number(roundsText ?? 3);

async function readHttp(): Promise<number> {
  let count = 0;
  for (let url: string | null = `${target}/v1/events?from=1&limit=1000`; url; ) {
    const response = await fetch(url, { headers: { authorization: `Bearer ${token}` } });
    if (response.status !== 200) throw new Error(`HTTP read answered ${response.status}: ${await response.text()}`);
    const body = (await response.json()) as { items: unknown[]; nextCursor: string | null };
    count += body.items.length;
    url = body.nextCursor ? `${target}/v1/events?cursor=${encodeURIComponent(body.nextCursor)}&limit=1000` : null;
  }
  return count;
}

const client = kind === 'grpc' ? EventStoreDBClient.connectionString(target) : null;
async function readGrpc(): Promise<number> {
  let count = 0;
  for await (const _event of client!.readAll({ fromPosition: 'start' })) count += 1;
  return count;
}

const results: Array<{ events: number; seconds: number }> = [];
for (let round = 0; round < rounds; round += 1) {
  const started = performance.now();
  const events = kind === 'http' ? await readHttp() : await readGrpc();
  results.push({ events, seconds: (performance.now() - started) / 1000 });
}
await client?.dispose();
process.stdout.write(`${JSON.stringify(results)}\n`);
