/** `fleet-ledger cluster status`: the processes sharing the database, the shards each polls, leases and hand-overs, and who drives each saga, through the API. */
import { ApiCallError, callApi, connectionOf, connectionUsage, exitCodes, output, parseCommandArgs, runApiCommand, table, UsageError } from '../api-client.js';

export const summary = 'the processes sharing the database: shards each polls, lease epochs and expiries, hand-overs, through the API';

const usage = `usage: fleet-ledger cluster status [options]

  status   every process (alive or not, the shards it holds with their epoch and seconds until the lease
           runs out), then every shard (owner, epoch, state, hand-overs), then every saga (rollouts and
           provisioning: fencing epoch, who took it, whether a process drives it now); any process's API answers for all
${connectionUsage}
`;

interface HeldShard {
  shard: string;
  epoch: number;
  expiresInS: number | null;
  state: string;
}

/** Seconds for people: `12s`, `-3s` once past. */
const secondsText = (value: number | null): string => (value === null ? '-' : `${Math.round(value)}s`);

function heldText(shard: HeldShard): string {
  if (shard.state === 'expired') return `${shard.shard} (epoch ${shard.epoch}, expired ${secondsText(-(shard.expiresInS ?? 0))} ago)`;
  return `${shard.shard} (epoch ${shard.epoch}, ${secondsText(shard.expiresInS)})`;
}

function human(status: any): string {
  const at = Date.parse(status.at);
  const processes = table(
    status.processes.map((p: any) => ({
      process: p.processId,
      'host:pid': `${p.host}:${p.pid}`,
      alive: p.alive ? 'yes' : 'no',
      heartbeat: `${secondsText((at - Date.parse(p.heartbeatAt)) / 1000)} ago`,
      api: p.apiUrl,
      'shards held (epoch, expires in)': p.shards.length === 0 ? '(none)' : p.shards.map(heldText).join(', '),
    })),
    ['process', 'host:pid', 'alive', 'heartbeat', 'api', 'shards held (epoch, expires in)'],
  );
  const shards = table(
    status.shards.map((s: any) => ({ ...s, expiresIn: s.state === 'held' || s.state === 'expired' ? secondsText(s.expiresInS) : '-' })),
    ['shard', 'site', 'owner', 'epoch', 'state', 'expiresIn', 'handovers', 'previousOwner', 'targets'],
  );
  const sagas =
    status.sagas.length === 0
      ? '(none)\n'
      : table(
          status.sagas.map((s: any) => ({ saga: s.saga, epoch: s.epoch, 'taken by': s.owner, 'taken at': s.takenAt, driven: s.held ? `yes${s.heldBy ? ` (${s.heldBy})` : ''}` : 'no' })),
          ['saga', 'epoch', 'taken by', 'taken at', 'driven'],
        );
  const answered = status.answeredBy ? `answered by ${status.answeredBy}` : 'answered by a process that polls nothing';
  return `cluster at ${status.at} (database clock), ${answered}\n\nprocesses\n${processes}\nshards\n${shards}\nsagas\n${sagas}`;
}

export function run(argv: string[]): Promise<number> {
  return runApiCommand('cluster', usage, argv, async () => {
    const { values, positionals } = parseCommandArgs(argv, {});
    if (values.help) {
      process.stdout.write(usage);
      return exitCodes.ok;
    }
    const connection = connectionOf(values);
    switch (positionals[0]) {
      case 'status': {
        if (positionals.length > 1) throw new UsageError(`unexpected argument '${positionals[1]}'`);
        let status;
        try {
          status = await callApi(connection, '/v1/cluster');
        } catch (error) {
          if (error instanceof ApiCallError && error.code === 'CLI_UNREACHABLE') {
            throw new ApiCallError(error.status, error.code, `${error.message} (is a fleet-ledger start running there? choose it with --url or FLEET_LEDGER_URL)`, error.details);
          }
          throw error;
        }
        output(connection, status, () => human(status));
        return exitCodes.ok;
      }
      default:
        throw new UsageError(positionals[0] ? `unknown verb '${positionals[0]}'` : 'missing verb');
    }
  });
}
