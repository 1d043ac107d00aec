import { hostname } from 'node:os';
import type { Kysely } from 'kysely';
import { fleetProjections, livenessStateCounts, openAlarms, ThreadedProjectionRunner, type AlarmsTables, type LivenessTables } from '../../../projections/index.js';
import { readFileSync } from 'node:fs';
import { serveApi } from '../../api/index.js';
import { serveKurrent, type KurrentServer } from '../../kurrent/index.js';
import { credentialInForce, declareDemoEbom, demoCredentialStore, demoScenario, fileCredentials, followCredentialsInForce, keepSimulatorState, loadTargetFile, readRecordedFleet, registerSimulatedFleet, registerTargets, startSimulatedFleet } from '../../demo/index.js';
import type { VersionedCredentialStore } from '../../credentials/index.js';
import { StartedParts } from '../started-parts.js';
import { parseCommand } from '../parse-command.js';
import { AsOfEngine } from '../../../replay/as-of/index.js';
import { AuditService } from '../../../replay/audit/index.js';
import { openLedger } from '../../ledger/index.js';
import { logger } from '../../logger.js';
import { credentialRefusal, defaultPushPolicy, ThreadedPoller } from '../../poller/index.js';
import { siteTlsFromFlags } from '../site-tls-flags.js';
import { parseShardsPerSite, ThreadedClusterMember } from '../../cluster/index.js';
import { loadScenario, type Simulator } from '../../sim/index.js';
import { SagaSupervisor, type BmcAccess } from '../../../sagas/index.js';
import { loadOrCreateCentreToken, prepareSitePublication, replicatorUrl, SiteHeartbeat, siteName, sitePostgresSettings, type SiteCard } from '../../federation/index.js';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export const summary = 'start the ledger (embedded PostgreSQL or DATABASE_URL) with a simulated fleet, the poller and the projections';

const usage = `fleet-ledger start [options]
  --bmcs N          simulated BMCs (default 2000, in two sites; the script of examples/scenario-demo.yaml
                    plays out over the first minutes: a PDU fails, nodes flap, a ToR slows, a CDU trips).
                    Started again on the same data folder, only what changed is recorded: the same fleet appends
                    nothing; with another N, nodes no longer simulated are decommissioned (not polled, no alarm) and
                    new or returning ones registered (README: The two commands)
  --scenario FILE   a simulator scenario of your own instead
  --captures DIR    build the simulated BMCs from real Mockup-Creator captures in DIR instead of the built-in
                    vendor profiles (the demo's mix names folders in DIR; see src/sim/README.md)
  --interval S      liveness interval in seconds (default 60)
  --push            hold an audited SSE stream to every BMC that offers one (docs/push.md); default: poll only
  --no-sim          no simulated fleet: only the ledger, the projections and the API (and the poller with --targets)
  --targets FILE    with --no-sim: poll the real BMCs listed in FILE (YAML: targets: [{nodeId, site, rack, bmc
                    (https://... for Redfish, ipmi://host[:port] for IPMI-only BMCs, snmp://host[:port] for PDUs),
                    credentialRef, sessionLimit?, intervalS?}]); secrets from FLEET_LEDGER_CREDENTIALS_FILE
                    (JSON {"<credentialRef>": {"username", "password", "endpoints": ["10.20.0.0/16",
                    "bmc-*.ams1.example.com"]}}, mode 0600): a secret is sent only to the addresses it names,
                    and only over https
  --allow-http-site SITE   with --targets: BMCs of SITE may be polled over plain http (repeatable; * for all)
  --site-ca SITE=FILE      with --targets: BMC certificates of SITE are verified by this CA bundle (PEM) instead of
                           pinned on first use (repeatable; docs/tls.md)
  --insecure-site SITE     with --targets: BMC certificates of SITE are not verified (logged; repeatable)
  --min-tls SITE=VERSION   with --targets: the oldest TLS version SITE allows, TLSv1.2 (default) or TLSv1.3
  --port P          the API and dashboard port on 127.0.0.1 (default 8080; FLEET_LEDGER_API_HOST to bind elsewhere)
  --kurrent-port P  also serve the KurrentDB (EventStoreDB) gRPC protocol on P (off by default; npm start uses
                    2113): over TLS, clients authenticate as <principal>:<API token> and read and append what
                    their role may, as over HTTP (src/kurrent/README.md); esdb://127.0.0.1:P?tls=false callers
                    are anonymous and get nothing, and credentials sent over plaintext are refused
  --kurrent-tls-cert FILE, --kurrent-tls-key FILE   PEM certificate chain and key: the KurrentDB face serves TLS
  --kurrent-anonymous-envelopes   callers without credentials may read the log's envelopes (no payloads)
  --data-dir DIR    embedded data folder (default ./.fleet-ledger)
  --min-free-mb M   embedded: free space kept on the data folder's disk; below it appends are refused with
                    LEDGER_STORAGE_FULL (507) before PostgreSQL meets a full disk (default 128)
  --checkpoint-key FILE   the Ed25519 key that signs checkpoints (default <data-dir>/checkpoint-signer.key,
                    created 0600 on first start; its public key is printed and served at /v1/audit/public-key)
  --publish-dir DIR where signed checkpoints and Merkle tiles are published for witnesses and auditors
                    (C2SP tlog-tiles layout; default <data-dir>/transparency); keep it outside the database host
  --checkpoint-interval S   seconds between checkpoints while the log grows (default 10)
  --shards LIST     poll only these sites or shards (comma-separated; pins them to this process); default: a fair
                    share of the shards no process pinned, balanced across the processes sharing DATABASE_URL
  --site-shards SPEC   split large sites into hash ranges: site-a=4,site-b=2 (every process must be given the same)
  --lease-ttl S     how long a poll lease lasts without renewal (default 15): a dead process's shards are taken
                    over after it (plus 2 s), renewed every third of it
  --site NAME       run a site ledger: everything for site NAME on its own PostgreSQL (its log, checkpoints and
                    key), polling only NAME's BMCs, recording a heartbeat every --interval, and publishing its log
                    and checkpoints for a centre (logical replication; wal_level=logical). Writes the site's card
                    for the centre to <data-dir>/site-card.json (0600: it holds the replication password). Nothing in
                    it needs the centre (docs/architecture.md, "Sites and the centre")
  --slot-keep SIZE  with --site: the most WAL a centre's replication slot may hold through a cut (default 1GB;
                    max_slot_wal_keep_size); the heartbeat warns at half of it, past it the centre re-synchronises
  --publish-listen ADDRS   with --site (embedded): the addresses PostgreSQL listens on for a centre on another
                    machine (listen_addresses; default 127.0.0.1); allow the centre in pg_hba.conf
  --advertise HOST[:PORT]  with --site: the address the centre reaches the site's PostgreSQL at (the card's)
  --advertise-api URL      with --site: the address the centre reaches the site's API at, to forward intents
                    (default http://<FLEET_LEDGER_API_HOST or 127.0.0.1>:<port>); the card carries it with the
                    forwarder token the site issues its centre (<data-dir>/centre-token.json, 0600)
  FLEET_LEDGER_REPLICATOR_PASSWORD  with --site: the replicator role's password (default: generated once and kept in
                    <data-dir>/replication.json); give the same to every process of a site that shares DATABASE_URL
  DATABASE_URL      use that PostgreSQL server instead of the embedded one; several processes may share one
                    (README: Running on more than one machine)
  DATABASE_READ_URL a streaming replica of it: the query routes read there, each answer stating the position it
                    reflects and the replica's lag (intents, the log, rollouts and history stay on the primary)
`;

async function livenessSummary(db: Kysely<LivenessTables>): Promise<Record<string, number>> {
  try {
    return await livenessStateCounts(db);
  } catch {
    return {};
  }
}

export async function run(argv: string[]): Promise<number> {
  const started = new StartedParts();
  try {
    return await startFleet(argv, started);
  } catch (error) {
    // A start that fails before it is up says why in one line and stops what it started (the embedded PostgreSQL
    // last): never a stack trace and a database left running.
    logger.debug({ error: error instanceof Error ? error.stack : String(error) }, 'start failed');
    await started.stopAll((part, stopError) => logger.warn({ part, error: String(stopError) }, 'stopped with an error'));
    process.stderr.write(`fleet-ledger start: ${error instanceof Error ? error.message : String(error)}\nfleet-ledger start: not started; everything it had started is stopped\n`);
    return 1;
  }
}

async function startFleet(argv: string[], started: StartedParts): Promise<number> {
  const parsed = parseCommand(
    'start',
    argv,
    {
      bmcs: { type: 'string', default: '2000' },
      scenario: { type: 'string' },
      captures: { type: 'string' },
      interval: { type: 'string', default: '60' },
      'no-sim': { type: 'boolean', default: false },
      push: { type: 'boolean', default: false },
      targets: { type: 'string' },
      'allow-http-site': { type: 'string', multiple: true },
      'site-ca': { type: 'string', multiple: true },
      'insecure-site': { type: 'string', multiple: true },
      'min-tls': { type: 'string', multiple: true },
      'data-dir': { type: 'string' },
      'min-free-mb': { type: 'string', default: '128' },
      'pg-port': { type: 'string' },
      port: { type: 'string' },
      'checkpoint-key': { type: 'string' },
      'publish-dir': { type: 'string' },
      'checkpoint-interval': { type: 'string', default: '10' },
      'kurrent-port': { type: 'string' },
      'kurrent-tls-cert': { type: 'string' },
      'kurrent-tls-key': { type: 'string' },
      'kurrent-anonymous-envelopes': { type: 'boolean', default: false },
      shards: { type: 'string' },
      'site-shards': { type: 'string' },
      'lease-ttl': { type: 'string', default: '15' },
      site: { type: 'string' },
      'slot-keep': { type: 'string', default: '1GB' },
      'publish-listen': { type: 'string' },
      advertise: { type: 'string' },
      'advertise-api': { type: 'string' },
    },
    usage,
    false,
    {
      scenario: { kind: 'file', what: 'scenario file' },
      captures: { kind: 'directory', what: 'captures folder' },
      targets: { kind: 'file', what: 'targets file' },
      'kurrent-tls-cert': { kind: 'file', what: 'PEM certificate file' },
      'kurrent-tls-key': { kind: 'file', what: 'PEM key file' },
      'checkpoint-key': { kind: 'file-if-present', what: 'checkpoint signer key file' },
      'publish-dir': { kind: 'directory-if-present', what: 'publish folder' },
      'data-dir': { kind: 'directory-if-present', what: 'data folder' },
    },
  );
  if (typeof parsed === 'number') return parsed;
  const { values } = parsed;
  const intervalS = Number(values.interval);
  // Every connection names its process, so pg_stat_activity and pg_locks tell which process runs which projection,
  // saga or lease (several processes may share the database).
  process.env.PGAPPNAME ??= `fleet-ledger ${hostname()}:${process.pid}`;
  const checkpointIntervalS = Number(values['checkpoint-interval']);
  if (!Number.isFinite(checkpointIntervalS) || checkpointIntervalS < 1) {
    process.stderr.write(`fleet-ledger start: --checkpoint-interval must be a number of seconds >= 1, got '${values['checkpoint-interval']}'\n`);
    return 2;
  }
  const minFreeMb = Number(values['min-free-mb']);
  if (!Number.isFinite(minFreeMb) || minFreeMb < 0) {
    process.stderr.write(`fleet-ledger start: --min-free-mb must be a number of MiB >= 0, got '${values['min-free-mb']}'\n`);
    return 2;
  }
  const kurrentPort = values['kurrent-port'] === undefined ? null : Number(values['kurrent-port']);
  if (kurrentPort !== null && (!Number.isInteger(kurrentPort) || kurrentPort < 0 || kurrentPort > 65_535)) {
    process.stderr.write(`fleet-ledger start: --kurrent-port must be a port number, got '${values['kurrent-port']}'\n`);
    return 2;
  }
  if (Boolean(values['kurrent-tls-cert']) !== Boolean(values['kurrent-tls-key'])) {
    process.stderr.write('fleet-ledger start: --kurrent-tls-cert and --kurrent-tls-key go together\n');
    return 2;
  }
  const leaseTtlS = Number(values['lease-ttl']);
  if (!Number.isFinite(leaseTtlS) || leaseTtlS < 1 || leaseTtlS > 3600) {
    process.stderr.write(`fleet-ledger start: --lease-ttl must be a number of seconds from 1 to 3600, got '${values['lease-ttl']}'\n`);
    return 2;
  }
  let shardsPerSite: Record<string, number> = {};
  try {
    shardsPerSite = values['site-shards'] ? parseShardsPerSite(values['site-shards']) : {};
  } catch (error) {
    process.stderr.write(`fleet-ledger start: --site-shards: ${error instanceof Error ? error.message : String(error)}\n`);
    return 2;
  }
  const pinnedShards = values.shards ? values.shards.split(',').map((part) => part.trim()).filter(Boolean) : undefined;
  if (values.shards !== undefined && pinnedShards!.length === 0) {
    process.stderr.write('fleet-ledger start: --shards needs at least one site or shard name\n');
    return 2;
  }
  let site: string | null = null;
  if (values.site !== undefined) {
    try {
      site = siteName(values.site);
    } catch (error) {
      process.stderr.write(`fleet-ledger start: --site: ${error instanceof Error ? error.message : String(error)}\n`);
      return 2;
    }
    if (pinnedShards) {
      process.stderr.write('fleet-ledger start: --site polls its own site only; leave out --shards\n');
      return 2;
    }
    if (!/^\d+(\.\d+)?\s*(kB|MB|GB|TB)$/.test(values['slot-keep']!)) {
      process.stderr.write(`fleet-ledger start: --slot-keep must be a size such as 512MB or 4GB, got '${values['slot-keep']}'\n`);
      return 2;
    }
  } else if (values['publish-listen'] || values.advertise) {
    process.stderr.write('fleet-ledger start: --publish-listen and --advertise go with --site\n');
    return 2;
  }
  const siteDataDir = values['data-dir'] ?? process.env.FLEET_LEDGER_DATA_DIR ?? '.fleet-ledger';
  // A site keeps its replication password and its port across restarts: the centre's subscription names both.
  const replicationFile = join(siteDataDir, 'replication.json');
  let replication: { password: string; port?: number } | null = null;
  if (site) {
    mkdirSync(siteDataDir, { recursive: true });
    replication = existsSync(replicationFile) ? (JSON.parse(readFileSync(replicationFile, 'utf8')) as { password: string; port?: number }) : { password: randomBytes(18).toString('base64url') };
    // Several processes of one site on one DATABASE_URL share the replicator's password (each start sets it).
    if (process.env.FLEET_LEDGER_REPLICATOR_PASSWORD) replication.password = process.env.FLEET_LEDGER_REPLICATOR_PASSWORD;
  }
  const pinnedOrSite = site ? [site] : pinnedShards;
  let kurrentTls: { certChain: Buffer; privateKey: Buffer } | null = null;
  if (values['kurrent-tls-cert'] && values['kurrent-tls-key']) {
    try {
      kurrentTls = { certChain: readFileSync(values['kurrent-tls-cert']), privateKey: readFileSync(values['kurrent-tls-key']) };
    } catch (error) {
      process.stderr.write(`fleet-ledger start: cannot read the KurrentDB TLS files: ${error instanceof Error ? error.message : String(error)}\n`);
      return 2;
    }
  }
  const ledger = await openLedger({
    databaseUrl: process.env.DATABASE_URL,
    dataDir: values['data-dir'] ?? process.env.FLEET_LEDGER_DATA_DIR,
    port: values['pg-port'] ? Number(values['pg-port']) : replication?.port,
    minFreeBytes: minFreeMb * 2 ** 20,
    ...(site && replication
      ? {
          postgresSettings: sitePostgresSettings({ maxSlotWalKeepSize: values['slot-keep']!.replace(/\s+/g, ''), ...(values['publish-listen'] ? { listenAddresses: values['publish-listen'] } : {}) }),
          prepare: (ownerUrl: string) => prepareSitePublication(ownerUrl, site, replication.password),
        }
      : {}),
    // The server's own lines are detail; the supervisor's (it stopped, it is started again) are for the operator.
    log: (message) => (message.startsWith('embedded PostgreSQL') ? logger.warn({ component: 'postgres' }, message) : logger.debug({ component: 'postgres' }, message)),
  });
  started.add('ledger', () => ledger.close());
  const { store } = ledger;
  logger.info({ backend: ledger.backend, location: ledger.location, headPosition: (await store.head()).position }, `ledger up: ${ledger.location}`);

  // The projections apply on a thread of their own: the poller's work does not hold up their round trips.
  const runner = new ThreadedProjectionRunner({ connectionString: ledger.connectionString, log: (message, fields) => logger.warn(fields ?? {}, message) });
  started.add('projections', () => runner.stop());
  await runner.start();
  const dataDir = values['data-dir'] ?? process.env.FLEET_LEDGER_DATA_DIR ?? '.fleet-ledger';
  // The transparency log: the Merkle tree follows the log, checkpoints are signed and published outside the database.
  const audit = await AuditService.start({
    connectionString: ledger.connectionString,
    dataDir,
    ...(values['checkpoint-key'] ? { keyPath: values['checkpoint-key'] } : {}),
    ...(values['publish-dir'] ? { publishDir: values['publish-dir'] } : {}),
    checkpointIntervalMs: checkpointIntervalS * 1000,
    log: (message, fields) => logger.warn({ component: 'audit', ...fields }, message),
    // Appends never reuse a signed position; a log found tampered with is a critical alarm (readyz and metrics say it too).
    store,
    onAlarm: (alarm) => logger.fatal({ component: 'audit', alarm: { code: alarm.code, finding: alarm.finding, detectedAt: alarm.detectedAt } }, `LEDGER INTEGRITY ALARM (${alarm.code}): ${alarm.summary}; checkpoint signing stopped`),
  });
  // Time travel: questions as of any point answered from the projections' versioned read models (nothing to take).
  const asOf = new AsOfEngine(store, { log: (message, fields) => logger.warn({ component: 'as-of', ...fields }, message) });
  started.add('audit', () => audit.stop());
  started.add('as-of', () => asOf.stop());
  await asOf.start();
  logger.info({ origin: audit.origin, publicKey: audit.signer.verifierKey, publishDir: audit.publishDir, keyFile: audit.signer.path }, `checkpoints signed by ${audit.signer.verifierKey}${audit.publishDir ? `, published to ${audit.publishDir}` : ''}`);

  // A site: its heartbeat, and the card a centre subscribes with.
  let heartbeat: SiteHeartbeat | null = null;
  const apiPort = Number(values.port ?? process.env.FLEET_LEDGER_API_PORT ?? 8080);
  const centreToken = site ? loadOrCreateCentreToken(siteDataDir) : null;
  if (site && replication && centreToken) {
    const port = Number(new URL(ledger.connectionString).port);
    writeFileSync(replicationFile, JSON.stringify({ password: replication.password, port }), { mode: 0o600 });
    const api = { url: values['advertise-api'] ?? `http://${process.env.FLEET_LEDGER_API_HOST ?? '127.0.0.1'}:${apiPort}`, token: centreToken.token };
    const card: SiteCard = { site, publisherUrl: replicatorUrl(ledger.connectionString, replication.password, values.advertise), verifierKey: audit.signer.verifierKey, intervalS, api };
    const cardFile = join(siteDataDir, 'site-card.json');
    writeFileSync(cardFile, `${JSON.stringify(card, null, 2)}\n`, { mode: 0o600 });
    heartbeat = new SiteHeartbeat({ store, site, intervalS, log: (message, fields) => logger.warn({ component: 'site', ...fields }, message) });
    started.add('heartbeat', () => heartbeat?.stop());
    heartbeat.start();
    logger.info({ site, card: cardFile, slotKeep: values['slot-keep'] }, `site ${site}: publishing its log for a centre (card: ${cardFile}); heartbeat every ${intervalS} s`);
  }

  let sim: Simulator | null = null;
  let poller: ThreadedPoller | null = null;
  // Several processes may share the database: each polls only the shards it holds a lease on (src/cluster).
  const cluster = new ThreadedClusterMember({
    connectionString: ledger.connectionString,
    apiUrl: `http://${process.env.FLEET_LEDGER_API_HOST ?? '127.0.0.1'}:${apiPort}`,
    ...(pinnedOrSite ? { pinned: pinnedOrSite } : {}),
    shards: { shardsPerSite },
    leaseTtlMs: leaseTtlS * 1000,
    log: (message, fields) => logger.info({ component: 'cluster', ...fields }, message),
    onAcquired: (shard, lease) => {
      // The poller's thread logs how many BMCs the shard has once it has them.
      poller?.activateShard(shard, lease.epoch, lease.pollAfter);
      logger.info({ component: 'cluster', shard, epoch: lease.epoch, reason: lease.reason, previousOwner: lease.previousOwner }, `lease on shard ${shard} (epoch ${lease.epoch})`);
    },
    onRelease: async (shard) => {
      await poller?.deactivateShard(shard);
    },
    onLost: (shard) => void poller?.deactivateShard(shard),
  });
  logger.info({ component: 'cluster', processId: cluster.processId, pinned: pinnedOrSite ?? null }, `cluster member ${cluster.processId}`);
  let access: ((nodeId: string) => BmcAccess | undefined) | undefined;
  let credentialStore: VersionedCredentialStore | undefined;
  let plainHttpSites: readonly string[] = ['*'];
  let inForceFollowing: Promise<void> = Promise.resolve();
  const intents = new AbortController();
  let following: Promise<void> = Promise.resolve();
  if (!values['no-sim']) {
    // Only what changed is recorded: a restart finds the fleet where it was registered (src/demo/demo-fleet.ts).
    const scenario = values.scenario ? loadScenario(values.scenario) : demoScenario(Number(values.bmcs));
    const recorded = await readRecordedFleet(store);
    sim = await startSimulatedFleet({ scenario, ...(values.captures ? { captures: values.captures } : {}) }, recorded);
    const simulator = sim;
    // The simulated BMCs' firmware and update tasks outlive this process (a rollout in flight finds them again).
    const simulatorState = keepSimulatorState(simulator, dataDir, (message, fields) => logger.warn({ component: 'simulator', ...fields }, message));
    started.add('simulator', async () => {
      simulatorState.stop();
      await simulator.close();
    });
    // A site registers and polls only its own BMCs (the simulator serves the whole scenario; the others are idle).
    const ownBmcs = site ? sim.bmcs.filter((bmc) => bmc.site === site) : sim.bmcs;
    if (site && ownBmcs.length === 0) {
      const sites = [...new Set(sim.bmcs.map((bmc) => bmc.site))].join(', ');
      throw new Error(`--site ${site}: the simulated fleet has no BMC in site ${site} (its sites: ${sites}); give --scenario with that site, or --no-sim --targets`);
    }
    const { registered, unchanged, decommissioned, racks } = await registerSimulatedFleet(store, ownBmcs, intervalS, { recorded });
    logger.info(
      { bmcs: ownBmcs.length, registered, unchanged, decommissioned, racks, control: sim.controlUrl, firmwareStateRestored: simulatorState.restored, site },
      `simulated fleet: ${ownBmcs.length} BMCs in ${racks} racks (${registered} registered, ${unchanged} as recorded, ${decommissioned} no longer simulated and decommissioned); simulator control at ${sim.controlUrl}`,
    );
    // The simulated BMCs' credentials, versioned (a credential rotation stages its versions beside them), and the
    // version in force on each node as the log says: what the poller, rollouts and rotations log in with.
    const demoCredentials = demoCredentialStore(dataDir, sim.bmcs);
    credentialStore = demoCredentials;
    const inForce = followCredentialsInForce(store, intents.signal);
    inForceFollowing = inForce.following;
    // The poller runs on a thread of its own: nothing a caller of the API sends can delay a liveness check.
    poller = new ThreadedPoller({
      connectionString: ledger.connectionString,
      credentials: demoCredentials,
      credentialRefs: () => simulator.fleet().filter((bmc) => !site || bmc.site === site).map((bmc) => `sim:${bmc.id}`),
      // Heavy reads sooner than in production, so a newcomer sees the inventory fill within minutes. (More reads at
      // once do not help: on BMCs with room for one session the liveness check waits for the read, and checks start
      // to miss.)
      policy: { intervals: { health: 300, inventory: 600, firmware: 3600 } },
      // The simulator serves plain http on this machine; each credential is still bound to its own BMC's address.
      plainHttpSites: ['*'],
      ...(values.push ? { push: defaultPushPolicy } : {}),
      log: (message, fields) => logger.warn(fields ?? {}, message),
      info: (message, fields) => logger.info({ component: 'cluster', ...fields }, message),
      cluster,
    });
    await poller.ready();
    following = Promise.all([poller.followIntents(intents.signal), declareDemoEbom(store, ownBmcs, intents.signal)]).then(() => undefined);
    started.add('poller', () => poller?.stop());
    poller.start();
    await cluster.start();
    let fleet = new Map(simulator.fleet().map((bmc) => [bmc.id, bmc]));
    let readAt = Date.now();
    access = (nodeId) => {
      if (Date.now() - readAt > 5_000) {
        fleet = new Map(simulator.fleet().map((bmc) => [bmc.id, bmc]));
        readAt = Date.now();
      }
      const bmc = fleet.get(nodeId);
      const secret = bmc ? credentialInForce(demoCredentials, inForce.nodes, nodeId, `sim:${nodeId}`) : undefined;
      return bmc && secret ? { baseUrl: bmc.baseUrl, username: secret.username, password: secret.password } : undefined;
    };
  }

  if (values['no-sim'] && values.targets) {
    const credentialsFile = process.env.FLEET_LEDGER_CREDENTIALS_FILE;
    if (!credentialsFile) {
      process.stderr.write('fleet-ledger start: --targets needs FLEET_LEDGER_CREDENTIALS_FILE (the BMC credentials, mode 0600)\n');
      await runner.stop();
      await ledger.close();
      return 2;
    }
    let credentials: ReturnType<typeof fileCredentials>;
    let siteTls: ReturnType<typeof siteTlsFromFlags>;
    try {
      siteTls = siteTlsFromFlags({ siteCa: values['site-ca'] ?? [], insecureSites: values['insecure-site'] ?? [], minTls: values['min-tls'] ?? [] });
      credentials = fileCredentials(credentialsFile);
    } catch (error) {
      process.stderr.write(`fleet-ledger start: ${error instanceof Error ? error.message : String(error)}\n`);
      await runner.stop();
      await ledger.close();
      return 2;
    }
    const targetFile = loadTargetFile(values.targets);
    // A site registers and polls only its own targets.
    const siteTargets = site ? { ...targetFile, targets: targetFile.targets.filter((target) => target.site === site) } : targetFile;
    const registered = await registerTargets(store, siteTargets, process.env.USER ?? 'operator');
    logger.info({ targets: values.targets, registered, site }, `polling the BMCs of ${values.targets}${site ? ` in site ${site}` : ''} (${registered} newly registered)`);
    const targets = siteTargets.targets;
    const byNode = new Map(targets.map((target) => [target.nodeId, target]));
    const httpSites = values['allow-http-site'] ?? [];
    credentialStore = credentials;
    plainHttpSites = httpSites;
    const inForce = followCredentialsInForce(store, intents.signal);
    inForceFollowing = inForce.following;
    access = (nodeId) => {
      const target = byNode.get(nodeId);
      // The version the ledger says is in force on the node (none while a credential rotation fences it).
      const secret = target ? credentialInForce(credentials, inForce.nodes, nodeId, target.credentialRef) : undefined;
      // Power and firmware actions send the secret under the same rule as the poller: bound address, https.
      const allowed = target && secret && credentialRefusal(secret, target.bmc, httpSites.some((site) => site === '*' || site === target.site)) === null;
      if (!target || !secret || !allowed) return undefined;
      // Power and firmware actions trust the BMC's certificate as the poller does: the site's CA or insecure choice,
      // else the pin the log holds (sagas/engine/bmc-trust.ts).
      const policy = siteTls[target.site] ?? siteTls['*'];
      const minVersion = policy?.minVersion ? { minVersion: policy.minVersion } : {};
      if (policy?.trust === 'insecure') return { baseUrl: target.bmc, username: secret.username, password: secret.password, insecure: true, tls: { trust: { kind: 'insecure' }, ...minVersion } };
      const trust = policy && typeof policy.trust === 'object' ? { kind: 'site-ca' as const, ca: policy.trust.caBundle } : { kind: 'pin' as const, fingerprint: undefined };
      return { baseUrl: target.bmc, username: secret.username, password: secret.password, tls: { trust, ...minVersion } };
    };
    poller = new ThreadedPoller({
      connectionString: ledger.connectionString,
      credentials,
      credentialRefs: () => targets.map((target) => target.credentialRef),
      plainHttpSites: httpSites,
      siteTls,
      ...(values.push ? { push: defaultPushPolicy } : {}),
      log: (message, fields) => logger.warn(fields ?? {}, message),
      info: (message, fields) => logger.info({ component: 'cluster', ...fields }, message),
      cluster,
    });
    await poller.ready();
    following = poller.followIntents(intents.signal);
    poller.start();
    await cluster.start();
  }

  // Each part stops even if PostgreSQL is already going down (a server of DATABASE_URL's stopped meanwhile; the
  // embedded one runs in its own process group, so a terminal's Ctrl-C does not reach it, and stops last). Nothing
  // acknowledged is lost either way, since an append is acknowledged only after its commit.
  const quietly = async (part: string, stop: () => Promise<unknown> | undefined): Promise<void> => {
    const started = performance.now();
    try {
      await stop();
    } catch (error) {
      logger.warn({ part, error: String(error) }, 'stopped with an error');
    }
    // A part that takes long to stop is named: an operator waiting on a stop sees what it waits for.
    const seconds = (performance.now() - started) / 1000;
    if (seconds >= 2) logger.info({ part, seconds: Math.round(seconds * 10) / 10 }, 'slow to stop');
  };
  // Firmware rollouts requested through the API or the CLI run here, against the BMCs this process can reach.
  // Credential rotations too, with the versioned store (versions staged there before any BMC is asked to take one).
  const sagas = access ? new SagaSupervisor({ store, access, ...(credentialStore ? { credentials: credentialStore, rotation: { plainHttpSites } } : {}), log: (message, fields) => logger.info(fields ?? {}, message) }) : null;
  sagas?.start();

  const stopBelowApi = async (): Promise<void> => {
    started.handOver();
    intents.abort();
    await quietly('sagas', () => sagas?.stop());
    await quietly('heartbeat', () => heartbeat?.stop());
    await quietly('intents', () => following);
    await quietly('credentials in force', () => inForceFollowing);
    // Shards are drained and released first, so the other processes take them over at once, not after the lease.
    await quietly('cluster', () => (poller ? cluster.stop() : undefined));
    await quietly('poller', () => poller?.stop());
    await quietly('simulator', () => sim?.close());
    await quietly('projections', () => runner.stop());
    await quietly('audit', () => audit.stop());
    await quietly('as-of', () => asOf.stop());
    await quietly('ledger', () => ledger.close());
  };

  const port = apiPort;
  let api: Awaited<ReturnType<typeof serveApi>>;
  try {
    api = await serveApi({
      store,
      runner,
      poller,
      simulator: sim,
      audit,
      asOf,
      // Only a process that polls takes part in the cluster (its member is started with the poller).
      cluster: poller ? cluster : null,
      port,
      host: process.env.FLEET_LEDGER_API_HOST ?? '127.0.0.1',
      dataDir: values['data-dir'] ?? process.env.FLEET_LEDGER_DATA_DIR ?? '.fleet-ledger',
      readDatabaseUrl: process.env.DATABASE_READ_URL || null,
      ...(centreToken ? { extraTokens: [centreToken] } : {}),
    });
  } catch (error) {
    // A failed start stops what it started: the embedded PostgreSQL must not outlive the process.
    await stopBelowApi();
    if ((error as NodeJS.ErrnoException).code === 'EADDRINUSE') {
      process.stderr.write(`fleet-ledger start: port ${port} is already in use; choose another with --port P\n`);
      return 2;
    }
    throw error;
  }

  // The KurrentDB face: the same log, the API's tokens and its authorization policy. Without TLS its clients send no
  // credentials, so they are anonymous: nothing, or envelopes when the operator opted in.
  let kurrent: KurrentServer | null = null;
  if (kurrentPort !== null) {
    try {
      kurrent = await serveKurrent({
        store,
        tokens: api.tokens,
        port: kurrentPort,
        host: process.env.FLEET_LEDGER_API_HOST ?? '127.0.0.1',
        tls: kurrentTls,
        anonymousReads: values['kurrent-anonymous-envelopes'] ? 'envelopes' : 'none',
      });
    } catch (error) {
      await quietly('api', () => api.close());
      await stopBelowApi();
      process.stderr.write(`fleet-ledger start: the KurrentDB face cannot listen on port ${kurrentPort}: ${error instanceof Error ? error.message : String(error)}\n`);
      return 2;
    }
    const scheme = `esdb://${kurrent.host}:${kurrent.port}?tls=${kurrent.tls}`;
    logger.info({ kurrent: scheme, tls: kurrent.tls }, `KurrentDB clients: ${scheme}${kurrent.tls ? ' (user <principal>, password <API token>)' : values['kurrent-anonymous-envelopes'] ? ' (anonymous: envelopes only; serve TLS to authenticate)' : ' (anonymous: nothing; serve TLS to authenticate)'}`);
  }

  const report = setInterval(() => {
    void (async () => {
      const head = await store.head();
      const liveness = await livenessSummary(store.db.withTables<LivenessTables>());
      const alarms = await openAlarms(store.db.withTables<AlarmsTables>()).catch(() => []);
      const lag = Math.max(0, ...(await runner.status()).map((s) => s.lagPositions));
      const stats = poller?.stats();
      logger.info({ head: head.position, liveness, openAlarms: alarms.length, projectionLagPositions: lag, polls: stats?.outcomes }, `fleet: ${Object.entries(liveness).map(([k, v]) => `${v} ${k}`).join(', ') || 'no liveness yet'}; ${alarms.length} open alarms; log at ${head.position}`);
    })().catch((error: unknown) => logger.warn({ error: String(error) }, 'report failed'));
  }, 15_000);

  await new Promise<void>((resolve) => {
    // `on`, not `once`: a terminal's Ctrl-C reaches us twice when a launcher (npm, tsx) relays it, and a
    // second signal without a listener would kill the process in the middle of its orderly stop.
    let stopping = false;
    const stop = (signal: string): void => {
      if (stopping) return;
      stopping = true;
      logger.info({ signal }, 'stopping');
      resolve();
    };
    process.on('SIGINT', () => stop('SIGINT'));
    process.on('SIGTERM', () => stop('SIGTERM'));
  });
  clearInterval(report);
  await quietly('kurrent', () => kurrent?.close());
  await quietly('api', () => api.close());
  await stopBelowApi();
  logger.info('stopped cleanly');
  return 0;
}
