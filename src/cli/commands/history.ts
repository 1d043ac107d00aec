/**
 * `fleet-ledger history NODE [--from WHEN] [--to WHEN]`: one node's liveness states, observed inventory and alarms as
 * intervals, through the API (`GET /v1/nodes/{nodeId}/history`), printed for an operator or, with --json, as answered.
 */
import { callApi, connectionOf, connectionUsage, exitCodes, output, parseCommandArgs, required, runApiCommand, table } from '../api-client.js';

export const summary = "one node's history as intervals: liveness states, observed inventory and alarms, through the API";

const usage = `usage: fleet-ledger history NODE [--from WHEN] [--to WHEN] [--json]

  one node's liveness states, observed inventory and alarms as intervals (when each began and ended, and the log
  positions of the versions behind it), those overlapping the window

  --from WHEN    start of the window, an RFC 3339 instant (default: the beginning)
  --to WHEN      end of the window, an RFC 3339 instant (default: now)
${connectionUsage}
`;

const options = { from: { type: 'string' }, to: { type: 'string' } } as const;

const until = (to: string | null): string => to ?? 'now';

export function run(argv: string[]): Promise<number> {
  return runApiCommand('history', usage, argv, async () => {
    const { values, positionals } = parseCommandArgs(argv, options);
    if (values.help) {
      process.stdout.write(usage);
      return exitCodes.ok;
    }
    const connection = connectionOf(values);
    const nodeId = required(positionals, 0, 'NODE');
    const history = await callApi(connection, `/v1/nodes/${encodeURIComponent(nodeId)}/history`, { query: { from: values.from, to: values.to } });
    output(connection, history, () =>
      [
        `${history.nodeId} from ${history.from} to ${history.to}`,
        `liveness: ${history.liveness.length}`,
        table(history.liveness.map((i: any) => ({ ...i, to: until(i.to), positions: `${i.fromPosition}..${i.toPosition ?? ''}` })), ['from', 'to', 'state', 'rack', 'darkSince', 'positions']),
        `inventory: ${history.inventory.length}`,
        table(history.inventory.map((i: any) => ({ ...i, to: until(i.to), positions: `${i.fromPosition}..${i.toPosition ?? ''}` })), ['from', 'to', 'manufacturer', 'model', 'bmcFirmware', 'biosVersion', 'positions']),
        `alarms: ${history.alarms.length}`,
        table(history.alarms.map((a: any) => ({ ...a, closedAt: a.closedAt ?? 'open' })), ['openedAt', 'closedAt', 'kind', 'severity', 'alarmId', 'summary']),
        '',
      ].join('\n'),
    );
    return exitCodes.ok;
  });
}
