/**
 * Two site ledgers and a centre, each on its own PostgreSQL, the centre subscribed to each site through PostgreSQL's
 * logical replication, one site's link through a TCP fault proxy. A cut of a few heartbeat intervals: the site goes on
 * alone, the centre shows it partitioned since its last heartbeat (a site alarm; its nodes "as of T"), and after the
 * link is back every event the site appended is at the centre, the read models equal a rebuild, the checkpoints are
 * witnessed. Then a site restarted during a cut, and a site whose log was rewritten during a cut (the centre refuses it
 * and keeps what it witnessed).
 */
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fleetNodes, fleetSites, type SiteView } from '../../src/federation/index.js';
import { query, startTestCentre, startTestSite, waitFor, type TestCentre, type TestSite } from '../support/site-harness.js';

const intervalS = 1;

describe('sites federated by logical replication', () => {
  let base: string;
  let a: TestSite;
  let b: TestSite;
  let centre: TestCentre;
  let fresh: TestCentre | undefined;

  const view = async (site: string): Promise<SiteView> => (await fleetSites(centre.centre.pool)).find((v) => v.site === site)!;
  const stateOf = async (site: string): Promise<string> => (await view(site)).state;
  /** Positions and hashes the site holds up to `through`, against the centre's copy: the rows missing or differing there. */
  const lostAtCentre = async (site: TestSite, through: number): Promise<number> => {
    const local = await query<{ position: string; hash: Buffer }>(site.superuserUrl, 'SELECT position, hash FROM ledger_events WHERE position <= $1 ORDER BY position', [through]);
    const central = new Map((await query<{ position: string; hash: Buffer }>(centre.server.connectionString, 'SELECT position, hash FROM ledger_events WHERE site = $1 AND position <= $2', [site.name, through])).map((row) => [Number(row.position), row.hash.toString('hex')]));
    return local.filter((row) => central.get(Number(row.position)) !== row.hash.toString('hex')).length;
  };
  /** The site is live at the centre and the centre verified everything the site held at `head` (now, by default). */
  const caughtUp = async (site: TestSite, head?: number): Promise<number | undefined> => {
    const through = head ?? (await site.head());
    const v = await view(site.name);
    return v.state === 'live' && v.verifiedPosition >= through ? through : undefined;
  };

  beforeAll(async () => {
    base = mkdtempSync(join(tmpdir(), 'fleet-ledger-sites-'));
    chmodSync(base, 0o755); // as root, each PostgreSQL runs as the postgres user, which must enter the folder
    // The second centre (the last test's, rebuilt from scratch) starts its server now, beside the others.
    [a, b, centre, fresh] = await Promise.all([startTestSite('ams1', join(base, 'ams1'), { intervalS }), startTestSite('fra2', join(base, 'fra2'), { intervalS }), startTestCentre(join(base, 'centre')), startTestCentre(join(base, 'fresh-centre'))]);
    await centre.centre.addSite(a.card);
    await centre.centre.addSite(b.card);
    centre.centre.start();
    await waitFor('both sites live', 20_000, async () => ((await stateOf('ams1')) === 'live' && (await stateOf('fra2')) === 'live' ? true : undefined));
  }, 120_000);

  afterAll(async () => {
    await Promise.allSettled([centre?.stop(), fresh?.stop()]);
    await Promise.allSettled([a?.stop(), b?.stop()]);
    await Promise.allSettled([a?.proxy.close(), b?.proxy.close()]);
    if (base) rmSync(base, { recursive: true, force: true });
  });

  it('a cut site goes on alone, is shown partitioned since its last heartbeat, and catches up with nothing lost', async () => {
    b.startLoad(100);
    await b.appendOutcomes(3);
    await waitFor('fra2 replicated before the cut', 10_000, () => caughtUp(b));
    const cutAt = Date.now();
    b.proxy.cutLink('blackhole');
    const headAtCut = await b.head();

    const partitioned = await waitFor('fra2 shown partitioned', 10_000, async () => {
      const v = await view('fra2');
      return v.state === 'partitioned' ? v : undefined;
    });
    const shownS = (Date.now() - cutAt) / 1000;
    expect(shownS).toBeLessThanOrEqual(2 * intervalS + 1.5);
    expect(partitioned.partitionedSince).not.toBeNull();
    expect(partitioned.partitionPosition).toBeLessThanOrEqual(headAtCut);
    expect(partitioned.alarms.map((alarm) => alarm.code)).toEqual(['SITE_PARTITIONED']);
    // Its nodes are labelled as of the last heartbeat; the other site's are live.
    const { nodes } = await fleetNodes(centre.centre.pool, centre.centre.readModels.db);
    expect(nodes.filter((n) => n.site === 'fra2').every((n) => n.siteState === 'partitioned' && n.asOf === partitioned.asOf)).toBe(true);
    expect(nodes.filter((n) => n.site === 'ams1').every((n) => n.siteState === 'live' && n.asOf === null)).toBe(true);
    expect(nodes.filter((n) => n.site === 'fra2').length).toBe(4);
    expect(await stateOf('ams1')).toBe('live');

    // The site keeps appending alone for a few intervals.
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    const duringCut = (await b.head()) - headAtCut;
    expect(duringCut).toBeGreaterThan(10);

    const headAtRestore = await b.head();
    b.proxy.restore();
    const restoredAt = Date.now();
    const head = await waitFor('fra2 caught up', 30_000, () => caughtUp(b, headAtRestore));
    const catchupS = (Date.now() - restoredAt) / 1000;
    await b.stopLoad();
    const through = await waitFor('the rest replicated', 10_000, async () => {
      const h = await b.head();
      return (await view('fra2')).verifiedPosition >= h ? h : undefined;
    });
    expect(through).toBeGreaterThanOrEqual(head);
    expect(await lostAtCentre(b, through)).toBe(0);
    const v = await view('fra2');
    expect(v.alarms).toEqual([]);
    expect(v.refusals).toEqual([]);
    expect(v.checkpointsWitnessed).toBeGreaterThan(0);
    expect(catchupS).toBeLessThan(30);

    // The read models the centre keeps equal a rebuild from the replicated logs.
    await waitFor('read models at the verified prefix', 10_000, async () => ((await view('fra2')).readModelPosition >= through ? true : undefined));
    const comparisons = await centre.centre.compareWithRebuild();
    expect(comparisons.map((c) => ({ site: c.site, matches: c.matches }))).toEqual([
      { site: 'ams1', matches: true },
      { site: 'fra2', matches: true },
    ]);
  }, 60_000);

  it('a site restarted during the cut loses nothing: its slot keeps the backlog', async () => {
    b.proxy.cutLink('reset');
    await b.appendOutcomes(5);
    const proxy = b.proxy;
    await b.stop();
    b = await startTestSite('fra2', b.dir, { intervalS, proxy });
    await b.appendOutcomes(5);
    await waitFor('fra2 partitioned', 10_000, async () => ((await stateOf('fra2')) === 'partitioned' ? true : undefined));
    proxy.restore();
    const head = await waitFor('fra2 caught up after its restart', 30_000, () => caughtUp(b));
    expect(await lostAtCentre(b, head)).toBe(0);
    expect((await view('fra2')).refusals).toEqual([]);
  }, 60_000);

  it('a site whose slot was lost is re-synchronised from its log, every row the centre held compared as it arrives', async () => {
    const witnessedBefore = (await view('fra2')).checkpointsWitnessed;
    b.proxy.cutLink('reset');
    await b.appendOutcomes(5);
    // The slot is dropped on the site (as a slot past its bound is invalidated): the backlog it held is gone.
    const slot = `fleet_${centre.centre.centreId}_fra2`;
    await waitFor("the centre's slot released on fra2", 10_000, async () => {
      const [row] = await query<{ active: boolean }>(b.superuserUrl, 'SELECT active FROM pg_replication_slots WHERE slot_name = $1', [slot]);
      return row && !row.active ? true : undefined;
    });
    await query(b.superuserUrl, 'SELECT pg_drop_replication_slot($1)', [slot]);
    b.proxy.restore();
    const lost = await waitFor('SITE_SLOT_LOST at the centre', 20_000, async () => {
      const v = await view('fra2');
      return v.alarms.some((alarm) => alarm.code === 'SITE_SLOT_LOST') ? v : undefined;
    });
    expect(lost.state).toBe('partitioned');
    await b.appendOutcomes(5);
    await centre.centre.resync('fra2');
    const head = await waitFor('fra2 caught up after the re-synchronisation', 30_000, () => caughtUp(b));
    expect(await lostAtCentre(b, head)).toBe(0);
    const v = await view('fra2');
    // The copy matched every row the centre held (nothing refused), and what the site signed since is proven against it.
    expect(v.refusals).toEqual([]);
    expect(v.alarms).toEqual([]);
    await waitFor('a checkpoint witnessed after the re-synchronisation', 10_000, async () => ((await view('fra2')).checkpointsWitnessed > witnessedBefore ? true : undefined));
  }, 60_000);

  it('a site whose log was rewritten during the cut is refused: the centre keeps what it witnessed', async () => {
    const head = await waitFor('fra2 caught up', 20_000, () => caughtUp(b));
    const target = head - 3;
    const [held] = await query<{ hash: Buffer; data: unknown }>(centre.server.connectionString, 'SELECT hash, data FROM ledger_events WHERE site = $1 AND position = $2', ['fra2', target]);
    b.proxy.cutLink('blackhole');
    // Only a superuser can step past the site's append-only triggers.
    await query(b.superuserUrl, `SET session_replication_role = replica; UPDATE ledger_events SET data = jsonb_set(data, '{site}', '"elsewhere"') WHERE position = ${target}; SET session_replication_role = origin`);
    await b.appendOutcomes(2);
    b.proxy.restore();
    const refused = await waitFor('fra2 refused', 30_000, async () => {
      const v = await view('fra2');
      return v.state === 'refused' ? v : undefined;
    });
    expect(refused.refusals[0]).toMatchObject({ kind: 'rewrite', position: target });
    expect(refused.alarms.map((alarm) => alarm.code)).toContain('SITE_LOG_REFUSED');
    const [kept] = await query<{ hash: Buffer; data: unknown }>(centre.server.connectionString, 'SELECT hash, data FROM ledger_events WHERE site = $1 AND position = $2', ['fra2', target]);
    expect(kept!.hash.equals(held!.hash)).toBe(true);
    expect(kept!.data).toEqual(held!.data);
    await waitFor('the subscription stopped', 10_000, async () => {
      const [sub] = await query<{ subenabled: boolean }>(centre.server.connectionString, "SELECT subenabled FROM pg_subscription WHERE subname = 'fleet_site_fra2'");
      return sub && !sub.subenabled ? true : undefined;
    });
    // The other site is untouched.
    expect(await stateOf('ams1')).toBe('live');
    expect((await view('ams1')).refusals).toEqual([]);
  }, 60_000);

  it('a centre rebuilt from scratch holds the same logs and answers, and finds the rewrite on its own', async () => {
    // Beside the first centre: its slots on the sites are its own.
    await fresh!.centre.addSite(a.card);
    await fresh!.centre.addSite(b.card);
    fresh!.centre.start();
    const freshView = async (site: string): Promise<SiteView> => (await fleetSites(fresh!.centre.pool)).find((v) => v.site === site)!;
    const head = await a.head();
    await waitFor('ams1 at the fresh centre', 20_000, async () => {
      const v = await freshView('ams1');
      return v.state === 'live' && v.readModelPosition >= head ? true : undefined;
    });
    const [comparison] = await fresh!.centre.compareWithRebuild('ams1');
    expect(comparison!.matches).toBe(true);
    const counts = async (c: TestCentre) => (await query<{ n: string }>(c.server.connectionString, 'SELECT count(*) AS n FROM ledger_events WHERE site = $1 AND position <= $2', ['ams1', head]))[0]!.n;
    expect(await counts(fresh!)).toBe(await counts(centre));
    // fra2's copy carries the row rewritten on the site: its hash no longer matches its content, and the fresh centre refuses it.
    const refused = await waitFor('fra2 refused by the fresh centre', 20_000, async () => {
      const v = await freshView('fra2');
      return v.state === 'refused' ? v : undefined;
    });
    expect(refused.refusals[0]).toMatchObject({ kind: 'chain' });
    expect(refused.verifiedPosition).toBeLessThan(refused.refusals[0]!.position!);
  }, 60_000);
});
