/**
 * Sites and a centre in one test process, each on a PostgreSQL of its own (embedded, in temp folders): a site is what
 * `fleet-ledger start --site` runs minus the poller (its log, checkpoints, heartbeat and publication), with a load
 * that appends poll outcomes for a few nodes; the centre is `Centre` on its own server. A site's link to the centre
 * goes through a TCP fault proxy (bench/support/fault-proxy.ts).
 */
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { AuditService } from '../../replay/audit/index.js';
import { Centre, centrePostgresSettings, prepareSitePublication, replicatorUrl, SiteHeartbeat, sitePostgresSettings, type CentreOptions, type SiteCard } from '../../src/federation/index.js';
import { openLedger, startEmbeddedPostgres, type EmbeddedPostgresHandle, type OpenLedger } from '../../src/ledger/index.js';
import { startFaultProxy, type FaultProxy } from '../../bench/support/fault-proxy.js';
import { buildApi, TokenTable, type ZodApp } from '../../src/api/index.js';
import { ProjectionRunner } from '../../src/ledger/index.js';
import { fleetProjections } from '../../projections/index.js';

/** With `api`: the token the site issues its centre (a forwarder), and one of the site's own operators. */
export const siteTokens = { centre: 'centre-forwarder-token-0001', operator: 'site-operator-token-00001' } as const;

export interface TestSite {
  name: string;
  dir: string;
  ledger: OpenLedger;
  audit: AuditService;
  heartbeat: SiteHeartbeat;
  card: SiteCard;
  /** The site's PostgreSQL as seen through the proxy (what the centre is given). */
  proxy: FaultProxy;
  /** The site's superuser (to tamper with its log, as only a superuser can). */
  superuserUrl: string;
  /** Appends `n` poll outcome batches now. */
  appendOutcomes(n: number): Promise<void>;
  /** Starts appending a batch every `everyMs`. */
  startLoad(everyMs: number): void;
  stopLoad(): Promise<void>;
  /** The site's head position (its own database, not through the proxy). */
  head(): Promise<number>;
  /** Stops the site (its PostgreSQL too); the proxy stays. */
  stop(): Promise<void>;
  /** With `api`: the site's API (its projections running), reached by the centre through `apiProxy`. */
  apiUrl: string | null;
  apiProxy: FaultProxy | null;
  /** Cuts (and restores) both links to the centre: replication and API. */
  cut(mode?: 'blackhole' | 'reset'): void;
  restore(): void;
}

/** These servers live for one test file: nothing is synced to disk (a server that crashes is not started again). */
const throwaway = { fsync: 'off', synchronous_commit: 'off', full_page_writes: 'off' };

const nodes = (site: string): string[] => [1, 2, 3, 4].map((n) => `${site}-n${n}`);

/** Starts (or starts again, on the same folder) a site ledger named `name`. */
export async function startTestSite(name: string, dir: string, options: { intervalS: number; checkpointIntervalMs?: number; proxy?: FaultProxy; maxSlotWalKeepSize?: string; api?: boolean }): Promise<TestSite> {
  mkdirSync(dir, { recursive: true });
  const secretFile = join(dir, 'replication-test.json');
  // The site keeps its password and its port across restarts: the centre's subscription names both.
  const kept = existsSync(secretFile) ? (JSON.parse(readFileSync(secretFile, 'utf8')) as { password: string; port: number }) : null;
  const password = kept?.password ?? randomBytes(12).toString('hex');
  const ledger = await openLedger({
    dataDir: dir,
    ...(kept ? { port: kept.port } : {}),
    postgresSettings: { ...sitePostgresSettings(options.maxSlotWalKeepSize ? { maxSlotWalKeepSize: options.maxSlotWalKeepSize } : {}), ...throwaway },
    prepare: (ownerUrl) => prepareSitePublication(ownerUrl, name, password),
  });
  const audit = await AuditService.start({ connectionString: ledger.connectionString, dataDir: dir, publishDir: false, checkpointIntervalMs: options.checkpointIntervalMs ?? 1000, store: ledger.store, log: () => undefined });
  const heartbeat = new SiteHeartbeat({ store: ledger.store, site: name, intervalS: options.intervalS });
  heartbeat.start();
  const url = new URL(ledger.connectionString);
  writeFileSync(secretFile, JSON.stringify({ password, port: Number(url.port) }), { mode: 0o600 });
  const proxy = options.proxy ?? (await startFaultProxy({ host: url.hostname, port: Number(url.port) }));
  const credentials = JSON.parse(readFileSync(join(dir, 'credentials.json'), 'utf8')) as { user: string; password: string };
  const superuserUrl = `postgres://${encodeURIComponent(credentials.user)}:${encodeURIComponent(credentials.password)}@127.0.0.1:${url.port}/fleet_ledger`;
  const store = ledger.store;
  const registered = (await store.readStream(`node-${nodes(name)[0]}`).catch(() => [])).length > 0;
  if (!registered) {
    for (const nodeId of nodes(name)) {
      await store.append(`node-${nodeId}`, [{ type: 'NodeRegistered', data: { nodeId, site: name, rack: `${name}-r1`, bmc: { protocol: 'redfish', address: `https://${nodeId}.example`, credentialRef: `ref-${nodeId}` }, expectedIntervalS: options.intervalS }, actor: { kind: 'operator', id: 'test', role: 'admin' } }]);
    }
  }
  let runner: ProjectionRunner | null = null;
  let api: ZodApp | null = null;
  let apiUrl: string | null = null;
  let apiProxy: FaultProxy | null = null;
  if (options.api) {
    runner = new ProjectionRunner(store, fleetProjections());
    await runner.start();
    const tokens = new TokenTable([
      { token: siteTokens.centre, principal: 'centre', role: 'operator', forwards: true },
      { token: siteTokens.operator, principal: `oper-${name}`, role: 'operator' },
    ]);
    api = await buildApi({ store, tokens });
    apiUrl = (await api.listen({ port: 0, host: '127.0.0.1' })).replace('[::1]', '127.0.0.1');
    apiProxy = await startFaultProxy({ host: '127.0.0.1', port: Number(new URL(apiUrl).port) });
  }
  let timer: NodeJS.Timeout | null = null;
  let inFlight: Promise<void> = Promise.resolve();
  const appendOutcomes = async (n: number): Promise<void> => {
    for (let i = 0; i < n; i += 1) {
      const ids = nodes(name);
      await store.append(`polls-${name}`, [
        {
          type: 'PollOutcomesRecorded',
          data: { site: name, windowStart: new Date().toISOString(), nodeIds: ids, work: ids.map(() => 'liveness'), outcomes: ids.map(() => 'success'), latencyMs: ids.map(() => 3), offsetMs: ids.map(() => 0) },
          actor: { kind: 'system', id: 'test-load' },
        },
      ]);
    }
  };
  const site: TestSite = {
    name,
    dir,
    ledger,
    audit,
    heartbeat,
    proxy,
    superuserUrl,
    card: {
      site: name,
      publisherUrl: replicatorUrl(ledger.connectionString, password, `127.0.0.1:${proxy.port}`),
      verifierKey: audit.signer.verifierKey,
      intervalS: options.intervalS,
      ...(apiProxy ? { api: { url: `http://127.0.0.1:${apiProxy.port}`, token: siteTokens.centre } } : {}),
    },
    apiUrl,
    apiProxy,
    cut(mode = 'blackhole') {
      proxy.cutLink(mode);
      apiProxy?.cutLink(mode);
    },
    restore() {
      proxy.restore();
      apiProxy?.restore();
    },
    appendOutcomes,
    startLoad(everyMs) {
      timer = setInterval(() => {
        inFlight = inFlight.then(() => appendOutcomes(1)).catch(() => undefined);
      }, everyMs);
    },
    async stopLoad() {
      if (timer) clearInterval(timer);
      timer = null;
      await inFlight;
    },
    async head() {
      return (await store.head()).position;
    },
    async stop() {
      await site.stopLoad();
      await heartbeat.stop();
      await api?.close();
      await apiProxy?.close();
      await runner?.stop();
      await audit.stop();
      await ledger.close();
    },
  };
  return site;
}

export interface TestCentre {
  centre: Centre;
  server: EmbeddedPostgresHandle;
  stop(): Promise<void>;
}

export async function startTestCentre(dir: string, options: Omit<CentreOptions, 'connectionString'> = {}): Promise<TestCentre> {
  const server = await startEmbeddedPostgres({ dataDir: dir, database: 'fleet_centre', settings: { ...centrePostgresSettings(), ...throwaway }, ...(process.env.FLEET_LEDGER_DEBUG_SITES ? { log: (m: string) => console.log('centre-pg', m) } : {}) });
  const debug = process.env.FLEET_LEDGER_DEBUG_SITES ? (message: string, fields?: Record<string, unknown>) => console.log(new Date().toISOString(), message, JSON.stringify(fields ?? {})) : undefined;
  const centre = await Centre.open({ connectionString: server.connectionString, checkMs: 250, ...(debug ? { log: debug } : {}), ...options });
  return {
    centre,
    server,
    async stop() {
      await centre.stop().catch(() => undefined);
      await server.stop();
    },
  };
}

/** Runs a query on a connection of its own. */
export async function query<T extends pg.QueryResultRow = pg.QueryResultRow>(url: string, text: string, values: unknown[] = []): Promise<T[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<T>(text, values)).rows;
  } finally {
    await client.end();
  }
}

/** Waits until `check` returns a value that is not undefined (polling every 100 ms), or throws after `timeoutMs`. */
export async function waitFor<T>(what: string, timeoutMs: number, check: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value !== undefined) return value;
    } catch (error) {
      last = error;
    }
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${last ? `: ${String(last)}` : ''}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
