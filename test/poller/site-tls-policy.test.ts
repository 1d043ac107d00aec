/**
 * What a site's TLS policy lets through, against the simulator over real HTTPS: a site that names a CA bundle
 * verifies its BMCs' certificates by it (and refuses one it did not sign, before any credential); a site's oldest
 * allowed TLS version decides whether an old BMC generation (TLS 1.2 only) is polled or refused with a typed error.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isDriverError } from '../../src/drivers/index.js';
import { BmcTransports, RedfishVisitor, type PollTarget, type SiteTlsPolicy } from '../../src/poller/index.js';
import { issueCertificate, newBmcKey, startSimulator, type SimBmcInfo, type Simulator } from '../../src/sim/index.js';
import { useFreshStore } from '../support/fresh-store.js';

const options = { requestTimeoutMs: 5_000, firmwareTimeoutMs: 5_000, visitDeadlineMs: 10_000, sessionLimit: 2 };

function visitorFor(store: ReturnType<ReturnType<typeof useFreshStore>>, sites: Record<string, SiteTlsPolicy>): { visitor: RedfishVisitor; transports: BmcTransports } {
  const transports = new BmcTransports({ store, sites, keepAliveMs: 10_000, connectTimeoutMs: 5_000, clock: Date.now });
  return { visitor: new RedfishVisitor(transports), transports };
}

const targetOf = (bmc: SimBmcInfo, site: string): PollTarget => ({ nodeId: `${site}-${bmc.id}`, site, rack: bmc.rack, baseUrl: bmc.baseUrl, credentialRef: 'c', expectedIntervalS: 60 });
const credentialOf = (bmc: SimBmcInfo) => ({ username: bmc.username, password: bmc.password, version: '1', endpoints: [new URL(bmc.baseUrl).origin] });

describe('a site CA bundle', () => {
  const store = useFreshStore();
  const caKey = newBmcKey();
  const caSubject = { commonName: 'Site AMS1 BMC CA', organization: 'fleet-ledger tests' };
  const ca = issueCertificate({ subject: caSubject, serial: Buffer.from([1]), notBefore: new Date(Date.now() - 86_400_000), notAfter: new Date(Date.now() + 365 * 86_400_000), key: caKey, ca: true });
  let signed: Simulator;
  let selfSigned: Simulator;
  beforeAll(async () => {
    signed = await startSimulator({ bmcs: 1, mockups: ['dell'], tls: { issuer: { subject: caSubject, key: caKey } }, behaviour: { latencyScale: 0.01 } });
    selfSigned = await startSimulator({ bmcs: 1, mockups: ['dell'], tls: true, behaviour: { latencyScale: 0.01 } });
  });
  afterAll(async () => {
    await signed?.close();
    await selfSigned?.close();
  });

  it('a site CA bundle verifies, and a certificate it did not sign is refused before any credential', async () => {
    const { visitor, transports } = visitorFor(store(), { ams1: { trust: { caBundle: ca.pem } } });
    try {
      const good = signed.bmcs[0]!;
      const answered = await visitor.visit(targetOf(good, 'ams1'), credentialOf(good), ['liveness'], options);
      expect(answered).toMatchObject({ ok: true });

      const rogue = selfSigned.bmcs[0]!;
      const refused = await visitor.visit(targetOf(rogue, 'ams1'), credentialOf(rogue), ['liveness'], options);
      expect(refused.ok).toBe(false);
      expect(isDriverError(refused.error) && refused.error.code).toBe('DRIVER_CERTIFICATE_UNTRUSTED');
      expect(selfSigned.tlsStats(rogue.id)!.credentialsReceived).toBe(0);
      await transports.record();
      const recorded = await store().readStream(`node-ams1-${good.id}`);
      expect(recorded.map((event) => event.type)).toEqual(['BmcCertificateObserved']);
      expect(recorded[0]!.data).toMatchObject({ trust: 'site-ca', certificate: { selfSigned: false, issuer: expect.stringContaining('Site AMS1 BMC CA') } });
    } finally {
      await transports.close();
    }
  });
});

describe('a site policy on TLS versions', () => {
  const store = useFreshStore();
  let sim: Simulator;
  beforeAll(async () => {
    // iDRAC 8: TLS 1.2 only, ECDHE-ECDSA ciphers, no session resumption.
    sim = await startSimulator({ bmcs: 1, mockups: ['dell_idrac8_m630'], tls: true, behaviour: { latencyScale: 0.01 } });
  });
  afterAll(async () => sim?.close());

  it('an old TLS profile is still polled where policy allows and refused with a clear typed error where it does not', async () => {
    const { visitor, transports } = visitorFor(store(), { legacy: { trust: 'pin', minVersion: 'TLSv1.2' }, strict: { trust: 'pin', minVersion: 'TLSv1.3' } });
    try {
      const bmc = sim.bmcs[0]!;
      const polled = await visitor.visit(targetOf(bmc, 'legacy'), credentialOf(bmc), ['liveness'], options);
      expect(polled).toMatchObject({ ok: true });
      const credentials = sim.tlsStats(bmc.id)!.credentialsReceived;

      const refused = await visitor.visit(targetOf(bmc, 'strict'), credentialOf(bmc), ['liveness'], options);
      expect(refused.ok).toBe(false);
      expect(isDriverError(refused.error) && refused.error.toJSON()).toMatchObject({
        code: 'DRIVER_TLS_VERSION',
        retryable: false,
        message: expect.stringContaining('TLSv1.3 or newer'),
        details: { minTlsVersion: 'TLSv1.3', url: new URL(bmc.baseUrl).origin },
      });
      expect(sim.tlsStats(bmc.id)!.credentialsReceived).toBe(credentials);
    } finally {
      await transports.close();
    }
  });
});
