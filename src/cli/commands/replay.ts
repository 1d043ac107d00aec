/**
 * `fleet-ledger replay <verb>`: the fleet as of any instant, one node's timeline, and what changed between two points,
 * through the API (analyst, auditor or operator token).
 */
import { request } from 'undici';
import { ApiCallError, callApi, connectionOf, connectionUsage, exitCodes, output, parseCommandArgs, required, runApiCommand, table, UsageError, type ApiConnection } from '../api-client.js';

export const summary = 'time travel: the fleet as of an instant or position, a node timeline, a diff between two points';

const usage = `usage: fleet-ledger replay <verb> [options]

  at WHEN WHAT          the read models as of WHEN (RFC 3339 instant, e.g. 2026-12-01T03:00:00Z, or a log position)
                        WHAT: nodes | dark | alarms | inventory | drift | compliance
  timeline NODE [--from WHEN] [--to WHEN]
                        the node's history in log order, its silences as intervals, every intent with who asked
  diff --from WHEN [--to WHEN]
                        what changed: nodes joined and left, firmware, dark and recovered, drift, alarms, rollout
                        steps, intents with who asked (to: default the head)

  --json                machine-readable output
${connectionUsage}
`;

const options = { from: { type: 'string' }, to: { type: 'string' }, by: { type: 'string' } } as const;

const routes: Record<string, { path: string; columns: string[]; query?: Record<string, string> }> = {
  nodes: { path: '/v1/liveness/nodes', columns: ['nodeId', 'site', 'rack', 'state', 'lastContactAt', 'secondsSinceLastContact'] },
  dark: { path: '/v1/liveness/dark', columns: ['nodeId', 'site', 'rack', 'lastContactAt', 'darkSince', 'secondsSinceLastContact'] },
  alarms: { path: '/v1/alarms', columns: ['alarmId', 'kind', 'severity', 'openedAt', 'summary'] },
  inventory: { path: '/v1/inventory', columns: ['value', 'nodes'] },
  drift: { path: '/v1/drift', columns: ['nodeId', 'field', 'kind', 'declared', 'observed', 'since'] },
  compliance: { path: '/v1/compliance', columns: ['component', 'atBaseline', 'above', 'below', 'unknown'] },
};

/** Every page of a route as of a point, with the position and instant the answer reflects (from its headers). */
async function pagesAsOf(connection: ApiConnection, path: string, query: Record<string, string>): Promise<{ items: Record<string, unknown>[]; position: string; recordedAt: string; dark?: unknown }> {
  const items: Record<string, unknown>[] = [];
  let cursor: string | undefined;
  let position = '';
  let recordedAt = '';
  do {
    const target = new URL(path.replace(/^\//, ''), connection.url.endsWith('/') ? connection.url : `${connection.url}/`);
    for (const [key, value] of Object.entries({ ...query, limit: '1000', ...(cursor ? { cursor } : {}) })) target.searchParams.set(key, value);
    let response;
    try {
      response = await request(target, { headers: connection.token ? { authorization: `Bearer ${connection.token}` } : {} });
    } catch (error) {
      throw new ApiCallError(0, 'CLI_UNREACHABLE', `cannot reach ${target.origin}: ${error instanceof Error ? error.message : String(error)}`, {});
    }
    const body = (await response.body.json()) as any;
    if (response.statusCode >= 400) throw new ApiCallError(response.statusCode, body?.error?.code ?? `HTTP_${response.statusCode}`, body?.error?.message ?? 'failed', body?.error?.details ?? {});
    position = String(response.headers['fleet-ledger-as-of-position'] ?? '');
    recordedAt = String(response.headers['fleet-ledger-as-of-recorded-at'] ?? '');
    const page = Array.isArray(body.items) ? body.items : Array.isArray(body) ? body : [body];
    items.push(...page);
    cursor = body.nextCursor ?? undefined;
  } while (cursor);
  return { items, position, recordedAt };
}

const short = (value: string | null | undefined): string => (value ? value.replace('T', ' ').replace(/\.\d+Z$/, 'Z') : 'now');

function minutes(from: string, to: string | null): string {
  const ms = (to ? Date.parse(to) : Date.now()) - Date.parse(from);
  return ms < 120_000 ? `${Math.round(ms / 1000)} s` : ms < 7_200_000 ? `${Math.round(ms / 60_000)} min` : `${(ms / 3_600_000).toFixed(1)} h`;
}

export function run(argv: string[]): Promise<number> {
  return runApiCommand('replay', usage, argv, async () => {
    const { values, positionals } = parseCommandArgs(argv, options);
    if (values.help) {
      process.stdout.write(usage);
      return exitCodes.ok;
    }
    const connection = connectionOf(values);
    switch (positionals[0]) {
      case 'at': {
        const when = required(positionals, 1, 'WHEN');
        const what = required(positionals, 2, 'WHAT');
        const route = routes[what];
        if (!route) throw new UsageError(`WHAT must be one of ${Object.keys(routes).join(', ')}, got '${what}'`);
        const answer = await pagesAsOf(connection, route.path, { asOf: when, ...(values.by ? { by: values.by } : {}) });
        output(connection, { asOf: { position: Number(answer.position), recordedAt: answer.recordedAt }, items: answer.items }, () => `${what} as of position ${answer.position} (${answer.recordedAt}): ${answer.items.length} rows\n${table(answer.items, route.columns)}`);
        return exitCodes.ok;
      }
      case 'timeline': {
        const nodeId = required(positionals, 1, 'NODE');
        const timeline = await callApi(connection, `/v1/history/nodes/${encodeURIComponent(nodeId)}/timeline`, { query: { from: values.from, to: values.to } });
        output(connection, timeline, () => {
          const lines = timeline.entries.map((e: any) => `${String(e.position).padStart(9)}  ${short(e.recordedAt)}  ${e.summary}${e.actor ? `  (by ${e.actor.id})` : ''}`);
          const silences = timeline.silences.map((s: any) => `  ${s.wentDark ? 'dark' : 'late'} ${short(s.from)} -> ${s.to ? short(s.to) : 'still silent'} (${minutes(s.from, s.to)}, ${s.misses} misses${s.endedBy ? `, ended by ${s.endedBy}` : ''})`);
          return `${nodeId} through position ${timeline.through.position}: ${timeline.entries.length} events\n${lines.join('\n')}\nsilences (${silences.length}):\n${silences.join('\n') || '  none'}\n`;
        });
        return exitCodes.ok;
      }
      case 'diff': {
        if (!values.from) throw new UsageError('diff needs --from WHEN (and optionally --to WHEN)');
        const diff = await callApi(connection, '/v1/history/diff', { query: { from: values.from, to: values.to } });
        output(connection, diff, () => {
          const out: string[] = [`from position ${diff.from.position} (${short(diff.from.recordedAt)}) to ${diff.to.position} (${short(diff.to.recordedAt)})`];
          const section = (title: string, rows: string[]): void => void out.push(`${title} (${rows.length})${rows.length ? `\n  ${rows.slice(0, 200).join('\n  ')}${rows.length > 200 ? `\n  ... ${rows.length - 200} more (--json for all)` : ''}` : ''}`);
          section('joined', diff.joined);
          section('left', diff.left);
          section('firmware changed', diff.firmwareChanged.map((f: any) => `${f.nodeId} ${f.component} ${f.from ?? '(none)'} -> ${f.to}`));
          section('went dark', diff.wentDark.map((d: any) => `${d.nodeId} dark ${short(d.since)} -> ${d.recoveredAt ? `recovered ${short(d.recoveredAt)} (${minutes(d.since, d.recoveredAt)})` : 'still dark'}`));
          section('recovered', diff.recovered.map((d: any) => `${d.nodeId} dark since ${short(d.since)}, back ${short(d.recoveredAt)} (${minutes(d.since, d.recoveredAt)})`));
          section('drift opened', diff.driftOpened.map((d: any) => `${d.nodeId} ${d.field}: declared ${d.declared ?? '-'}, observed ${d.observed ?? '-'}`));
          section('drift closed', diff.driftClosed.map((d: any) => `${d.nodeId} ${d.field}`));
          section('alarms opened', diff.alarmsOpened.map((a: any) => `${a.alarmId} ${a.kind} (${a.status}): ${a.summary}`));
          section('alarms closed', diff.alarmsClosed.map((a: any) => `${a.alarmId} ${a.kind}: ${a.summary}`));
          section('rollout steps', diff.rolloutSteps.map((s: any) => `${s.position} ${s.stream} ${s.summary}`));
          section('intents', diff.intents.map((i: any) => `${i.position} ${short(i.recordedAt)} by ${i.by} (${i.role ?? 'operator'}): ${i.summary}`));
          return `${out.join('\n')}\n`;
        });
        return exitCodes.ok;
      }
      default:
        throw new UsageError(positionals[0] ? `unknown verb '${positionals[0]}'` : 'missing verb');
    }
  });
}
