/**
 * `fleet-ledger audit fleet-export` and `audit verify-fleet`: audit across sites. The export asks the centre (`--url`)
 * for each site's log as it witnessed it, one `<site>.export` per site in a folder; the check verifies each file
 * offline against the key the auditor holds for that site (`--site-key SITE=KEY`, KEY itself or a file holding it).
 */
import { createWriteStream, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { request } from 'undici';
import { verifyFleetExport, type FleetVerifyReport } from '../../replay/audit/index.js';
import { ApiCallError, callApi, type ApiConnection, UsageError } from './api-client.js';
import { verifierKeyArgument } from './verifier-key-argument.js';

/** Writes `<dir>/<site>.export` for each site (every site of the centre when none is named); returns the files. */
export async function fleetExport(connection: ApiConnection, dir: string, sites: readonly string[] | null): Promise<string[]> {
  const names = sites ?? Object.keys((await callApi<{ keys: Record<string, string> }>(connection, '/v1/fleet/audit/keys')).keys);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const files: string[] = [];
  for (const site of names) {
    const target = new URL('v1/fleet/audit/export', connection.url.endsWith('/') ? connection.url : `${connection.url}/`);
    target.searchParams.set('site', site);
    const response = await request(target, { headers: connection.token ? { authorization: `Bearer ${connection.token}` } : {} });
    if (response.statusCode >= 400) {
      const body = (await response.body.json().catch(() => ({}))) as { error?: { code: string; message: string; details: Record<string, unknown> } };
      throw new ApiCallError(response.statusCode, body.error?.code ?? `HTTP_${response.statusCode}`, `site ${site}: ${body.error?.message ?? 'export failed'}`, body.error?.details ?? {});
    }
    const file = join(dir, `${site}.export`);
    await pipeline(response.body, createWriteStream(file, { mode: 0o600 }));
    files.push(file);
  }
  return files;
}

/** `SITE=KEY` pairs (KEY: the key or a file holding it). */
export function siteKeys(pairs: readonly string[]): Record<string, string> {
  const keys: Record<string, string> = {};
  for (const pair of pairs) {
    const equals = pair.indexOf('=');
    if (equals < 1) throw new UsageError(`--site-key '${pair}' is not SITE=KEY`);
    keys[pair.slice(0, equals)] = verifierKeyArgument(pair.slice(equals + 1), `--site-key ${pair.slice(0, equals)}`);
  }
  return keys;
}

export function verifyFleet(dir: string, keys: Record<string, string>): Promise<FleetVerifyReport> {
  return verifyFleetExport(dir, keys);
}

export function describeFleetReport(report: FleetVerifyReport): string {
  const lines = report.sites.map((site) =>
    site.ok
      ? `${site.site}: OK, ${site.events} events (${site.from}..${site.to}) of ${site.origin}, ${site.checkpoints} signed checkpoints`
      : `${site.site}: FAILED${site.firstBadPosition !== undefined ? ` at position ${site.firstBadPosition}` : ''}: ${site.reason}`,
  );
  return `${lines.join('\n')}\n${report.ok ? 'the fleet holds: every site against its own key' : 'the fleet does NOT hold'}\n`;
}
