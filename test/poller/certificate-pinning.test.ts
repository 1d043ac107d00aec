/**
 * Trust on first use, against the simulator over real HTTPS: a BMC's first certificate is pinned and recorded; a
 * different one later (a reflash, or a machine answering in its place) receives no credential, is recorded, raises an
 * alarm and latches the node until an operator accepts it through the API (who and why are recorded). The simulated
 * BMC counts every request that carries a credential (Authorization header, session token, session POST).
 */
import { createHash, X509Certificate } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PollOutcomeKind } from '../../events/index.js';
import { Poller } from '../../src/poller/index.js';
import { startSimulator, type Simulator } from '../../src/sim/index.js';
import { bearer, openApiHarness, principals, type ApiHarness } from '../api/support/api-harness.js';
import { until } from './support/until.js';

const fingerprintOf = (pem: string): string => createHash('sha256').update(new X509Certificate(pem).raw).digest('hex');

describe('a BMC certificate is pinned at first use', () => {
  let h: ApiHarness;
  let sim: Simulator;
  let poller: Poller;
  const stop = new AbortController();
  const outcomes: PollOutcomeKind[] = [];

  beforeAll(async () => {
    h = await openApiHarness();
    sim = await startSimulator({ bmcs: 1, mockups: ['dell'], tls: true, behaviour: { latencyScale: 0.01 }, clockFactor: 1 });
    const bmc = sim.bmcs[0]!;
    poller = new Poller({
      store: h.store,
      credentials: { get: () => ({ username: bmc.username, password: bmc.password, version: '1', endpoints: [new URL(bmc.baseUrl).origin] }) },
      policy: { jitter: 0, flushIntervalMs: 100, intervals: { health: 3600, inventory: 3600, firmware: 3600 } },
      onOutcome: (_nodeId, work, outcome) => {
        if (work === 'liveness') outcomes.push(outcome);
      },
    });
    // Registered through the API, as an operator does; the poller follows the log (registrations, and the
    // certificate facts and acceptances).
    const registered = await h.app.inject({
      method: 'POST',
      url: '/v1/nodes',
      headers: bearer('operator'),
      payload: { nodeId: bmc.id, site: 'dc1', rack: 'r01', bmc: { protocol: 'redfish', address: bmc.baseUrl, credentialRef: 'sim' }, expectedIntervalS: 1 },
    });
    expect(registered.statusCode).toBe(201);
    void poller.followIntents(stop.signal);
    poller.start();
  });
  afterAll(async () => {
    stop.abort();
    await poller?.stop();
    await sim?.close();
    await h?.close();
  });

  const eventsOf = async (type: string) => (await h.store.readStream(`node-${sim.bmcs[0]!.id}`)).filter((event) => event.type === type);

  it('a replaced certificate is refused, recorded and alarmed, and no credential reaches it', async () => {
    const bmc = sim.bmcs[0]!;
    const first = fingerprintOf(sim.certificatePem(bmc.id)!);
    await until(async () => (await eventsOf('BmcCertificateObserved')).length === 1, 20_000, 'the first certificate recorded');
    const [observed] = await eventsOf('BmcCertificateObserved');
    expect(observed!.data).toMatchObject({ nodeId: bmc.id, address: new URL(bmc.baseUrl).origin, trust: 'first-use', certificate: { fingerprint: first, selfSigned: true } });
    expect(JSON.stringify(observed!.data)).not.toMatch(/PRIVATE KEY/);
    await until(() => outcomes.filter((o) => o === 'success' || o === 'not-modified').length >= 2, 20_000, 'two checks answered under the pin');

    sim.injectFault({ fault: 'certificate-replaced', target: { bmc: [bmc.id] } });
    const credentialsBefore = sim.tlsStats(bmc.id)!.credentialsReceived;
    const replaced = fingerprintOf(sim.certificatePem(bmc.id)!);
    expect(replaced).not.toBe(first);

    await until(async () => (await eventsOf('BmcCertificateChanged')).length === 1, 20_000, 'the change recorded');
    const [changed] = await eventsOf('BmcCertificateChanged');
    expect(changed!.data).toMatchObject({ nodeId: bmc.id, pinnedFingerprint: first, presented: { fingerprint: replaced } });
    // Latched: the checks that follow are recorded `latched`, and none of them reaches the BMC with a credential.
    const seen = outcomes.length;
    await until(() => outcomes.slice(seen).filter((o) => o === 'latched').length >= 2, 20_000, 'two latched checks');
    expect(sim.tlsStats(bmc.id)!.credentialsReceived).toBe(credentialsBefore);
    expect(outcomes.slice(seen)).not.toContain('success');

    await h.caughtUp();
    const alarms = await h.app.inject({ method: 'GET', url: `/v1/nodes/${bmc.id}`, headers: bearer('analyst') });
    expect(alarms.json().alarms).toEqual(expect.arrayContaining([expect.objectContaining({ kind: 'certificate-changed', severity: 'critical', status: 'open' })]));
  });

  it("an operator's acceptance lifts the latch and polling resumes with the new pin", async () => {
    const bmc = sim.bmcs[0]!;
    const replaced = fingerprintOf(sim.certificatePem(bmc.id)!);
    const credentialsBefore = sim.tlsStats(bmc.id)!.credentialsReceived;
    const wrong = await h.app.inject({ method: 'POST', url: `/v1/nodes/${bmc.id}/accept-certificate`, headers: bearer('operator'), payload: { fingerprint: 'AB:CD', reason: 'reflashed' } });
    expect(wrong.statusCode).toBe(400);
    expect(wrong.json().error.details.field).toBe('body.fingerprint');
    const analyst = await h.app.inject({ method: 'POST', url: `/v1/nodes/${bmc.id}/accept-certificate`, headers: bearer('analyst'), payload: { fingerprint: replaced, reason: 'reflashed' } });
    expect(analyst.statusCode).toBe(403);

    const accepted = await h.app.inject({ method: 'POST', url: `/v1/nodes/${bmc.id}/accept-certificate`, headers: bearer('operator'), payload: { fingerprint: replaced, reason: 'BMC reflashed in change CHG-1042' } });
    expect(accepted.statusCode).toBe(201);
    const [acceptance] = await eventsOf('BmcCertificateAccepted');
    expect(acceptance).toMatchObject({ actor: { kind: 'operator', id: principals.operator }, data: { fingerprint: replaced, reason: 'BMC reflashed in change CHG-1042' } });

    const seen = outcomes.length;
    await until(() => outcomes.slice(seen).filter((o) => o === 'success' || o === 'not-modified').length >= 2, 20_000, 'checks answered again');
    expect(sim.tlsStats(bmc.id)!.credentialsReceived).toBeGreaterThan(credentialsBefore);
    await until(async () => (await eventsOf('BmcCertificateObserved')).some((event) => (event.data as { trust: string }).trust === 'accepted'), 20_000, 'the accepted certificate recorded as trusted');

    // Accepting it again changes nothing and records nothing.
    const again = await h.app.inject({ method: 'POST', url: `/v1/nodes/${bmc.id}/accept-certificate`, headers: bearer('operator'), payload: { fingerprint: replaced, reason: 'again' } });
    expect(again.statusCode).toBe(200);
    expect(await eventsOf('BmcCertificateAccepted')).toHaveLength(1);

    await h.caughtUp();
    const view = await h.app.inject({ method: 'GET', url: `/v1/nodes/${bmc.id}`, headers: bearer('analyst') });
    expect(view.json().alarms.filter((alarm: { kind: string; status: string }) => alarm.kind === 'certificate-changed' && alarm.status === 'open')).toEqual([]);
  });

  it('inventory shows the certificate expiry, and one expiring soon is a finding', async () => {
    await h.caughtUp();
    const findings = await h.app.inject({ method: 'GET', url: '/v1/compliance/certificates?withinDays=4000', headers: bearer('analyst') });
    expect(findings.statusCode).toBe(200);
    expect(findings.json().items).toEqual([expect.objectContaining({ nodeId: sim.bmcs[0]!.id, status: 'expiring', selfSigned: true })]);
    const none = await h.app.inject({ method: 'GET', url: '/v1/compliance/certificates?withinDays=30', headers: bearer('analyst') });
    expect(none.json().items).toEqual([]);
  });
});
