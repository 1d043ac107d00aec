/**
 * Intents asked at the centre: forwarded to the node's site and recorded there with the principal who asked at the
 * centre and the door it came through; refused with the retryable `CENTRE_SITE_UNREACHABLE` while the site is cut
 * (nothing recorded), then recorded exactly once by a retry with the same key after the cut heals. The site's own
 * operators act locally throughout. Under load: the site appends poll outcomes meanwhile. Then a fleet rollout: a child
 * per site, requested and approved through the centre, shown from each site's log (as of its last heartbeat when cut).
 * And audit across sites: the centre exports each site's log as it witnessed it; the offline verifier checks each
 * against the site's own key.
 */
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TokenTable } from '../../src/api/index.js';
import { verifyFleetExport } from '../../replay/audit/index.js';
import { fleetExport } from '../../src/cli/fleet-audit.js';
import * as fleetCommand from '../../src/cli/commands/fleet.js';
import * as nodesCommand from '../../src/cli/commands/nodes.js';
import { vi } from 'vitest';
import { fleetLiveness, fleetNodes, fleetSites, serveCentreApi } from '../../src/federation/index.js';
import { siteTokens, startTestCentre, startTestSite, waitFor, type TestCentre, type TestSite } from '../support/site-harness.js';

const intervalS = 1;
const centreTokens = new TokenTable([
  { token: 'alice-operator-token-0001', principal: 'alice', role: 'operator' },
  { token: 'ana-analyst-token-000001', principal: 'ana', role: 'analyst' },
  { token: 'audrey-auditor-token-0001', principal: 'audrey', role: 'auditor' },
]);

describe('the fleet through the centre', () => {
  let base: string;
  let site: TestSite;
  let other: TestSite;
  let centre: TestCentre;
  let centreUrl = '';
  let closeApi: () => Promise<void> = async () => undefined;
  /** The fleet's liveness as the centre showed it when the setup was done, and that instant. */
  let before: Awaited<ReturnType<typeof fleetLiveness>>;
  let beforeAt: Date;

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
    [site, other, centre] = await Promise.all([startTestSite('fra2', join(base, 'fra2'), { intervalS, api: true }), startTestSite('ams1', join(base, 'ams1'), { intervalS, api: true }), startTestCentre(join(base, 'centre'), { forwardTimeoutMs: 1_500 })]);
    await centre.centre.addSite(site.card);
    await centre.centre.addSite(other.card);
    centre.centre.start();
    const app = await serveCentreApi(centre.centre, { port: 0, tokens: centreTokens });
    centreUrl = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
    closeApi = () => app.close();
    await waitFor('fra2 live with its nodes applied', 20_000, async () => ((await stateOf()) === 'live' && (await fleetNodes(centre.centre.pool, centre.centre.readModels.db)).nodes.length === 8 ? true : undefined));
    before = await fleetLiveness(centre.centre.pool, centre.centre.readModels.db);
    beforeAt = new Date();
  }, 120_000);

  afterAll(async () => {
    await closeApi();
    await Promise.allSettled([centre?.stop()]);
    await Promise.allSettled([site?.stop(), other?.stop()]);
    await Promise.allSettled([site?.proxy.close(), other?.proxy.close()]);
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

  it('a fleet rollout is a child per site, requested and approved through the centre and shown from each site’s log, as of the last heartbeat while a site is cut', async () => {
    const request = { firmware: { component: 'BMC', version: '9.9', imageUri: 'https://images.example/bmc-9.9.bin' } };
    const planned = await asAlice('/v1/fleet/rollouts', { fleetRolloutId: 'fw-bmc-9', request });
    expect(planned.status).toBe(200);
    expect(planned.body.children.map((c: { site: string; rolloutId: string; outcome: string }) => [c.site, c.rolloutId, c.outcome])).toEqual([
      ['ams1', 'fw-bmc-9.ams1', 'recorded'],
      ['fra2', 'fw-bmc-9.fra2', 'recorded'],
    ]);
    // Planned again: nothing new on either site.
    expect((await asAlice('/v1/fleet/rollouts', { fleetRolloutId: 'fw-bmc-9', request })).body.children.map((c: { outcome: string }) => c.outcome)).toEqual(['already-requested', 'already-requested']);
    expect(await asAlice('/v1/fleet/rollouts', { fleetRolloutId: 'fw-bmc-9', request: { ...request, seed: 7 } })).toMatchObject({ status: 409, body: { error: { code: 'CENTRE_CONFLICT' } } });
    // A request whose selector names sites has children on those only.
    const narrowed = await asAlice('/v1/fleet/rollouts', { fleetRolloutId: 'fw-ams-only', request: { ...request, selector: { sites: ['ams1'] } } });
    expect(narrowed.body.children.map((c: { site: string; outcome: string }) => [c.site, c.outcome])).toEqual([['ams1', 'recorded']]);
    const approved = await asAlice('/v1/fleet/rollouts/fw-bmc-9/approve', { reason: 'CVE fix' });
    expect(approved.body).toMatchObject({ complete: true });
    const plannedOnSite = (await site.ledger.store.readStreamToEnd('rollout-fw-bmc-9.fra2')).map((event) => [event.type, event.actor]);
    expect(plannedOnSite).toEqual([
      ['RolloutPlanned', { kind: 'operator', id: 'alice', role: 'operator', via: 'centre:centre' }],
      ['RolloutApproved', { kind: 'operator', id: 'alice', role: 'operator', via: 'centre:centre' }],
    ]);
    const show = async () => (await fetch(`${centreUrl}/v1/fleet/rollouts/fw-bmc-9`, { headers: { authorization: 'Bearer ana-analyst-token-000001' } })).json() as Promise<{ requestedBy: string; children: Array<{ site: string; state: string; asOf: string | null; rollout: { revision: number; status: string; approvals: { by: string[] } } | null }> }>;
    const both = await waitFor('both children approved at the centre', 10_000, async () => {
      const view = await show();
      return view.children.every((child) => child.rollout?.approvals.by.includes('operator:alice')) ? view : undefined;
    });
    expect(both.requestedBy).toBe('alice');

    // fra2 is cut: the centre's verbs reach ams1 only; fra2's child moves on alone and is shown as of its last heartbeat.
    site.cut('blackhole');
    await waitFor('fra2 partitioned', 10_000, async () => ((await stateOf()) === 'partitioned' ? true : undefined));
    const aborted = await asAlice('/v1/fleet/rollouts/fw-bmc-9/abort', { reason: 'bad image' });
    expect(aborted.body.complete).toBe(false);
    expect(aborted.body.children.map((c: { site: string; outcome: string; status: number }) => [c.site, c.outcome, c.status])).toEqual([
      ['ams1', 'recorded', 200],
      ['fra2', 'refused', 503],
    ]);
    const local = await post(site.apiUrl!, '/v1/rollouts/fw-bmc-9.fra2/abort', siteTokens.operator, { reason: 'stopped on site' });
    expect(local.status).toBe(200);
    const during = await show();
    const fra2During = during.children.find((child) => child.site === 'fra2')!;
    expect(fra2During).toMatchObject({ state: 'partitioned', rollout: { revision: both.children.find((child) => child.site === 'fra2')!.rollout!.revision } });
    expect(fra2During.asOf).not.toBeNull();
    site.restore();
    const after = await waitFor('fra2 child shown as the site left it', 20_000, async () => {
      const child = (await show()).children.find((c) => c.site === 'fra2')!;
      return child.state === 'live' && child.rollout?.status === 'aborted' ? child : undefined;
    });
    expect(after.asOf).toBeNull();
  }, 60_000);

  it('audit across sites: the centre exports each site’s witnessed log, and each is checked offline against its own key', async () => {
    await waitFor('a checkpoint of each site witnessed', 15_000, async () => ((await fleetSites(centre.centre.pool)).every((view) => view.witnessedSize > 0) ? true : undefined));
    const dir = join(base, 'fleet-export');
    const files = await fleetExport({ url: centreUrl, token: 'audrey-auditor-token-0001', json: true }, dir, null);
    expect(files.map((file) => file.slice(dir.length + 1))).toEqual(['ams1.export', 'fra2.export']);
    const keys = { ams1: other.audit.signer.verifierKey, fra2: site.audit.signer.verifierKey };
    const held = await verifyFleetExport(dir, keys);
    expect(held.sites.map((s) => [s.site, s.ok, s.origin])).toEqual([
      ['ams1', true, held.sites[0]!.origin],
      ['fra2', true, held.sites[1]!.origin],
    ]);
    expect(held.ok).toBe(true);
    expect(held.sites.every((s) => s.events >= 5 && s.checkpoints > 0)).toBe(true);
    // Each log against its own key: swapped keys, or a site without one, do not hold.
    expect((await verifyFleetExport(dir, { ams1: keys.fra2, fra2: keys.ams1 })).sites.map((s) => s.ok)).toEqual([false, false]);
    expect((await verifyFleetExport(dir, { ams1: keys.ams1 })).sites.map((s) => [s.site, s.ok])).toEqual([['ams1', true], ['fra2', false]]);
    // One row of fra2 changed in the file: fra2 fails at that row, ams1 still holds.
    const fra2File = join(dir, 'fra2.export');
    const lines = readFileSync(fra2File, 'utf8').split('\n');
    const target = lines.findIndex((line) => line.startsWith('E 5\t'));
    lines[target] = lines[target]!.replace('"nodeId":"fra2-n', '"nodeId":"frX2-n');
    writeFileSync(fra2File, lines.join('\n'));
    const tampered = await verifyFleetExport(dir, keys);
    expect(tampered.ok).toBe(false);
    expect(tampered.sites.map((s) => [s.site, s.ok, s.firstBadPosition])).toEqual([['ams1', true, undefined], ['fra2', false, 5]]);
    // Only an auditor may export.
    expect((await fetch(`${centreUrl}/v1/fleet/audit/export?site=fra2`, { headers: { authorization: 'Bearer ana-analyst-token-000001' } })).status).toBe(403);
  }, 30_000);

  it('fleet answers as of an instant or a per-site position vector are what the fleet was then, and a site cut before then says so', async () => {
    type Liveness = { vector: Record<string, number>; fleet: Record<string, number>; sites: Array<{ site: string; position: number; complete: boolean; heardUntil: string | null; counts: Record<string, number> }> };
    const liveness = async (query: string): Promise<Liveness> => (await fetch(`${centreUrl}/v1/fleet/liveness?${query}`, { headers: { authorization: 'Bearer ana-analyst-token-000001' } })).json() as Promise<Liveness>;
    const countsOf = (answer: { sites: Array<{ site: string; counts: Record<string, number> }> }) => Object.fromEntries(answer.sites.map((s) => [s.site, s.counts]));
    // The fleet moves on: fra2's nodes are polled (while it keeps appending).
    site.startLoad(50);
    await waitFor('fra2 liveness changed at the centre', 15_000, async () => {
      const now = await fleetLiveness(centre.centre.pool, centre.centre.readModels.db);
      return JSON.stringify(countsOf(now)) !== JSON.stringify(countsOf(before)) ? true : undefined;
    });
    const atVector = await liveness(`at=${Object.entries(before.vector).map(([s, p]) => `${s}:${p}`).join(',')}`);
    expect(atVector.vector).toEqual(before.vector);
    expect(countsOf(atVector)).toEqual(countsOf(before));
    const atInstant = await liveness(`asOf=${beforeAt.toISOString()}`);
    expect(countsOf(atInstant)).toEqual(countsOf(before));
    expect(atInstant.sites.every((s) => s.complete)).toBe(true);
    expect(atInstant.fleet).toEqual(before.fleet);

    // fra2 cut: an instant after its last heartbeat heard is answered as far as the centre holds it, and says so.
    site.cut('blackhole');
    await waitFor('fra2 partitioned', 10_000, async () => ((await fleetSites(centre.centre.pool)).find((v) => v.site === 'fra2')!.state === 'partitioned' ? true : undefined));
    const now = await liveness(`asOf=${new Date().toISOString()}`);
    const fra2 = now.sites.find((s) => s.site === 'fra2')!;
    expect(fra2.complete).toBe(false);
    expect(Date.parse(fra2.heardUntil!)).toBeLessThan(Date.now() - intervalS * 1000);
    expect(now.sites.find((s) => s.site === 'ams1')!.complete).toBe(true);
    site.restore();
    await site.stopLoad();
    expect((await fetch(`${centreUrl}/v1/fleet/liveness?asOf=yesterday`, { headers: { authorization: 'Bearer ana-analyst-token-000001' } })).status).toBe(400);
  }, 40_000);

  it('the command line acts through the centre: a node verb with --url the centre, and fleet rollout', async () => {
    await waitFor('fra2 live again', 20_000, async () => ((await stateOf()) === 'live' ? true : undefined));
    const printed: string[] = [];
    const write = vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
      printed.push(String(chunk));
      return true;
    });
    try {
      const connection = ['--url', centreUrl, '--token', 'alice-operator-token-0001', '--json'];
      expect(await nodesCommand.run(['cordon', 'fra2-n3', '--reason', 'from the command line', '--idempotency-key', 'cli-cordon', ...connection])).toBe(0);
      expect(JSON.parse(printed.join(''))).toMatchObject({ site: 'fra2', idempotencyKey: 'cli-cordon' });
      printed.length = 0;
      expect(await fleetCommand.run(['rollout', 'plan', 'fw-cli', '--component', 'BMC', '--version', '9.8', '--image', 'https://images.example/bmc-9.8.bin', ...connection])).toBe(0);
      expect(JSON.parse(printed.join('')).children.map((c: { site: string; outcome: string }) => [c.site, c.outcome])).toEqual([
        ['ams1', 'recorded'],
        ['fra2', 'recorded'],
      ]);
    } finally {
      write.mockRestore();
    }
    const cordons = await eventsOf('fra2-n3', 'NodeCordoned');
    expect(cordons.map((event) => event.actor)).toEqual([{ kind: 'operator', id: 'alice', role: 'operator', via: 'centre:centre' }]);
    expect((await other.ledger.store.readStreamToEnd('rollout-fw-cli.ams1')).map((event) => [event.type, event.actor])).toEqual([['RolloutPlanned', { kind: 'operator', id: 'alice', role: 'operator', via: 'centre:centre' }]]);
  }, 20_000);
});
