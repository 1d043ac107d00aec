/**
 * The offline check of a fleet's audit export: a folder of one export per site (`<site>.export`, each the format of
 * replay/audit/export.ts, written by the centre from the log it witnessed), each verified against that site's own key,
 * which the auditor brings (never taken from the folder). A site whose file is missing, or whose key was not given,
 * fails; the fleet holds only when every site holds.
 */
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { verifyExport, type VerifyReport } from './verify-export.js';

export interface FleetVerifyReport {
  ok: boolean;
  sites: Array<{ site: string; file: string | null } & VerifyReport>;
}

const failed = (site: string, file: string | null, reason: string) => ({ site, file, ok: false, events: 0, checkpoints: 0, reason, notes: [] });

/** Verifies every `<site>.export` of `dir` against `keys[site]`; every site named by a file or a key is reported. */
export async function verifyFleetExport(dir: string, keys: Readonly<Record<string, string>>): Promise<FleetVerifyReport> {
  const files = new Map(readdirSync(dir).filter((name) => name.endsWith('.export')).map((name) => [name.slice(0, -'.export'.length), join(dir, name)]));
  const sites = [...new Set([...files.keys(), ...Object.keys(keys)])].sort();
  const reports: FleetVerifyReport['sites'] = [];
  for (const site of sites) {
    const file = files.get(site) ?? null;
    const key = keys[site];
    if (!file) reports.push(failed(site, null, `no export of site ${site} in ${dir}`));
    else if (!key) reports.push(failed(site, file, `no key given for site ${site}: each site's log is checked against its own key`));
    else reports.push({ site, file, ...(await verifyExport(file, { key })) });
  }
  return { ok: reports.length > 0 && reports.every((report) => report.ok), sites: reports };
}
