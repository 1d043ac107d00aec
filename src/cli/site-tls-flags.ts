/**
 * `fleet-ledger start --targets` flags that say how each site's BMC certificates are trusted: `--site-ca SITE=FILE`
 * (verified by that CA bundle instead of pinned on first use), `--insecure-site SITE` (not verified; the poller logs it
 * once per site) and `--min-tls SITE=TLSv1.3` (the oldest TLS version allowed). Sites not named pin on first use over
 * TLS 1.2 or newer. A flag that names no site, a file that cannot be read or holds no certificate, an unknown TLS
 * version, or a site named both insecure and with a CA is refused with a message naming the flag.
 */
import { readFileSync } from 'node:fs';
import type { SiteTlsPolicy } from '../poller/index.js';

export interface SiteTlsFlags {
  siteCa?: readonly string[];
  insecureSites?: readonly string[];
  minTls?: readonly string[];
}

function pair(flag: string, value: string): [string, string] {
  const at = value.indexOf('=');
  if (at <= 0 || at === value.length - 1) throw new Error(`--${flag} expects SITE=VALUE, got '${value}'`);
  return [value.slice(0, at), value.slice(at + 1)];
}

export function siteTlsFromFlags(flags: SiteTlsFlags, readFile: (path: string) => string = (path) => readFileSync(path, 'utf8')): Record<string, SiteTlsPolicy> {
  const sites: Record<string, { trust: SiteTlsPolicy['trust']; minVersion?: SiteTlsPolicy['minVersion'] }> = {};
  const site = (name: string) => (sites[name] ??= { trust: 'pin' });
  for (const value of flags.siteCa ?? []) {
    const [name, file] = pair('site-ca', value);
    let pem: string;
    try {
      pem = readFile(file);
    } catch (error) {
      throw new Error(`--site-ca ${name}: cannot read ${file}: ${(error as Error).message}`);
    }
    if (!pem.includes('-----BEGIN CERTIFICATE-----')) throw new Error(`--site-ca ${name}: ${file} holds no PEM certificate`);
    site(name).trust = { caBundle: pem };
  }
  for (const name of flags.insecureSites ?? []) {
    if (!name) throw new Error('--insecure-site expects a site name');
    if (typeof site(name).trust === 'object') throw new Error(`--insecure-site ${name}: the site already names a CA (--site-ca); choose one`);
    site(name).trust = 'insecure';
  }
  for (const value of flags.minTls ?? []) {
    const [name, version] = pair('min-tls', value);
    if (version !== 'TLSv1.2' && version !== 'TLSv1.3') throw new Error(`--min-tls ${name}: TLSv1.2 or TLSv1.3, not '${version}'`);
    site(name).minVersion = version;
  }
  return sites;
}
