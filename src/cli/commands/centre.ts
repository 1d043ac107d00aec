/**
 * `fleet-ledger centre`: the fleet's centre. Its own PostgreSQL (embedded, or DATABASE_URL: a role that may create
 * subscriptions) subscribes to each site's log and checkpoints through PostgreSQL's logical replication, witnesses
 * them, applies the fleet's read models per site and answers for the whole fleet (src/federation).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { hostname } from 'node:os';
import { apiTokens, demoTokenListing } from '../../api/index.js';
import { Centre, centrePostgresSettings, serveCentreApi, siteName, type SiteCard } from '../../federation/index.js';
import { startEmbeddedPostgres, type EmbeddedPostgresHandle } from '../../ledger/index.js';
import { loadOrCreateSigner } from '../../../replay/audit/index.js';
import { logger } from '../../logger.js';
import { parseCommand } from '../parse-command.js';

export const summary = 'the fleet centre: subscribes to every site ledger (logical replication), witnesses their logs, answers fleet-wide';

const usage = `fleet-ledger centre --site-card FILE [--site-card FILE ...] [options]
  --site-card FILE  a site's card (<site data-dir>/site-card.json, written by fleet-ledger start --site): its name,
                    where its PostgreSQL publishes (the replicator role), its checkpoint key (pinned here) and its
                    heartbeat interval. Repeat for every site; a site added before keeps its subscription
  --via SITE=HOST:PORT   reach SITE's PostgreSQL at HOST:PORT instead of the card's address (a tunnel, a proxy)
  --resync SITE     re-synchronise SITE from its log (its slot was lost): a new subscription copies the site's log
                    again; every row the centre holds is compared as it arrives (repeatable)
  --port P          the fleet API on 127.0.0.1 (default 8090; FLEET_LEDGER_API_HOST to bind elsewhere):
                    GET /v1/fleet/sites, /v1/fleet/liveness, /v1/fleet/nodes, /v1/fleet/alarms, /v1/fleet/vector;
                    node intents and alarm acks forwarded to their site (the site API's paths: fleet-ledger nodes
                    cordon N --url <centre>), fleet rollouts (fleet-ledger fleet rollout)
  --data-dir DIR    the centre's embedded data folder (default ./.fleet-centre); its witness key lives there
  --pg-port P       the embedded PostgreSQL's port
  --check-ms MS     how often sites are judged and their logs followed (default 1000)
  DATABASE_URL      use that PostgreSQL server (14 or newer) instead of the embedded one
`;

export async function run(argv: string[]): Promise<number> {
  const parsed = parseCommand(
    'centre',
    argv,
    {
      'site-card': { type: 'string', multiple: true },
      via: { type: 'string', multiple: true },
      resync: { type: 'string', multiple: true },
      port: { type: 'string', default: '8090' },
      'data-dir': { type: 'string' },
      'pg-port': { type: 'string' },
      'check-ms': { type: 'string', default: '1000' },
    },
    usage,
    false,
    { 'data-dir': { kind: 'directory-if-present', what: 'data folder' } },
  );
  if (typeof parsed === 'number') return parsed;
  const { values } = parsed;
  const cards: SiteCard[] = [];
  for (const file of values['site-card'] ?? []) {
    try {
      const card = JSON.parse(readFileSync(file, 'utf8')) as SiteCard;
      siteName(card.site);
      if (typeof card.publisherUrl !== 'string' || typeof card.verifierKey !== 'string' || typeof card.intervalS !== 'number') throw new Error('it lacks publisherUrl, verifierKey or intervalS');
      if (card.api !== undefined && (typeof card.api?.url !== 'string' || typeof card.api?.token !== 'string')) throw new Error('its api is not { url, token }');
      cards.push(card);
    } catch (error) {
      process.stderr.write(`fleet-ledger centre: --site-card ${file}: ${error instanceof Error ? error.message : String(error)}\n`);
      return 2;
    }
  }
  for (const via of values.via ?? []) {
    const match = /^([^=]+)=([^:]+):(\d+)$/.exec(via);
    const card = match ? cards.find((c) => c.site === match[1]) : undefined;
    if (!match || !card) {
      process.stderr.write(`fleet-ledger centre: --via '${via}' is not SITE=HOST:PORT for a site with a card\n`);
      return 2;
    }
    const url = new URL(card.publisherUrl);
    url.host = `${match[2]}:${match[3]}`;
    card.publisherUrl = url.toString();
  }
  const checkMs = Number(values['check-ms']);
  if (!Number.isFinite(checkMs) || checkMs < 50) {
    process.stderr.write(`fleet-ledger centre: --check-ms must be a number of milliseconds >= 50, got '${values['check-ms']}'\n`);
    return 2;
  }
  process.env.PGAPPNAME ??= `fleet-ledger centre ${hostname()}:${process.pid}`;
  const dataDir = values['data-dir'] ?? '.fleet-centre';
  let embedded: EmbeddedPostgresHandle | null = null;
  let centre: Centre | null = null;
  let api: Awaited<ReturnType<typeof serveCentreApi>> | null = null;
  const stopAll = async (): Promise<void> => {
    await api?.close().catch(() => undefined);
    await centre?.stop().catch((error: unknown) => logger.warn({ error: String(error) }, 'centre stopped with an error'));
    await embedded?.stop();
  };
  try {
    let connectionString = process.env.DATABASE_URL;
    if (!connectionString) {
      embedded = await startEmbeddedPostgres({
        dataDir,
        database: 'fleet_centre',
        ...(values['pg-port'] ? { port: Number(values['pg-port']) } : {}),
        settings: centrePostgresSettings(cards.length),
        log: (message) => (message.startsWith('embedded PostgreSQL') ? logger.warn({ component: 'postgres' }, message) : logger.debug({ component: 'postgres' }, message)),
      });
      connectionString = embedded.connectionString;
    }
    const witness = loadOrCreateSigner(join(dataDir, 'centre-witness.key'), `fleet-ledger-centre-${hostname()}`);
    centre = await Centre.open({
      connectionString,
      witnessSignerKey: witness.signerKey,
      checkMs,
      log: (message, fields) => (/ALARM|REFUSED/.test(message) ? logger.error({ component: 'centre', ...fields }, message) : logger.info({ component: 'centre', ...fields }, message)),
    });
    for (const card of cards) await centre.addSite(card);
    for (const site of values.resync ?? []) await centre.resync(siteName(site));
    if (centre.sites.length === 0) logger.warn('no site yet: give --site-card for each site');
    centre.start();
    // The API's tokens: FLEET_LEDGER_TOKENS_FILE / FLEET_LEDGER_TOKENS, else demo tokens printed once (0600 in the data folder).
    // Printed once the centre's API listens: a token shown is a token that works at once.
    const { table: tokens, demo } = apiTokens(dataDir);
    api = await serveCentreApi(centre, { port: Number(values.port), host: process.env.FLEET_LEDGER_API_HOST ?? '127.0.0.1', tokens });
    if (demo) process.stdout.write(demoTokenListing('centre demo tokens', demo));
    logger.info({ sites: centre.sites, centreId: centre.centreId, witnessKey: witness.verifierKey, api: `http://${process.env.FLEET_LEDGER_API_HOST ?? '127.0.0.1'}:${values.port}` }, `centre up: ${centre.sites.length} sites (${centre.sites.join(', ')}); fleet API on port ${values.port}; co-signs as ${witness.verifierKey}`);
  } catch (error) {
    await stopAll();
    process.stderr.write(`fleet-ledger centre: ${error instanceof Error ? error.message : String(error)}\n`);
    return 1;
  }
  await new Promise<void>((resolve) => {
    let stopping = false;
    const stop = (): void => {
      if (stopping) return;
      stopping = true;
      resolve();
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
  await stopAll();
  logger.info('centre stopped');
  return 0;
}
