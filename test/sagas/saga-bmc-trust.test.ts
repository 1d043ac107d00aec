/**
 * A saga's power and firmware actions trust a BMC's certificate as the poller does: the pin the log holds for the node
 * (first use, or an operator's acceptance), or the site's CA or insecure choice that comes with its access; a node
 * latched by a changed certificate is refused before any credential is sent.
 */
import { describe, expect, it } from 'vitest';
import type { CertificateSummary } from '../../events/index.js';
import { sagaBmcTls, type BmcAccess } from '../../sagas/index.js';
import { useFreshStore } from '../support/fresh-store.js';

const certificate = (digit: string): CertificateSummary => ({
  fingerprint: digit.repeat(64),
  subject: 'CN=bmc',
  issuer: 'CN=bmc',
  validFrom: '2026-01-01T00:00:00.000Z',
  validTo: '2036-01-01T00:00:00.000Z',
  serial: '01',
  selfSigned: true,
});
const https: BmcAccess = { baseUrl: 'https://10.0.0.5', username: 'u', password: 'p' };
const system = { kind: 'system' as const, id: 'poller' };
const operator = { kind: 'operator' as const, id: 'alice' };

describe('the certificate a saga trusts', () => {
  const freshStore = useFreshStore();

  it('is the pin the log holds; a changed certificate refuses the action until an operator accepts one, which is then the pin', async () => {
    const store = freshStore();
    const nodeId = 'trust-1';
    const stream = `node-${nodeId}`;
    const at = new Date().toISOString();
    await store.append(stream, [{ type: 'NodeRegistered', data: { nodeId, site: 'dc1', rack: 'r1', bmc: { protocol: 'redfish', address: https.baseUrl, credentialRef: 'c' }, expectedIntervalS: 60 }, actor: operator }]);
    // Never reached by the poller yet: trusted at first use, as the poller's first contact is.
    expect(await sagaBmcTls(store, nodeId, https)).toEqual({ trust: { kind: 'pin', fingerprint: undefined } });
    await store.append(stream, [{ type: 'BmcCertificateObserved', data: { nodeId, address: https.baseUrl, certificate: certificate('a'), trust: 'first-use', at }, actor: system }]);
    expect(await sagaBmcTls(store, nodeId, https)).toEqual({ trust: { kind: 'pin', fingerprint: 'a'.repeat(64) } });

    await store.append(stream, [{ type: 'BmcCertificateChanged', data: { nodeId, address: https.baseUrl, pinnedFingerprint: 'a'.repeat(64), presented: certificate('b'), at }, actor: system }]);
    await expect(sagaBmcTls(store, nodeId, https)).rejects.toMatchObject({ code: 'DRIVER_CERTIFICATE_CHANGED', details: { pinnedFingerprint: 'a'.repeat(64) } });

    await store.append(stream, [{ type: 'BmcCertificateAccepted', data: { nodeId, fingerprint: 'b'.repeat(64), reason: 'reflashed' }, actor: operator }]);
    expect(await sagaBmcTls(store, nodeId, https)).toEqual({ trust: { kind: 'pin', fingerprint: 'b'.repeat(64) } });
  });

  it("follows the site's policy when the access names one, and plain http has no TLS", async () => {
    const store = freshStore();
    const ca = { trust: { kind: 'site-ca' as const, ca: '-----BEGIN CERTIFICATE-----\n...' }, minVersion: 'TLSv1.3' as const };
    expect(await sagaBmcTls(store, 'trust-2', { ...https, tls: ca })).toEqual(ca);
    expect(await sagaBmcTls(store, 'trust-2', { ...https, insecure: true })).toEqual({ trust: { kind: 'insecure' } });
    expect(await sagaBmcTls(store, 'trust-2', { ...https, baseUrl: 'http://10.0.0.5' })).toBeUndefined();
    expect(await sagaBmcTls(store, 'trust-2', undefined)).toBeUndefined();
  });
});
