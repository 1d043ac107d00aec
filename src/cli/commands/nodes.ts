/**
 * `fleet-ledger nodes <verb>`: operator intents about nodes, racks and the EBOM, and a node's current view,
 * through the HTTP API (see src/api/README.md).
 */
import { extname } from 'node:path';
import { readFileArgument } from '../file-argument.js';
import { callAllPages, callApi, connectionOf, connectionUsage, exitCodes, output, parseCommandArgs, required, runApiCommand, table, UsageError, type ApiConnection } from '../api-client.js';

export const summary = 'node intents (register, cordon, quarantine, maintenance, ...) and node views, through the API';

const usage = `usage: fleet-ledger nodes <verb> [arguments] [options]

  register NODE --site S --rack R --bmc URL --credential-ref REF [--protocol redfish|ipmi|snmp] [--session-limit N] [--interval S]
  decommission NODE --reason TEXT
  cordon NODE --reason TEXT          uncordon NODE [--reason TEXT]
  quarantine NODE --reason TEXT      release NODE [--reason TEXT]
  maintenance NODE --from ISO --until ISO --reason TEXT
  clear-latch NODE --reason TEXT
  accept-certificate NODE --fingerprint SHA256 --reason TEXT   pin the BMC's new certificate, lift its latch
  topology RACK --site S [--pdu P]... [--tor T]... [--cdu C]
  import-ebom FILE [--format csv|json] [--import-id ID]
  show NODE                          liveness, inventory, drift and alarms of one node
  list [--state S] [--site S] [--rack R] [--latched] [--limit N]   (the default: fleet-ledger nodes lists every node;
                                     --latched: only BMCs whose logins the lockout latch holds, for clear-latch)

  --idempotency-key KEY   retrying with the same key returns the original position
${connectionUsage}
`;

const options = {
  site: { type: 'string' },
  rack: { type: 'string' },
  bmc: { type: 'string' },
  'credential-ref': { type: 'string' },
  protocol: { type: 'string', default: 'redfish' },
  'session-limit': { type: 'string' },
  interval: { type: 'string' },
  reason: { type: 'string' },
  fingerprint: { type: 'string' },
  from: { type: 'string' },
  until: { type: 'string' },
  pdu: { type: 'string', multiple: true },
  tor: { type: 'string', multiple: true },
  cdu: { type: 'string' },
  format: { type: 'string' },
  'import-id': { type: 'string' },
  state: { type: 'string' },
  limit: { type: 'string' },
  latched: { type: 'boolean', default: false },
  'idempotency-key': { type: 'string' },
} as const;

function positiveInt(value: string | undefined, name: string): number | undefined {
  if (value === undefined) return undefined;
  const number = Number(value);
  if (!Number.isInteger(number) || number < 1) throw new UsageError(`--${name} must be a positive integer`);
  return number;
}

function need(value: string | undefined, name: string): string {
  if (!value) throw new UsageError(`--${name} is required`);
  return value;
}

function printIntent(connection: ApiConnection, answer: { position: number; stream: string; streamVersion: number; idempotentReplay: boolean; unchanged?: boolean }, what: string): number {
  // An intent that changed nothing is said so, as `kubectl cordon` says "already cordoned".
  output(connection, answer, () =>
    answer.unchanged === true
      ? `${what}: already so since position ${answer.position} (${answer.stream} v${answer.streamVersion}): nothing recorded\n`
      : `${what}: recorded at position ${answer.position} (${answer.stream} v${answer.streamVersion})${answer.idempotentReplay ? ', already recorded before' : ''}\n`,
  );
  return exitCodes.ok;
}

export function run(argv: string[]): Promise<number> {
  return runApiCommand('nodes', usage, argv, async () => {
    const { values, positionals } = parseCommandArgs(argv, options);
    if (values.help) {
      process.stdout.write(usage);
      return exitCodes.ok;
    }
    const connection = connectionOf(values);
    const [verb] = positionals;
    const headers = values['idempotency-key'] ? { 'idempotency-key': values['idempotency-key'] } : undefined;
    const post = (path: string, body: unknown) => callApi(connection, path, { method: 'POST', body, ...(headers ? { headers } : {}) });
    switch (verb ?? 'list') {
      case 'register': {
        const nodeId = required(positionals, 1, 'NODE');
        const sessionLimit = positiveInt(values['session-limit'], 'session-limit');
        const interval = positiveInt(values.interval, 'interval');
        const body = {
          nodeId,
          site: need(values.site, 'site'),
          rack: need(values.rack, 'rack'),
          bmc: { protocol: values.protocol, address: need(values.bmc, 'bmc'), credentialRef: need(values['credential-ref'], 'credential-ref'), ...(sessionLimit ? { sessionLimit } : {}) },
          ...(interval ? { expectedIntervalS: interval } : {}),
        };
        return printIntent(connection, await post('/v1/nodes', body), `registered ${nodeId}`);
      }
      case 'decommission':
      case 'cordon':
      case 'quarantine':
      case 'clear-latch':
      case 'uncordon':
      case 'release': {
        const nodeId = required(positionals, 1, 'NODE');
        const reasonRequired = verb !== 'uncordon' && verb !== 'release';
        const reason = reasonRequired ? need(values.reason, 'reason') : values.reason;
        return printIntent(connection, await post(`/v1/nodes/${encodeURIComponent(nodeId)}/${verb}`, reason ? { reason } : {}), `${verb} ${nodeId}`);
      }
      case 'accept-certificate': {
        const nodeId = required(positionals, 1, 'NODE');
        // As `openssl x509 -fingerprint -sha256` prints it (colons, upper case) or as the ledger records it.
        const fingerprint = need(values.fingerprint, 'fingerprint').replace(/:/g, '').toLowerCase();
        if (!/^[0-9a-f]{64}$/.test(fingerprint)) throw new UsageError('--fingerprint must be a SHA-256 fingerprint (64 hex digits, colons allowed)');
        const body = { fingerprint, reason: need(values.reason, 'reason') };
        return printIntent(connection, await post(`/v1/nodes/${encodeURIComponent(nodeId)}/accept-certificate`, body), `certificate ${fingerprint.slice(0, 16)}… accepted for ${nodeId}`);
      }
      case 'maintenance': {
        const nodeId = required(positionals, 1, 'NODE');
        const body = { from: need(values.from, 'from'), until: need(values.until, 'until'), reason: need(values.reason, 'reason') };
        return printIntent(connection, await post(`/v1/nodes/${encodeURIComponent(nodeId)}/maintenance`, body), `maintenance window for ${nodeId}`);
      }
      case 'topology': {
        const rack = required(positionals, 1, 'RACK');
        const body = { site: need(values.site, 'site'), pdu: values.pdu ?? [], tor: values.tor ?? [], ...(values.cdu ? { cdu: values.cdu } : {}) };
        return printIntent(connection, await post(`/v1/racks/${encodeURIComponent(rack)}/topology`, body), `topology of rack ${rack}`);
      }
      case 'import-ebom': {
        const file = required(positionals, 1, 'FILE');
        const format = values.format ?? (extname(file).toLowerCase() === '.json' ? 'json' : 'csv');
        if (format !== 'csv' && format !== 'json') throw new UsageError('--format is csv or json');
        const text = readFileArgument(file, { option: 'FILE', what: 'EBOM file' });
        const answer = await callApi(connection, '/v1/ebom', {
          method: 'POST',
          rawBody: { text, contentType: format === 'json' ? 'application/json' : 'text/csv' },
          query: { source: file, importId: values['import-id'] },
        });
        output(connection, answer, () => `EBOM ${answer.importId}: ${answer.rows} rows ${answer.idempotentReplay ? 'were already imported' : `imported, last at position ${answer.position}`}\n`);
        return exitCodes.ok;
      }
      case 'show': {
        const nodeId = required(positionals, 1, 'NODE');
        const view = await callApi(connection, `/v1/nodes/${encodeURIComponent(nodeId)}`);
        output(connection, view, () => {
          const l = view.liveness;
          const i = view.inventory;
          return [
            `node ${view.nodeId}`,
            l ? `  liveness   ${l.state}, site ${l.site ?? '-'} rack ${l.rack ?? '-'}, last contact ${l.lastContactAt ?? 'never'}${l.secondsSinceLastContact !== null ? ` (${Math.round(l.secondsSinceLastContact)} s ago)` : ''}, ${l.gapCount} gaps` : '  liveness   -',
            ...(l?.latched ? [`  latched    BMC logins held by the lockout latch (once the credentials are fixed: fleet-ledger nodes clear-latch ${view.nodeId} --reason TEXT)`] : []),
            i ? `  inventory  ${i.manufacturer ?? '-'} ${i.model ?? '-'} serial ${i.serial ?? '-'}, BMC ${i.bmcFirmware ?? '-'}, BIOS ${i.biosVersion ?? '-'}, GPUs ${i.gpuCount ?? '-'} ${i.gpuModel ?? ''}` : '  inventory  not observed yet',
            `  drift      ${view.drift.length === 0 ? 'none' : view.drift.map((d: any) => `${d.field} ${d.kind} (declared ${d.declared ?? '-'}, observed ${d.observed ?? '-'})`).join('; ')}`,
            `  alarms     ${view.alarms.length === 0 ? 'none' : view.alarms.map((a: any) => `${a.status} ${a.kind}: ${a.summary}`).join('; ')}`,
            '',
          ].join('\n');
        });
        return exitCodes.ok;
      }
      case 'list': {
        const limit = positiveInt(values.limit, 'limit') ?? 100_000;
        const nodes = await callAllPages(connection, '/v1/liveness/nodes', { state: values.state, site: values.site, rack: values.rack, latched: values.latched ? 'true' : undefined, limit: Math.min(limit, 5000) }, limit);
        output(connection, nodes, () => table(nodes, ['nodeId', 'site', 'rack', 'state', 'lastContactAt', 'secondsSinceLastContact', 'gapCount', 'latched']));
        return exitCodes.ok;
      }
      default:
        throw new UsageError(verb ? `unknown verb '${verb}'` : 'missing verb');
    }
  }, 'run');
}
