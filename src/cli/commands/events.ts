/** `fleet-ledger events <verb>`: the log for auditors through the API: pages, one stream, the chain check, the live tail. */
import { request } from 'undici';
import { callApi, connectionOf, connectionUsage, exitCodes, output, parseCommandArgs, required, runApiCommand, table, UsageError, ApiCallError } from '../api-client.js';

export const summary = 'read the log through the API: events, one stream, verify the hash chain, tail the live feed';

const usage = `usage: fleet-ledger events <verb> [options]

  list [--from POSITION] [--types T1,T2] [--stream PREFIX] [--limit N]
  stream STREAM [--limit N]
  verify [--from POSITION] [--to POSITION]     exit 1 when the chain is broken
  tail [--from POSITION] [--types T1,T2] [--stream PREFIX] [--count N]   follow the live feed (SSE)
${connectionUsage}
`;

const options = { from: { type: 'string' }, to: { type: 'string' }, types: { type: 'string' }, stream: { type: 'string' }, limit: { type: 'string' }, count: { type: 'string' } } as const;

function summaryOf(event: any) {
  return { position: event.position, recordedAt: event.recordedAt, stream: event.stream, type: event.type, actor: `${event.actor.kind}:${event.actor.id}` };
}

function positive(value: string | undefined, name: string): number | undefined {
  if (value === undefined) return undefined;
  const number = Number(value);
  if (!Number.isInteger(number) || number < 1) throw new UsageError(`--${name} must be a positive integer`);
  return number;
}

export function run(argv: string[]): Promise<number> {
  return runApiCommand('events', usage, argv, async () => {
    const { values, positionals } = parseCommandArgs(argv, options);
    if (values.help) {
      process.stdout.write(usage);
      return exitCodes.ok;
    }
    const connection = connectionOf(values);
    const limit = positive(values.limit, 'limit') ?? 100;
    switch (positionals[0]) {
      case 'list': {
        const page = await callApi(connection, '/v1/events', { query: { from: positive(values.from, 'from'), types: values.types, stream: values.stream, limit } });
        output(connection, page, () => `${table(page.items.map(summaryOf), ['position', 'recordedAt', 'stream', 'type', 'actor'])}${page.nextCursor ? `(more: --from ${page.items[page.items.length - 1].position + 1})\n` : ''}`);
        return exitCodes.ok;
      }
      case 'stream': {
        const stream = required(positionals, 1, 'STREAM');
        const page = await callApi(connection, `/v1/streams/${encodeURIComponent(stream)}`, { query: { limit } });
        output(connection, page, () => table(page.items.map((e: any) => ({ version: e.streamVersion, ...summaryOf(e) })), ['version', 'position', 'recordedAt', 'type', 'actor']));
        return exitCodes.ok;
      }
      case 'verify': {
        const answer = await callApi(connection, '/v1/verify', { query: { from: positive(values.from, 'from'), to: positive(values.to, 'to') } });
        output(connection, answer, () => (answer.ok ? `chain intact: ${answer.checked} events checked (${answer.from}..${answer.to}), head ${answer.headPosition} ${answer.headHash}\n` : `CHAIN BROKEN at position ${answer.firstBrokenPosition}: ${answer.reason}\n`));
        return answer.ok ? exitCodes.ok : exitCodes.error;
      }
      case 'tail': {
        const count = positive(values.count, 'count');
        const target = new URL('v1/events/live', connection.url.endsWith('/') ? connection.url : `${connection.url}/`);
        for (const [key, value] of Object.entries({ from: values.from, types: values.types, stream: values.stream })) if (value) target.searchParams.set(key, value);
        const response = await request(target, { headers: { accept: 'text/event-stream', ...(connection.token ? { authorization: `Bearer ${connection.token}` } : {}) } });
        if (response.statusCode !== 200) {
          const body: any = await response.body.json().catch(() => ({}));
          throw new ApiCallError(response.statusCode, body.error?.code ?? `HTTP_${response.statusCode}`, body.error?.message ?? 'live feed refused', body.error?.details ?? {});
        }
        let buffer = '';
        let seen = 0;
        for await (const chunk of response.body) {
          buffer += chunk.toString('utf8');
          let end: number;
          while ((end = buffer.indexOf('\n\n')) >= 0) {
            const block = buffer.slice(0, end);
            buffer = buffer.slice(end + 2);
            const data = /^data: (.*)$/m.exec(block)?.[1];
            if (!data) continue;
            const event = JSON.parse(data);
            const s = summaryOf(event);
            process.stdout.write(connection.json ? `${data}\n` : `${s.position}  ${s.recordedAt}  ${s.stream}  ${s.type}  ${s.actor}\n`);
            seen += 1;
            if (count !== undefined && seen >= count) {
              response.body.destroy();
              return exitCodes.ok;
            }
          }
        }
        return exitCodes.ok;
      }
      default:
        throw new UsageError(positionals[0] ? `unknown verb '${positionals[0]}'` : 'missing verb');
    }
  });
}
