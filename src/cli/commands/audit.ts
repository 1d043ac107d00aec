/**
 * `fleet-ledger audit <verb>`: the transparency log for auditors. Everything but `verify` goes through the API (auditor
 * token); `verify` reads an export file and needs nothing but the log's public key: no database, no network.
 */
import { createWriteStream } from 'node:fs';
import { pipeline } from 'node:stream/promises';
import { request } from 'undici';
import { verifyConsistency, verifyInclusion } from '../../../replay/merkle/index.js';
import { openCheckpoint } from '../../../replay/audit/index.js';
import { verifyExport } from '../../../replay/audit/index.js';
import { checkReadableFile } from '../file-argument.js';
import { describeFleetReport, fleetExport, siteKeys, verifyFleet } from '../fleet-audit.js';
import { verifierKeyArgument } from '../verifier-key-argument.js';
import { ApiCallError, callApi, connectionOf, connectionUsage, exitCodes, output, parseCommandArgs, required, runApiCommand, UsageError, type ApiConnection } from '../api-client.js';

export const summary = 'the transparency log: signed checkpoints, inclusion and consistency proofs, export, and offline verify';

const usage = `usage: fleet-ledger audit <verb> [options]

  status                          the Merkle tree's size and lag behind the head, the newest checkpoint
  checkpoint                      the newest signed checkpoint (C2SP signed note)
  public-key                      the key that verifies checkpoints (give it to auditors and witnesses)
  prove POSITION [--size N] [--key KEY]
                                  inclusion proof of the event at POSITION in the signed tree of N leaves (default:
                                  the newest checkpoint), checked here against that checkpoint's signed root
  consistency --from M --to N [--key KEY]
                                  consistency proof between two signed checkpoints, checked here against their roots
  export [--from P] [--to Q] --out FILE
                                  the events of [P, Q] in canonical form with the signed checkpoints covering them
                                  (Q rounds up to the next checkpoint)
  verify FILE --key KEY [--since CHECKPOINT]
                                  offline: every hash, the chain, the roots against the signed checkpoints, and
                                  consistency with a checkpoint you kept (a signed note file, or a copy of the
                                  published folder, which names the exact first position that differs). KEY is the
                                  verifier key or a file holding it. Exit 0 when it holds, 1 naming the first bad position.
  fleet-export --out DIR [--sites a,b]
                                  from the centre (--url the centre): each site's log as the centre witnessed it,
                                  one DIR/<site>.export per site (every site by default), each in the format above
  verify-fleet DIR --site-key SITE=KEY [--site-key ...]
                                  offline: each DIR/<site>.export against that site's own key (the key or a file);
                                  a site without a file or a key fails. Exit 0 when every site holds

  --json          machine-readable output
${connectionUsage}
`;

const options = {
  size: { type: 'string' },
  from: { type: 'string' },
  to: { type: 'string' },
  out: { type: 'string' },
  key: { type: 'string' },
  since: { type: 'string' },
  sites: { type: 'string' },
  'site-key': { type: 'string', multiple: true },
} as const;

function positiveInt(text: string | undefined, what: string): number | undefined {
  if (text === undefined) return undefined;
  const value = Number(text);
  if (!Number.isSafeInteger(value) || value < 1) throw new UsageError(`${what} must be a positive integer, got '${text}'`);
  return value;
}

function keyOf(text: string | undefined): string {
  if (!text) throw new UsageError('--key is required: the verifier key (<name>+<id>+<key>) or a file holding it');
  return verifierKeyArgument(text, '--key');
}

const buf = (hex: string): Buffer => Buffer.from(hex, 'hex');

/** The key proofs are checked with: the one the auditor holds (--key), else the server's, said so on stderr. */
async function trustedKey(connection: ApiConnection, given: string | undefined): Promise<string> {
  if (given) return keyOf(given);
  process.stderr.write('note: checking against the public key the server sends; pass --key with the key you hold to check the server too\n');
  return (await callApi<string>(connection, '/v1/audit/public-key')).trim();
}

/** A checkpoint of exactly `size`, its signature checked: proofs are checked against its root. */
async function signedCheckpoint(connection: ApiConnection, key: string, size: number): Promise<ReturnType<typeof openCheckpoint>> {
  const checkpoint = openCheckpoint(await callApi<string>(connection, `/v1/audit/checkpoints/${size}`), key);
  if (checkpoint.size !== size) throw new UsageError(`the server answered a checkpoint of size ${checkpoint.size} for size ${size}`);
  return checkpoint;
}

export function run(argv: string[]): Promise<number> {
  return runApiCommand('audit', usage, argv, async () => {
    const { values, positionals } = parseCommandArgs(argv, options, { out: { kind: 'writable-file', what: 'export file' }, since: { kind: 'file-or-directory', what: 'kept checkpoint' } });
    if (values.help) {
      process.stdout.write(usage);
      return exitCodes.ok;
    }
    const connection = connectionOf(values);
    switch (positionals[0]) {
      case 'status': {
        const status = await callApi(connection, '/v1/audit/status');
        output(connection, status, () =>
          `origin      ${status.origin}\npublic key  ${status.verifierKey}\ntree        ${status.treeSize} leaves, head ${status.headPosition} (lag ${status.lagPositions})\n` +
          `checkpoint  ${status.lastCheckpoint ? `size ${status.lastCheckpoint.size} at ${status.lastCheckpoint.at}` : 'none yet'}\n` +
          `${status.publishDir ? `published   ${status.publishDir}\n` : ''}${status.followerError ? `FOLLOWER STOPPED: ${status.followerError}\n` : ''}${status.checkpointError ? `CHECKPOINT FAILING: ${status.checkpointError}\n` : ''}` +
          `${status.integrityAlarm ? `INTEGRITY ALARM ${status.integrityAlarm.code} since ${status.integrityAlarm.detectedAt}: ${status.integrityAlarm.summary}; signing stopped\n` : ''}`,
        );
        return status.followerError || status.integrityAlarm ? exitCodes.error : exitCodes.ok;
      }
      case 'checkpoint':
        process.stdout.write(await callApi<string>(connection, '/v1/audit/checkpoint'));
        return exitCodes.ok;
      case 'public-key':
        process.stdout.write(await callApi<string>(connection, '/v1/audit/public-key'));
        return exitCodes.ok;
      case 'prove': {
        const position = positiveInt(required(positionals, 1, 'POSITION'), 'POSITION')!;
        const key = await trustedKey(connection, values.key);
        const signed = values.size ? await signedCheckpoint(connection, key, positiveInt(values.size, '--size')!) : openCheckpoint(await callApi<string>(connection, '/v1/audit/checkpoint'), key);
        const proof = await callApi(connection, '/v1/audit/proofs/inclusion', { query: { position, size: signed.size } });
        // Checked against the root of the signed checkpoint, never against the root the server sends along.
        const ok = verifyInclusion(buf(proof.leafHash), proof.leafIndex, signed.size, proof.proof.map(buf), signed.root);
        output(connection, { ...proof, signedRoot: signed.root.toString('hex'), verified: ok }, () =>
          `event ${position} (hash ${proof.eventHash}) is ${ok ? '' : 'NOT '}included in the signed tree of ${signed.size} leaves (root ${signed.root.toString('hex')}, signed ${signed.time ?? ''}); proof: ${proof.proof.length} hashes\n`,
        );
        return ok ? exitCodes.ok : exitCodes.error;
      }
      case 'consistency': {
        const from = positiveInt(values.from, '--from');
        const to = positiveInt(values.to, '--to');
        if (!from || !to) throw new UsageError('consistency needs --from M --to N (sizes of signed checkpoints)');
        const key = await trustedKey(connection, values.key);
        const [older, newer] = [await signedCheckpoint(connection, key, from), await signedCheckpoint(connection, key, to)];
        const proof = await callApi(connection, '/v1/audit/proofs/consistency', { query: { from, to } });
        const ok = verifyConsistency(from, to, older.root, newer.root, proof.proof.map(buf));
        output(connection, { ...proof, fromRoot: older.root.toString('hex'), toRoot: newer.root.toString('hex'), verified: ok }, () => `the signed tree of ${from} leaves (root ${older.root.toString('hex')}) is ${ok ? '' : 'NOT '}a prefix of the signed tree of ${to} leaves (root ${newer.root.toString('hex')}); proof: ${proof.proof.length} hashes\n`);
        return ok ? exitCodes.ok : exitCodes.error;
      }
      case 'export': {
        if (!values.out) throw new UsageError('export needs --out FILE');
        const target = new URL('v1/audit/export', connection.url.endsWith('/') ? connection.url : `${connection.url}/`);
        const from = positiveInt(values.from, '--from');
        const to = positiveInt(values.to, '--to');
        if (from) target.searchParams.set('from', String(from));
        if (to) target.searchParams.set('to', String(to));
        const response = await request(target, { headers: connection.token ? { authorization: `Bearer ${connection.token}` } : {} });
        if (response.statusCode >= 400) {
          const body = (await response.body.json().catch(() => ({}))) as { error?: { code: string; message: string; details: Record<string, unknown> } };
          throw new ApiCallError(response.statusCode, body.error?.code ?? `HTTP_${response.statusCode}`, body.error?.message ?? 'export failed', body.error?.details ?? {});
        }
        await pipeline(response.body, createWriteStream(values.out, { mode: 0o600 }));
        process.stderr.write(`wrote ${values.out}; check it with: fleet-ledger audit verify ${values.out} --key <public key>\n`);
        return exitCodes.ok;
      }
      case 'verify': {
        const file = required(positionals, 1, 'FILE');
        checkReadableFile(file, { option: 'FILE', what: 'export file' });
        const key = keyOf(values.key);
        const report = await verifyExport(file, { key, ...(values.since ? { since: values.since } : {}) });
        output(connection, report, () =>
          report.ok
            ? `OK: ${report.events} events (${report.from}..${report.to}) of ${report.origin}, ${report.checkpoints} signed checkpoints${report.since ? `, consistent with your checkpoint of size ${report.since.size}` : ''} (${report.eventsPerSecond} events/s)\n`
            : `FAILED${report.firstBadPosition !== undefined ? ` at position ${report.firstBadPosition}` : ''}: ${report.reason}\n${report.notes.map((note) => `  also: ${note}\n`).join('')}`,
        );
        return report.ok ? exitCodes.ok : exitCodes.error;
      }
      case 'fleet-export': {
        if (!values.out) throw new UsageError('fleet-export needs --out DIR');
        const files = await fleetExport(connection, values.out, values.sites ? values.sites.split(',').map((site) => site.trim()).filter(Boolean) : null);
        output(connection, { files }, () => `wrote ${files.join(', ')}; check them with: fleet-ledger audit verify-fleet ${values.out} --site-key SITE=KEY ...\n`);
        return exitCodes.ok;
      }
      case 'verify-fleet': {
        const dir = required(positionals, 1, 'DIR');
        const report = await verifyFleet(dir, siteKeys(values['site-key'] ?? []));
        output(connection, report, () => describeFleetReport(report));
        return report.ok ? exitCodes.ok : exitCodes.error;
      }
      default:
        throw new UsageError(positionals[0] ? `unknown verb '${positionals[0]}'` : 'missing verb');
    }
  });
}
