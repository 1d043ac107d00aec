/** `fleet-ledger alarms <verb>`: open alarms with their blast radius, one alarm, and acknowledging one, through the API. */
import { callAllPages, callApi, connectionOf, connectionUsage, exitCodes, output, parseCommandArgs, required, runApiCommand, table, UsageError } from '../api-client.js';

export const summary = 'open alarms (root causes fold the node alarms they explain), one alarm, acknowledge, through the API';

const usage = `usage: fleet-ledger alarms <verb> [options]

  list [--kind K] [--all]     open alarms; --all lists node alarms folded under a root cause too
  show ALARM_ID               one alarm with the alarms folded under it
  ack ALARM_ID [--note TEXT]  acknowledge (operator)

  --idempotency-key KEY   retrying with the same key returns the original position
${connectionUsage}
`;

const options = { kind: { type: 'string' }, all: { type: 'boolean', default: false }, note: { type: 'string' }, 'idempotency-key': { type: 'string' } } as const;

export function run(argv: string[]): Promise<number> {
  return runApiCommand('alarms', usage, argv, async () => {
    const { values, positionals } = parseCommandArgs(argv, options);
    if (values.help) {
      process.stdout.write(usage);
      return exitCodes.ok;
    }
    const connection = connectionOf(values);
    switch (positionals[0]) {
      case 'list': {
        const rows = await callAllPages(connection, '/v1/alarms', { kind: values.kind, includeFolded: values.all ? 'true' : undefined, limit: 1000 });
        output(connection, rows, () => table(rows.map((a) => ({ ...a, folded: a.folded.length })), ['alarmId', 'kind', 'severity', 'openedAt', 'folded', 'acknowledgedBy', 'summary']));
        return exitCodes.ok;
      }
      case 'show': {
        const alarm = await callApi(connection, `/v1/alarms/${encodeURIComponent(required(positionals, 1, 'ALARM_ID'))}`);
        output(connection, alarm, () => `${alarm.alarmId} ${alarm.status} ${alarm.kind} (${alarm.severity}) opened ${alarm.openedAt}\n  ${alarm.summary}\n${alarm.children.length ? `  folds ${alarm.children.length}: ${alarm.children.map((c: any) => c.nodeId ?? c.alarmId).join(', ')}\n` : ''}`);
        return exitCodes.ok;
      }
      case 'ack': {
        const alarmId = required(positionals, 1, 'ALARM_ID');
        const answer = await callApi(connection, `/v1/alarms/${encodeURIComponent(alarmId)}/ack`, {
          method: 'POST',
          body: values.note ? { note: values.note } : {},
          ...(values['idempotency-key'] ? { headers: { 'idempotency-key': values['idempotency-key'] } } : {}),
        });
        output(connection, answer, () =>
          answer.unchanged === true
            ? `${alarmId} already acknowledged (position ${answer.position}): nothing recorded\n`
            : `acknowledged ${alarmId}: position ${answer.position}${answer.idempotentReplay ? ' (already recorded)' : ''}\n`,
        );
        return exitCodes.ok;
      }
      default:
        throw new UsageError(positionals[0] ? `unknown verb '${positionals[0]}'` : 'missing verb');
    }
  });
}
