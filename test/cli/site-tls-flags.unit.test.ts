/** `start --targets` flags for BMC certificate trust per site: each bad flag is refused naming the flag and the site. */
import { describe, expect, it } from 'vitest';
import { siteTlsFromFlags } from '../../src/cli/site-tls-flags.js';

const pem = '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n';
const files: Record<string, string> = { '/ca/ams1.pem': pem, '/ca/empty.pem': 'nothing' };
const read = (path: string): string => {
  const text = files[path];
  if (text === undefined) throw new Error('ENOENT');
  return text;
};

describe('site TLS flags', () => {
  it('a site CA, an insecure site and a minimum version each apply to the site they name; others pin on first use', () => {
    expect(siteTlsFromFlags({ siteCa: ['ams1=/ca/ams1.pem'], insecureSites: ['lab'], minTls: ['ams1=TLSv1.3'] }, read)).toEqual({
      ams1: { trust: { caBundle: pem }, minVersion: 'TLSv1.3' },
      lab: { trust: 'insecure' },
    });
    expect(siteTlsFromFlags({}, read)).toEqual({});
  });

  it('a flag that names no site, a file without a certificate, an unknown version or a CA and insecure together is refused by name', () => {
    expect(() => siteTlsFromFlags({ siteCa: ['/ca/ams1.pem'] }, read)).toThrow(/--site-ca expects SITE=VALUE/);
    expect(() => siteTlsFromFlags({ siteCa: ['ams1=/ca/missing.pem'] }, read)).toThrow(/--site-ca ams1: cannot read/);
    expect(() => siteTlsFromFlags({ siteCa: ['ams1=/ca/empty.pem'] }, read)).toThrow(/--site-ca ams1: .* holds no PEM certificate/);
    expect(() => siteTlsFromFlags({ minTls: ['ams1=TLSv1.1'] }, read)).toThrow(/--min-tls ams1: TLSv1.2 or TLSv1.3, not 'TLSv1.1'/);
    expect(() => siteTlsFromFlags({ siteCa: ['ams1=/ca/ams1.pem'], insecureSites: ['ams1'] }, read)).toThrow(/--insecure-site ams1: the site already names a CA/);
  });
});
