/**
 * How a BMC's certificate is judged, before any request: a pin admits only its certificate, a resumed session is
 * judged by the certificate of the handshake that made it against the trust of now, and nothing of a key is kept.
 */
import { X509Certificate } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { DriverError, judgeCertificate, summarizeCertificate } from '../../src/drivers/index.js';
import { issueCertificate, newBmcKey } from '../../src/sim/index.js';

const made = (name: string) =>
  new X509Certificate(issueCertificate({ subject: { commonName: name }, serial: Buffer.from([0x42, 0x01]), notBefore: new Date('2026-01-01T00:00:00Z'), notAfter: new Date('2036-01-01T00:00:00Z'), altNames: ['10.0.0.1'], key: newBmcKey() }).pem);
const verdict = { hostname: '10.0.0.1', origin: 'https://10.0.0.1', authorized: false };

describe('judging a BMC certificate', () => {
  const first = made('10.0.0.1');
  const other = made('10.0.0.1');

  it('the first certificate is trusted at first use; afterwards the pin admits only its own', () => {
    const pinned = judgeCertificate({ kind: 'pin', fingerprint: undefined }, { peer: first }, verdict);
    expect(pinned).toMatchObject({ trust: 'first-use', certificate: { serial: '4201', selfSigned: true, validTo: '2036-01-01T00:00:00.000Z' } });
    const fingerprint = (pinned as { certificate: { fingerprint: string } }).certificate.fingerprint;
    expect(judgeCertificate({ kind: 'pin', fingerprint }, { peer: first }, verdict)).toMatchObject({ trust: 'first-use' });
    const refused = judgeCertificate({ kind: 'pin', fingerprint }, { peer: other }, verdict);
    expect(refused).toBeInstanceOf(DriverError);
    expect((refused as DriverError).toJSON()).toMatchObject({ code: 'DRIVER_CERTIFICATE_CHANGED', retryable: false, details: { pinnedFingerprint: fingerprint, certificate: { fingerprint: summarizeCertificate(other).fingerprint } } });
    expect(JSON.stringify((refused as DriverError).toJSON())).not.toMatch(/PRIVATE|BEGIN/);
  });

  it('a resumed session is judged by the certificate that made it, against the pin of now', () => {
    const resumed = { resumed: summarizeCertificate(first) };
    expect(judgeCertificate({ kind: 'pin', fingerprint: summarizeCertificate(first).fingerprint }, resumed, verdict)).toMatchObject({ trust: 'first-use' });
    expect(judgeCertificate({ kind: 'pin', fingerprint: summarizeCertificate(other).fingerprint, accepted: true }, resumed, verdict)).toMatchObject({ code: 'DRIVER_CERTIFICATE_CHANGED' });
  });

  it('a site CA admits only what it verified; insecure admits anything; no certificate at all is refused', () => {
    expect(judgeCertificate({ kind: 'site-ca', ca: '' }, { peer: first }, { ...verdict, authorizationError: 'DEPTH_ZERO_SELF_SIGNED_CERT' })).toMatchObject({ code: 'DRIVER_CERTIFICATE_UNTRUSTED' });
    expect(judgeCertificate({ kind: 'site-ca', ca: '' }, { peer: first }, { ...verdict, authorized: true })).toMatchObject({ trust: 'site-ca' });
    expect(judgeCertificate({ kind: 'site-ca', ca: '' }, { peer: first }, { ...verdict, hostname: '10.0.0.2', authorized: true })).toMatchObject({ code: 'DRIVER_CERTIFICATE_UNTRUSTED' });
    expect(judgeCertificate({ kind: 'insecure' }, { peer: other }, verdict)).toMatchObject({ trust: 'insecure' });
    expect(judgeCertificate({ kind: 'insecure' }, undefined, verdict)).toMatchObject({ code: 'DRIVER_TLS' });
  });
});
