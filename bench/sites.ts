/**
 * Sites that stand alone, federated at a centre: two site ledgers (`fleet-ledger start --site`, each polling its own
 * simulated BMCs on its own embedded PostgreSQL) and a centre (`fleet-ledger centre`, a third PostgreSQL subscribed to
 * both through logical replication), the centre's link to one site through a TCP fault proxy. Under the sites' polling
 * load, the link is cut (`blackhole`: nothing passes, nothing is refused) for `--cut-s` seconds, then restored.
 *
 * One row:
 * - events_site: events the cut site appended during the cut (it went on alone);
 * - lost_events: of the cut site's log up to the restore, rows missing or different at the centre after catch-up;
 * - site_dark_detected_during_cut: a rack of the cut site is darkened in its simulator during the cut, and the site's
 *   own liveness found its nodes dark before the cut ended (null when the cut is shorter than the site's dark rule);
 * - centre_showed_cut_site_dark_during_cut: nodes of the cut site the centre showed dark during the cut (0: the WAN
 *   never darkens a node), and after catch-up the centre shows the rack dark as the site found it;
 * - partition_shown_s: from the cut to the centre showing the site partitioned (goal: within two intervals);
 * - catchup_s: from the restore until the centre is live on the site and holds, verified, everything the site held
 *   at the restore;
 * - global_matches_rebuild: the centre's read models equal a rebuild from the replicated logs (every site, every table);
 * - site_checkpoints_witnessed: checkpoints the centre proved against the logs it holds (both sites).
 *
 *   npm run bench:sites -- --json [--cut-s 600] [--interval 5] [--bmcs-per-site 250]
 */
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import { darkNodes, type LivenessTables } from '../projections/index.js';
import type { SiteCard, SiteView } from '../src/federation/index.js';
import { startCentreProcess, type CentreProcess } from './support/centre-process.js';
import { startFaultProxy, type FaultProxy } from './support/fault-proxy.js';
import { freePort } from './support/free-port.js';
import { startLedgerProcess, type LedgerProcess } from './support/ledger-process.js';

const { values } = parseArgs({
  options: {
    json: { type: 'boolean' },
    'cut-s': { type: 'string', default: '600' },
    interval: { type: 'string', default: '5' },
    'bmcs-per-site': { type: 'string', default: '250' },
    'settle-s': { type: 'string', default: '30' },
    keep: { type: 'boolean' },
  },
});
const cutS = Number(values['cut-s']);
const intervalS = Number(values.interval);
const perSite = Number(values['bmcs-per-site']);
const settleS = Number(values['settle-s']);
const log = (line: string): void => void process.stderr.write(`${new Date().toISOString()} ${line}\n`);
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
const round = (n: number, digits = 2): number => Math.round(n * 10 ** digits) / 10 ** digits;

const siteNames = ['ams1', 'fra2'] as const;
const cutSite = 'fra2';
const darkRack = `${cutSite}-r002`;

const base = mkdtempSync(join(tmpdir(), 'fleet-ledger-bench-sites-'));
chmodSync(base, 0o755); // as root, each PostgreSQL runs as the postgres user, which must enter the folder
const nodesPerRack = 25;
const scenario = {
  name: 'bench-sites',
  seed: 43,
  clockFactor: 1,
  fleet: { mix: [{ profile: 'dell', share: 2 }, { profile: 'hpe', share: 1 }, { profile: 'supermicro', share: 1 }] },
  sites: siteNames.map((id) => ({ id, racks: Math.max(2, Math.ceil(perSite / nodesPerRack)), nodesPerRack })),
};
const scenarioFile = join(base, 'scenario.yaml');
writeFileSync(scenarioFile, JSON.stringify(scenario));

const sites = new Map<string, LedgerProcess>();
let centre: CentreProcess | null = null;
let proxy: FaultProxy | null = null;
const pools: pg.Pool[] = [];

async function sitesView(): Promise<SiteView[]> {
  const response = await fetch(`${centre!.url}/v1/fleet/sites`, { headers: centre!.headers, signal: AbortSignal.timeout(10_000) });
  return ((await response.json()) as { sites: SiteView[] }).sites;
}
const viewOf = (views: SiteView[], site: string): SiteView => views.find((v) => v.site === site)!;

async function waitFor<T>(what: string, timeoutMs: number, check: () => Promise<T | undefined>, everyMs = 250): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check().catch(() => undefined);
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs / 1000} s waiting for ${what}`);
    await sleep(everyMs);
  }
}

try {
  log(`starting sites ${siteNames.join(', ')} (${perSite} BMCs each, interval ${intervalS} s)`);
  for (const site of siteNames) {
    const started = await startLedgerProcess({
      args: ['--site', site, '--scenario', scenarioFile, '--interval', String(intervalS), '--data-dir', join(base, site), '--checkpoint-interval', '10'],
      env: {},
      until: 'ready',
      timeoutMs: 300_000,
      onSpawn: (p) => sites.set(site, p),
    });
    sites.set(site, started);
  }
  const cards = Object.fromEntries(siteNames.map((site) => [site, JSON.parse(readFileSync(join(base, site, 'site-card.json'), 'utf8')) as SiteCard]));
  const cutCard = cards[cutSite]!;
  const publisher = new URL(cutCard.publisherUrl);
  proxy = await startFaultProxy({ host: publisher.hostname, port: Number(publisher.port) });
  const centrePgPort = await freePort();
  const centreDir = join(base, 'centre');
  centre = await startCentreProcess(['--data-dir', centreDir, '--pg-port', String(centrePgPort), '--check-ms', '250', ...siteNames.flatMap((site) => ['--site-card', join(base, site, 'site-card.json')]), '--via', `${cutSite}=127.0.0.1:${proxy.port}`]);
  log(`centre up at ${centre.url}; ${cutSite}'s link through the fault proxy on ${proxy.port}`);
  await waitFor('both sites live at the centre', 180_000, async () => {
    const views = await sitesView();
    return views.length === 2 && views.every((v) => v.state === 'live') ? true : undefined;
  });

  // The cut site's own database: its log (the replicator may read it), its liveness (its superuser).
  const sitePool = new pg.Pool({ connectionString: cutCard.publisherUrl, max: 2 });
  pools.push(sitePool);
  const credentials = JSON.parse(readFileSync(join(base, cutSite, 'credentials.json'), 'utf8')) as { user: string; password: string };
  const siteAdmin = new pg.Pool({ connectionString: `postgres://${encodeURIComponent(credentials.user)}:${encodeURIComponent(credentials.password)}@127.0.0.1:${publisher.port}/fleet_ledger`, max: 2 });
  pools.push(siteAdmin);
  const siteLiveness = new Kysely<LivenessTables>({ dialect: new PostgresDialect({ pool: siteAdmin }) });
  const head = async (): Promise<number> => Number((await sitePool.query<{ p: string | null }>('SELECT max(position) AS p FROM ledger_events')).rows[0]?.p ?? 0);
  const retained = async (): Promise<number> => Number((await sitePool.query<{ b: string | null }>("SELECT max(greatest(pg_wal_lsn_diff(pg_current_wal_lsn(), restart_lsn), 0))::bigint AS b FROM pg_replication_slots WHERE slot_type = 'logical'")).rows[0]?.b ?? 0);
  const simControl = /simulator control at (http:\/\/[0-9.:]+)/.exec(sites.get(cutSite)!.output())?.[1];
  if (!simControl) throw new Error(`no simulator control address in ${cutSite}'s output`);

  log(`settling ${settleS} s under load`);
  await sleep(settleS * 1000);
  await waitFor(`${cutSite} caught up before the cut`, 60_000, async () => {
    const h = await head();
    return viewOf(await sitesView(), cutSite).verifiedPosition >= h - 50 ? true : undefined;
  });

  // The cut.
  const headAtCut = await head();
  const cutAt = Date.now();
  proxy.cutLink('blackhole');
  log(`link to ${cutSite} cut at its position ${headAtCut}, for ${cutS} s`);
  let partitionShownS: number | null = null;
  let partitionAsOf: string | null = null;
  let otherNotLive = 0;
  let faultInjected = false;
  let siteDarkDetectedS: number | null = null;
  let centreShowedDark = 0;
  let retainedPeak = 0;
  let lastSlow = 0;
  while (Date.now() - cutAt < cutS * 1000) {
    const views = await sitesView().catch(() => null);
    if (views) {
      const cut = viewOf(views, cutSite);
      if (partitionShownS === null && cut.state === 'partitioned') {
        partitionShownS = (Date.now() - cutAt) / 1000;
        partitionAsOf = cut.asOf;
        log(`centre shows ${cutSite} partitioned after ${round(partitionShownS)} s: ${cut.detail}`);
      }
      if (viewOf(views, 'ams1').state !== 'live') otherNotLive += 1;
    }
    const elapsedS = (Date.now() - cutAt) / 1000;
    if (!faultInjected && elapsedS >= 2 * intervalS + 2) {
      const remaining = Math.ceil(cutS - elapsedS) + 120;
      const response = await fetch(`${simControl}/sim/faults`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ kind: 'dark', target: { rack: darkRack }, duration: `${remaining}s` }) });
      if (!response.ok) throw new Error(`injecting the fault: ${response.status} ${await response.text()}`);
      faultInjected = true;
      log(`rack ${darkRack} darkened at ${cutSite} (${remaining} s)`);
    }
    if (Date.now() - lastSlow > 2_000) {
      lastSlow = Date.now();
      if (siteDarkDetectedS === null && faultInjected) {
        const dark = (await darkNodes(siteLiveness)).filter((node) => node.rack === darkRack).length;
        if (dark > 0) {
          siteDarkDetectedS = (Date.now() - cutAt) / 1000;
          log(`${cutSite} found ${dark} nodes of ${darkRack} dark on its own, ${round(siteDarkDetectedS)} s into the cut`);
        }
      }
      const nodes = await fetch(`${centre.url}/v1/fleet/nodes?site=${cutSite}&state=dark`, { headers: centre.headers }).then((r) => r.json() as Promise<{ nodes: unknown[] }>).catch(() => ({ nodes: [] }));
      centreShowedDark = Math.max(centreShowedDark, nodes.nodes.length);
      retainedPeak = Math.max(retainedPeak, await retained());
    }
    await sleep(250);
  }
  const headAtRestore = await head();
  const eventsSite = headAtRestore - headAtCut;
  proxy.restore();
  const restoredAt = Date.now();
  log(`link restored; ${cutSite} appended ${eventsSite} events during the cut (slot held up to ${retainedPeak} bytes)`);
  let heardAgainS: number | null = null;
  await waitFor(`${cutSite} caught up`, 30 * 60_000, async () => {
    const cut = viewOf(await sitesView(), cutSite);
    if (heardAgainS === null && cut.state !== 'partitioned') heardAgainS = (Date.now() - restoredAt) / 1000;
    return cut.state === 'live' && cut.verifiedPosition >= headAtRestore ? true : undefined;
  });
  const catchupS = (Date.now() - restoredAt) / 1000;
  log(`caught up ${round(catchupS)} s after the restore`);

  // Nothing lost: the cut site's log up to the restore, row for row, against the centre's copy.
  const centreCredentials = JSON.parse(readFileSync(join(centreDir, 'credentials.json'), 'utf8')) as { user: string; password: string };
  const centrePool = new pg.Pool({ connectionString: `postgres://${encodeURIComponent(centreCredentials.user)}:${encodeURIComponent(centreCredentials.password)}@127.0.0.1:${centrePgPort}/fleet_centre`, max: 2 });
  pools.push(centrePool);
  const siteRows = (await sitePool.query<{ position: string; hash: Buffer }>('SELECT position, hash FROM ledger_events WHERE position <= $1', [headAtRestore])).rows;
  const centreRows = new Map((await centrePool.query<{ position: string; hash: Buffer }>('SELECT position, hash FROM ledger_events WHERE site = $1 AND position <= $2', [cutSite, headAtRestore])).rows.map((row) => [Number(row.position), row.hash.toString('hex')]));
  const lostEvents = siteRows.filter((row) => centreRows.get(Number(row.position)) !== row.hash.toString('hex')).length;

  // What the site found on its own reaches the centre with the backlog.
  const darkAfter = await waitFor('the dark rack at the centre', 120_000, async () => {
    const nodes = (await fetch(`${centre!.url}/v1/fleet/nodes?site=${cutSite}&state=dark`, { headers: centre!.headers }).then((r) => r.json())) as { nodes: Array<{ rack: string }> };
    const n = nodes.nodes.filter((node) => node.rack === darkRack).length;
    return siteDarkDetectedS === null || n > 0 ? n : undefined;
  }).catch(() => 0);

  log('rebuilding the centre read models from the replicated logs to compare');
  const rebuild = (await fetch(`${centre.url}/v1/fleet/rebuild-check`, { headers: centre.headers, signal: AbortSignal.timeout(30 * 60_000) }).then((r) => r.json())) as { matches: boolean; sites: Array<{ site: string; position: number; matches: boolean; seconds: number; tables: Array<{ table: string; differing: number }> }> };
  const views = await sitesView();
  const row = {
    bench: 'sites',
    sites: siteNames.length,
    replication: 'postgresql-logical',
    postgresql_instances: 3,
    bmcs_per_site: scenario.sites[0]!.racks * nodesPerRack,
    interval_s: intervalS,
    cut_s: cutS,
    cut: 'blackhole (TCP fault proxy between the centre and the site)',
    events_site: eventsSite,
    lost_events: lostEvents,
    site_dark_detected_during_cut: siteDarkDetectedS === null ? (cutS < 13 * intervalS + 5 ? null : false) : true,
    site_dark_detected_s: siteDarkDetectedS === null ? null : round(siteDarkDetectedS),
    centre_showed_cut_site_dark_during_cut: centreShowedDark,
    centre_dark_rack_nodes_after_catchup: darkAfter,
    partition_shown_s: partitionShownS === null ? null : round(partitionShownS),
    partition_as_of: partitionAsOf,
    // The rule counts from the last heartbeat heard: two intervals missed.
    partition_shown_after_last_heard_s: partitionShownS === null || partitionAsOf === null ? null : round((cutAt + partitionShownS * 1000 - Date.parse(partitionAsOf)) / 1000),
    other_site_not_live_samples: otherNotLive,
    slot_retained_peak_bytes: retainedPeak,
    heard_again_s: heardAgainS === null ? null : round(heardAgainS),
    catchup_s: round(catchupS),
    global_matches_rebuild: rebuild.matches,
    rebuild: rebuild.sites.map((s) => ({ site: s.site, position: s.position, matches: s.matches, seconds: round(s.seconds), differing: s.tables.filter((t) => t.differing > 0).map((t) => t.table) })),
    site_checkpoints_witnessed: views.reduce((sum, v) => sum + v.checkpointsWitnessed, 0),
    checkpoints_witnessed_per_site: Object.fromEntries(views.map((v) => [v.site, v.checkpointsWitnessed])),
    refusals: views.reduce((sum, v) => sum + v.refusals.length, 0),
    site_alarms_open: views.flatMap((v) => v.alarms.map((a) => `${v.site}:${a.code}`)),
  };
  process.stdout.write(values.json ? `${JSON.stringify(row)}\n` : `${JSON.stringify(row, null, 2)}\n`);
} finally {
  await Promise.allSettled(pools.map((pool) => pool.end()));
  await centre?.stop().catch(() => centre?.kill());
  await Promise.allSettled([...sites.values()].map((site) => site.stop().catch(() => site.kill())));
  await proxy?.close();
  if (!values.keep) rmSync(base, { recursive: true, force: true });
}
