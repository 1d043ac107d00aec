/**
 * `fleet-ledger agent`: the in-band GPU agent. Runs `nvidia-smi` and reads the kernel log on this machine, then
 * POSTs the observations to a ledger (`POST <url>/v1/observations`, see src/drivers/README.md for the body).
 * Without `--url` it prints them. On a machine without an NVIDIA GPU it says so and exits 3.
 */
import { createHash } from 'node:crypto';
import { hostname } from 'node:os';
import { request } from 'undici';
import { collectGpuObservations, isDriverError } from '../../drivers/index.js';
import { parseCommand } from '../parse-command.js';

export const summary = 'collect in-band GPU signals (nvidia-smi, XIDs) and POST them to a ledger';

const usage = `usage: fleet-ledger agent [--url URL --token TOKEN] [--node ID] [--kernel-log FILE] [--nvidia-smi PATH] [--json]

  --url          ledger base URL; observations are POSTed to <url>/v1/observations
  --token        bearer token for the ledger (also FLEET_LEDGER_TOKEN)
  --node         node id to report as (default: this host's name)
  --kernel-log   read XIDs from this file instead of running dmesg
  --nvidia-smi   path of nvidia-smi (default: on PATH)
  --json         print the observations (default when --url is absent)
`;

/** Exit codes: 0 sent/printed, 1 collection or POST failed, 2 usage, 3 no GPU / no NVIDIA driver here. */
export async function run(argv: string[]): Promise<number> {
  const parsed = parseCommand('agent', argv, {
    url: { type: 'string' },
    token: { type: 'string' },
    node: { type: 'string' },
    'kernel-log': { type: 'string' },
    'nvidia-smi': { type: 'string' },
    json: { type: 'boolean', default: false },
  }, usage, false, { 'kernel-log': { kind: 'file', what: 'kernel log file' } });
  // --nvidia-smi is not checked as a file: a missing tool means no NVIDIA driver here, which exits 3 (no GPU to report).
  if (typeof parsed === 'number') return parsed;
  const { values } = parsed;
  let result;
  try {
    result = await collectGpuObservations({
      ...(values['nvidia-smi'] ? { nvidiaSmi: values['nvidia-smi'] } : {}),
      ...(values['kernel-log'] ? { kernelLogFile: values['kernel-log'] } : {}),
    });
  } catch (error) {
    if (isDriverError(error) && (error.code === 'DRIVER_TOOL_MISSING' || error.code === 'DRIVER_NO_DEVICE')) {
      process.stderr.write(`agent: no GPU to report on this machine: ${error.message}\n`);
      return 3;
    }
    process.stderr.write(`agent: ${isDriverError(error) ? `${error.code}: ` : ''}${error instanceof Error ? error.message : String(error)}\n`);
    return 1;
  }
  for (const note of result.notes) process.stderr.write(`agent: note: ${note}\n`);
  const body = { nodeId: values.node ?? hostname(), source: 'agent', observations: result.observations };
  if (!values.url || values.json) process.stdout.write(`${JSON.stringify(body, null, 2)}\n`);
  if (!values.url) return 0;
  const token = values.token ?? process.env.FLEET_LEDGER_TOKEN;
  try {
    const target = new URL('v1/observations', values.url.endsWith('/') ? values.url : `${values.url}/`);
    const response = await request(target, {
      method: 'POST',
      // The key is the content's digest: the same report sent again (a retry after a timeout, a rerun) is answered
      // as a replay instead of being recorded twice.
      headers: {
        'content-type': 'application/json',
        'idempotency-key': `agent-${createHash('sha256').update(JSON.stringify(body)).digest('hex').slice(0, 40)}`,
        ...(token ? { authorization: `Bearer ${token}` } : {}),
      },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(15_000),
    });
    const text = await response.body.text();
    if (response.statusCode < 200 || response.statusCode >= 300) {
      process.stderr.write(`agent: ledger answered ${response.statusCode}: ${text.slice(0, 300)}\n`);
      return 1;
    }
    process.stderr.write(`agent: sent ${result.observations.length} observations to ${target.toString()}\n`);
    return 0;
  } catch (error) {
    process.stderr.write(`agent: cannot POST to the ledger: ${error instanceof Error ? error.message : String(error)}\n`);
    return 1;
  }
}
