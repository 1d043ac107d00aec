/** `fleet-ledger query <what>`: the read models through the API, as tables or JSON. */
import { callAllPages, callApi, connectionOf, connectionUsage, exitCodes, output, parseCommandArgs, required, runApiCommand, table, UsageError } from '../api-client.js';

export const summary = 'query the fleet through the API: liveness, dark nodes, gaps, inventory, heterogeneity, drift, compliance';

const usage = `usage: fleet-ledger query <what> [options]

  liveness                       how many nodes in each liveness state
  dark                           dark nodes, longest dark first, with time since last contact
  overdue [--intervals N]        nodes silent for N expected intervals (default 3), whatever their state
  gaps (--node N | --rack R) [--from ISO] [--to ISO]
  inventory [--by manufacturer|model|bmc_firmware|bios_version|gpu_model|gpu_count|site|rack|dialect]
  inventory-nodes [--manufacturer M] [--model M] [--site S] [--rack R]
  heterogeneity                  every (vendor, model, component, version) with its node count
  firmware COMPONENT             node counts per running version of one component
  drift [--node N] [--kind missing|unexpected|mismatch]
  compliance [--component C] [--nodes]
  push --node N                  the node's push: stream held or polled after a gap, since when, its push gaps
  ready                          the API's readiness (/readyz)

  --limit N   at most N rows (default: all)
${connectionUsage}
`;

const options = {
  node: { type: 'string' },
  rack: { type: 'string' },
  site: { type: 'string' },
  from: { type: 'string' },
  to: { type: 'string' },
  by: { type: 'string' },
  manufacturer: { type: 'string' },
  model: { type: 'string' },
  kind: { type: 'string' },
  component: { type: 'string' },
  nodes: { type: 'boolean', default: false },
  limit: { type: 'string' },
  intervals: { type: 'string' },
} as const;

const round = (value: unknown) => (typeof value === 'number' ? Math.round(value) : value);

export function run(argv: string[]): Promise<number> {
  return runApiCommand('query', usage, argv, async () => {
    const { values, positionals } = parseCommandArgs(argv, options);
    if (values.help) {
      process.stdout.write(usage);
      return exitCodes.ok;
    }
    const connection = connectionOf(values);
    const max = values.limit !== undefined ? Number(values.limit) : 1_000_000;
    if (!Number.isInteger(max) || max < 1) throw new UsageError('--limit must be a positive integer');
    const list = (path: string, query: Record<string, string | undefined> = {}) => callAllPages(connection, path, { ...query, limit: Math.min(max, 5000) }, max);
    const [what] = positionals;
    switch (what) {
      case 'liveness': {
        const answer = await callApi(connection, '/v1/liveness/summary');
        output(connection, answer, () => table(Object.entries(answer.states).map(([state, nodes]) => ({ state, nodes })), ['state', 'nodes']));
        return exitCodes.ok;
      }
      case 'dark': {
        const rows = await list('/v1/liveness/dark');
        output(connection, rows, () => table(rows.map((r) => ({ ...r, secondsSinceLastContact: round(r.secondsSinceLastContact) })), ['nodeId', 'site', 'rack', 'darkSince', 'lastContactAt', 'secondsSinceLastContact', 'consecutiveMisses']));
        return exitCodes.ok;
      }
      case 'overdue': {
        const rows = await list('/v1/liveness/overdue', { intervals: values.intervals });
        output(connection, rows, () => table(rows.map((r) => ({ ...r, secondsSinceLastContact: round(r.secondsSinceLastContact) })), ['nodeId', 'site', 'rack', 'state', 'lastContactAt', 'secondsSinceLastContact']));
        return exitCodes.ok;
      }
      case 'gaps': {
        if (!values.node === !values.rack) throw new UsageError('give exactly one of --node and --rack');
        const rows = await list('/v1/liveness/gaps', { nodeId: values.node, rack: values.rack, from: values.from, to: values.to });
        output(connection, rows, () => table(rows.map((g) => ({ ...g, endAt: g.endAt ?? '(open)' })), ['nodeId', 'rack', 'startAt', 'endAt', 'misses', 'wentDark']));
        return exitCodes.ok;
      }
      case 'inventory': {
        const rows = await list('/v1/inventory', { by: values.by });
        output(connection, rows, () => table(rows, ['value', 'nodes']));
        return exitCodes.ok;
      }
      case 'inventory-nodes': {
        const rows = await list('/v1/inventory/nodes', { manufacturer: values.manufacturer, model: values.model, site: values.site, rack: values.rack });
        output(connection, rows, () => table(rows, ['nodeId', 'site', 'rack', 'manufacturer', 'model', 'serial', 'bmcFirmware', 'biosVersion', 'gpuCount', 'gpuModel']));
        return exitCodes.ok;
      }
      case 'heterogeneity': {
        const rows = await list('/v1/inventory/heterogeneity');
        // A component can be on record before its node's identity (the read that carried the identity failed or
        // has not come round yet): the report joins the node's identity as it is now, and says so when there is none.
        const labelled = rows.map((row: Record<string, unknown>) =>
          row['manufacturer'] == null && row['model'] == null ? { ...row, manufacturer: '(identity not read yet)', model: '' } : row,
        );
        output(connection, rows, () => table(labelled, ['manufacturer', 'model', 'component', 'version', 'nodes', 'firstSeenAt']));
        return exitCodes.ok;
      }
      case 'firmware': {
        const component = required(positionals, 1, 'COMPONENT');
        const rows = await list(`/v1/inventory/firmware/${encodeURIComponent(component)}`);
        output(connection, rows, () => table(rows, ['version', 'nodes', 'firstSeenAt']));
        return exitCodes.ok;
      }
      case 'drift': {
        const rows = await list('/v1/drift', { nodeId: values.node, kind: values.kind });
        output(connection, rows, () => table(rows, ['nodeId', 'field', 'kind', 'declared', 'observed', 'since']));
        return exitCodes.ok;
      }
      case 'compliance': {
        if (values.nodes) {
          const rows = await list('/v1/compliance/nodes', { component: values.component });
          output(connection, rows, () => table(rows, ['nodeId', 'component', 'declared', 'observed', 'status']));
        } else {
          const rows = await list('/v1/compliance');
          output(connection, rows, () => table(rows, ['component', 'atBaseline', 'above', 'below', 'unknown']));
        }
        return exitCodes.ok;
      }
      case 'push': {
        if (!values.node) throw new UsageError('give --node');
        const answer = await callApi(connection, `/v1/nodes/${encodeURIComponent(values.node)}/push`);
        output(connection, answer, () => `${answer.nodeId}: ${answer.status}${answer.since ? ` since ${answer.since}` : ''}, heartbeat ${answer.heartbeatMs ?? 'none'}, ${answer.streamsOpened} streams opened, ${answer.eventsPushed} events pushed\n${table(answer.gaps, ['kind', 'since', 'detectedAt', 'detail'])}`);
        return exitCodes.ok;
      }
      case 'ready': {
        const answer = await callApi(connection, '/readyz').catch((error: any) => ({ status: 'not-ready', reasons: [error.message] }));
        output(connection, answer, () => `${answer.status}${answer.reasons.length ? `: ${answer.reasons.join('; ')}` : ''}\n`);
        return answer.status === 'ready' ? exitCodes.ok : exitCodes.error;
      }
      default:
        throw new UsageError(what ? `unknown query '${what}'` : 'missing what to query');
    }
  });
}
