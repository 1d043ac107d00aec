/** `fleet-ledger provision <verb>`: provision registered nodes (validate, firmware baseline, burn-in), through the API. */
import { callApi, connectionOf, durationMs, connectionUsage, exitCodes, output, parseCommandArgs, required, runApiCommand, table, UsageError } from '../api-client.js';

export const summary = 'provisioning: start (BOM validation, firmware baseline, burn-in), status, release from quarantine, abandon';

const usage = `usage: fleet-ledger provision <verb> [options]

  start NODE [--model M] [--manufacturer M] [--cpus N] [--gpus N] [--memory-gib N]
             [--baseline COMPONENT=VERSION@IMAGE_URI ...] [--burn-in 1h] [--burn-in-interval 1m]
  status [NODE]                       every node being provisioned, or one
  release NODE --at STAGE --reason T  re-enter at registering|inventorying|validating|baselining|burn-in
  abandon NODE --reason TEXT          final
${connectionUsage}
`;

const options = {
  model: { type: 'string' },
  manufacturer: { type: 'string' },
  cpus: { type: 'string' },
  gpus: { type: 'string' },
  'memory-gib': { type: 'string' },
  baseline: { type: 'string', multiple: true },
  'burn-in': { type: 'string' },
  'burn-in-interval': { type: 'string' },
  at: { type: 'string' },
  reason: { type: 'string' },
} as const;


function describe(node: any): string {
  const baseline = (node.baseline as Array<{ component: string; version: string; outcome: string | null }>).map((b) => `${b.component} ${b.version}: ${b.outcome ?? '-'}`).join(', ');
  return `${node.nodeId}  ${node.stage}${node.quarantine ? ` at ${node.quarantine.stage}: ${node.quarantine.reason}` : ''}${baseline ? `\n  baseline: ${baseline}` : ''}${node.burnInUntil ? `\n  burn-in until ${node.burnInUntil}` : ''}\n`;
}

export function run(argv: string[]): Promise<number> {
  return runApiCommand('provision', usage, argv, async () => {
    const { values, positionals } = parseCommandArgs(argv, options);
    if (values.help) {
      process.stdout.write(usage);
      return exitCodes.ok;
    }
    const connection = connectionOf(values);
    switch (positionals[0]) {
      case 'start': {
        const nodeId = required(positionals, 1, 'NODE');
        const baseline = (values.baseline ?? []).map((entry) => {
          const match = /^([^=]+)=([^@]+)@(.+)$/.exec(entry);
          if (!match) throw new UsageError(`--baseline ${entry}: use COMPONENT=VERSION@IMAGE_URI`);
          return { component: match[1]!, version: match[2]!, imageUri: match[3]! };
        });
        const number = (text: string | undefined, name: string) => {
          if (text === undefined) return undefined;
          const value = Number(text);
          if (!Number.isFinite(value) || value < 0) throw new UsageError(`--${name} must be a number, got ${text}`);
          return value;
        };
        const declared = Object.fromEntries(
          Object.entries({ model: values.model, manufacturer: values.manufacturer, cpuCount: number(values.cpus, 'cpus'), gpuCount: number(values.gpus, 'gpus'), memoryGiB: number(values['memory-gib'], 'memory-gib') }).filter(([, value]) => value !== undefined),
        );
        const body = { nodeId, declared, baseline, ...(values['burn-in'] ? { burnInMs: durationMs(values['burn-in']) } : {}), ...(values['burn-in-interval'] ? { burnInIntervalMs: durationMs(values['burn-in-interval']) } : {}) };
        const node = await callApi(connection, '/v1/provisioning', { method: 'POST', body });
        output(connection, node, () => describe(node));
        return exitCodes.ok;
      }
      case 'status': {
        const nodeId = positionals[1];
        if (nodeId) {
          const node = await callApi(connection, `/v1/provisioning/${encodeURIComponent(nodeId)}`);
          output(connection, node, () => describe(node));
        } else {
          const { items } = await callApi(connection, '/v1/provisioning');
          output(connection, items, () => table(items.map((n: any) => ({ nodeId: n.nodeId, stage: n.stage, quarantine: n.quarantine ? `${n.quarantine.stage}: ${n.quarantine.reason}` : '' })), ['nodeId', 'stage', 'quarantine']));
        }
        return exitCodes.ok;
      }
      case 'release': {
        const nodeId = required(positionals, 1, 'NODE');
        if (!values.at || !values.reason) throw new UsageError('--at STAGE and --reason are required');
        const node = await callApi(connection, `/v1/provisioning/${encodeURIComponent(nodeId)}/release`, { method: 'POST', body: { resumeAt: values.at, reason: values.reason } });
        output(connection, node, () => describe(node));
        return exitCodes.ok;
      }
      case 'abandon': {
        const nodeId = required(positionals, 1, 'NODE');
        if (!values.reason) throw new UsageError('--reason is required');
        const node = await callApi(connection, `/v1/provisioning/${encodeURIComponent(nodeId)}/abandon`, { method: 'POST', body: { reason: values.reason } });
        output(connection, node, () => describe(node));
        return exitCodes.ok;
      }
      default:
        throw new UsageError(positionals[0] ? `unknown verb '${positionals[0]}'` : 'missing verb');
    }
  });
}
