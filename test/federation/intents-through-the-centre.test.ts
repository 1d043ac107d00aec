/**
 * Intents asked at the centre: forwarded to the node's site and recorded there with the principal who asked at the
 * centre and the door it came through; refused with the retryable `CENTRE_SITE_UNREACHABLE` while the site is cut
 * (nothing recorded), then recorded exactly once by a retry with the same key after the cut heals. The site's own
 * operators act locally throughout. Under load: the site appends poll outcomes meanwhile.
 */
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TokenTable } from '../../src/api/index.js';
import { fleetNodes, fleetSites, serveCentreApi } from '../../src/federation/index.js';
import { siteTokens, startTestCentre, startTestSite, waitFor, type TestCentre, type TestSite } from '../support/site-harness.js';

const intervalS = 1;
const centreTokens = new TokenTable([
  { token: 'alice-operator-token-0001', principal: 'alice', role: 'operator' },
  { token: 'ana-analyst-token-000001', principal: 'ana', role: 'analyst' },
]);

describe('intents asked at the centre', () => {
  let base: string;
  let site: TestSite;
  let centre: TestCentre;
  let centreUrl = '';
  let closeApi: () => Promise<void> = async () => undefined;

  const post = async (url: string, path: string, token: string, body: unknown, key?: string) => {
    const response = await fetch(`${url}${path}`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', ...(key ? { 'idempotency-key': key } : {}) }, body: JSON.stringify(body) });
    return { status: response.status, body: (await response.json()) as Record<string, any> };
  };
  const asAlice = (path: string, body: unknown, key?: string) => post(centreUrl, path, 'alice-operator-token-0001', body, key);
  const eventsOf = async (nodeId: string, type: string) => (await site.ledger.store.readStreamToEnd(`node-${nodeId}`)).filter((event) => event.type === type);
  const stateOf = async () => (await fleetSites(centre.centre.pool)).find((view) => view.site === 'fra2')!.state;

  beforeAll(async () => {
    base = mkdtempSync(join(tmpdir(), 'fleet-ledger-intents-'));
    chmodSync(base, 0o755);
    [site, centre] = await Promise.all([startTestSite('fra2', join(base, 'fra2'), { intervalS, api: true }), startTestCentre(join(base, 'centre'), { forwardTimeoutMs: 1_500 })]);
    await centre.centre.addSite(site.card);
    centre.centre.start();
    const app = await serveCentreApi(centre.centre, { port: 0, tokens: centreTokens });
    centreUrl = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
    closeApi = () => app.close();
    await waitFor('fra2 live with its nodes applied', 20_000, async () => ((await stateOf()) === 'live' && (await fleetNodes(centre.centre.pool, centre.centre.readModels.db)).nodes.length === 4 ? true : undefined));
  }, 120_000);

  afterAll(async () => {
    await closeApi();
    await Promise.allSettled([centre?.stop()]);
    await Promise.allSettled([site?.stop()]);
    await Promise.allSettled([site?.proxy.close()]);
    if (base) rmSync(base, { recursive: true, force: true });
  });

  it('an intent asked at the centre is recorded on its node’s site with who asked and that it came through the centre, once per key', async () => {
    site.startLoad(50);
    const first = await asAlice('/v1/nodes/fra2-n1/cordon', { reason: 'swap a PSU' }, 'cordon-n1');
    expect(first).toMatchObject({ status: 201, body: { site: 'fra2', idempotencyKey: 'cordon-n1', idempotentReplay: false } });
    const again = await asAlice('/v1/nodes/fra2-n1/cordon', { reason: 'swap a PSU' }, 'cordon-n1');
    expect(again).toMatchObject({ status: 200, body: { site: 'fra2', position: first.body.position, idempotentReplay: true } });
    await site.stopLoad();
    const cordons = await eventsOf('fra2-n1', 'NodeCordoned');
    expect(cordons).toHaveLength(1);
    expect(cordons[0]!.actor).toEqual({ kind: 'operator', id: 'alice', role: 'operator', via: 'centre:centre' });
    // The site judges the body: a cordon without a reason is refused there, with the site named, and nothing recorded.
    const invalid = await asAlice('/v1/nodes/fra2-n2/cordon', {}, 'cordon-n2-no-reason');
    expect(invalid).toMatchObject({ status: 400, body: { error: { code: 'API_INVALID_REQUEST', details: { site: 'fra2' } } } });
    expect(await eventsOf('fra2-n2', 'NodeCordoned')).toHaveLength(0);
    // A role that may not ask intents is refused at the centre's door; a node no site holds is not found.
    expect(await post(centreUrl, '/v1/nodes/fra2-n1/uncordon', 'ana-analyst-token-000001', {})).toMatchObject({ status: 403, body: { error: { code: 'API_FORBIDDEN' } } });
    expect(await asAlice('/v1/nodes/nowhere-n9/uncordon', {})).toMatchObject({ status: 404, body: { error: { code: 'CENTRE_NOT_FOUND' } } });
  }, 30_000);

  it('a site never takes a forwarder’s request that names nobody: every intent records who asked', async () => {
    const anonymous = await post(site.apiUrl!, '/v1/nodes/fra2-n3/cordon', siteTokens.centre, { reason: 'who?' });
    expect(anonymous).toMatchObject({ status: 400, body: { error: { code: 'API_INVALID_REQUEST', details: { field: 'fleet-on-behalf-of' } } } });
    expect(await eventsOf('fra2-n3', 'NodeCordoned')).toHaveLength(0);
  });

  it('an intent for a cut site is refused as retryable and records nothing; after the cut heals the same key records it exactly once', async () => {
    site.startLoad(50);
    site.cut('blackhole');
    // Before the centre notices the partition, the site does not answer in time: the same refusal.
    const unanswered = await asAlice('/v1/nodes/fra2-n4/quarantine', { reason: 'ECC storm' }, 'quarantine-n4');
    expect(unanswered).toMatchObject({ status: 503, body: { error: { code: 'CENTRE_SITE_UNREACHABLE', details: { site: 'fra2', retryable: true, idempotencyKey: 'quarantine-n4' } } } });
    await waitFor('fra2 partitioned', 10_000, async () => ((await stateOf()) === 'partitioned' ? true : undefined));
    const refused = await asAlice('/v1/nodes/fra2-n4/quarantine', { reason: 'ECC storm' }, 'quarantine-n4');
    expect(refused).toMatchObject({ status: 503, body: { error: { code: 'CENTRE_SITE_UNREACHABLE', details: { site: 'fra2', state: 'partitioned', ambiguous: false, retryable: true } } } });
    expect(await eventsOf('fra2-n4', 'NodeQuarantined')).toHaveLength(0);
    // On site, an operator acts alone meanwhile.
    const local = await post(site.apiUrl!, '/v1/nodes/fra2-n2/cordon', siteTokens.operator, { reason: 'local hands' });
    expect(local.status).toBe(201);

    site.restore();
    await waitFor('fra2 heard again', 20_000, async () => ((await stateOf()) !== 'partitioned' ? true : undefined));
    const retried = await waitFor('the retry recorded', 10_000, async () => {
      const answer = await asAlice('/v1/nodes/fra2-n4/quarantine', { reason: 'ECC storm' }, 'quarantine-n4');
      return answer.status === 503 ? undefined : answer;
    });
    expect([200, 201]).toContain(retried.status);
    expect(await asAlice('/v1/nodes/fra2-n4/quarantine', { reason: 'ECC storm' }, 'quarantine-n4')).toMatchObject({ status: 200, body: { idempotentReplay: true, position: retried.body.position } });
    await site.stopLoad();
    const quarantines = await eventsOf('fra2-n4', 'NodeQuarantined');
    expect(quarantines).toHaveLength(1);
    expect(quarantines[0]!.actor).toMatchObject({ id: 'alice', via: 'centre:centre' });
    expect((await eventsOf('fra2-n2', 'NodeCordoned'))[0]!.actor).toEqual({ kind: 'operator', id: 'oper-fra2', role: 'operator' });
  }, 60_000);
});
