/**
 * The poller's own CPU per request, beside undici alone in the same run. The simulator (a process of its own,
 * answering at once) serves `--bmcs` BMCs of every built-in model; each round visits all of them twice:
 * - `liveness`: the poller's check (`RedfishVisitor`, one GET on a fresh connection with basic auth, then closed),
 *   against `raw`: undici's `request` on a fresh `Client`, the same GET, the body read, the client closed;
 * - `heavy`: the poller's first read (health, inventory, firmware in one session), against `raw`: the very GETs the
 *   read sent (recorded through undici's diagnostics channel), two at a time over one keep-alive `Pool` per BMC,
 *   each body parsed as JSON (no session: basic auth).
 * - `client` (beside `heavy`): the same GETs replayed through the driver's `RedfishClient` alone (basic auth, two at a
 *   time, over the poller's connections where there are kept ones): each request's deadline, bounded body, JSON parse
 *   and storable text, without the reading of observations the heavy read does with what it fetched.
 * Rounds alternate the two, so the machine's drift falls on both alike. Prints one JSON line: CPU microseconds per
 * check and per request of each, and their ratios (ours / raw: how much the driver adds to the HTTP client).
 *
 * `--tls`: the simulator serves HTTPS (a self-signed certificate per BMC, each generation's TLS versions, keep-alive
 * and session resumption). Ours is the poller's visitor with its per-BMC connections (`BmcTransports`: the
 * certificate pinned at first use and judged at every handshake, connections kept between checks where the BMC keeps
 * them, TLS sessions resumed where it resumes them); raw is undici alone over the same kind of connections: one
 * keep-alive `Pool` per BMC kept for the whole run (its own TLS session cache), no certificate verified. Both make
 * their handshakes inside the measured rounds wherever a BMC closes its connections, so the ratio is per check as
 * the poller pays it.
 *
 *   npm run bench:poll -- --json [--bmcs 400] [--rounds 3] [--tls]
 */
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { parseArgs } from 'node:util';
import { Client, Pool } from 'undici';
import { RedfishClient } from '../src/drivers/index.js';
import { BmcTransports, RedfishVisitor, type PollTarget } from '../src/poller/index.js';
import { round } from './support/bench-database.js';
import { simJson, startSimProcess, type SimBmc } from './support/sim-process.js';

const { values } = parseArgs({ options: { json: { type: 'boolean' }, bmcs: { type: 'string', default: '400' }, rounds: { type: 'string', default: '3' }, tls: { type: 'boolean', default: false } } });
const tls = values.tls === true;
const bmcCount = Number(values.bmcs);
const rounds = Number(values.rounds);
if (!Number.isInteger(bmcCount) || bmcCount < 16 || !Number.isInteger(rounds) || rounds < 1) {
  process.stderr.write('--bmcs must be an integer >= 16 and --rounds >= 1\n');
  process.exit(2);
}

const rawPools = new Map<string, Pool>();
let transports: BmcTransports | undefined;
const { child, controlUrl } = await startSimProcess(['--bmcs', String(bmcCount), '--seed', '7', '--latency-scale', '0', ...(tls ? ['--tls'] : [])]);
try {
  const { bmcs } = await simJson<{ bmcs: Array<SimBmc & { fixture: string }> }>(`${controlUrl}/sim/fleet`);
  const simRequests = async (): Promise<number> => (await simJson<{ requests: number }>(`${controlUrl}/sim/stats`)).requests;
  // Over TLS, the poller's own per-BMC connections (pins kept in memory: the benchmark records no events).
  transports = tls ? new BmcTransports({ store: { append: () => Promise.resolve({} as never) }, keepAliveMs: 130_000, connectTimeoutMs: 10_000, clock: Date.now }) : undefined;
  const visitor = new RedfishVisitor(transports);
  /** Raw undici over TLS: one keep-alive pool per BMC for the whole run, certificates not verified. */
  const rawPool = (origin: string): Pool => {
    let pool = rawPools.get(origin);
    if (!pool) rawPools.set(origin, (pool = new Pool(origin, { connections: 2, connect: { rejectUnauthorized: false } })));
    return pool;
  };
  const options = { requestTimeoutMs: 10_000, firmwareTimeoutMs: 180_000, visitDeadlineMs: 300_000, sessionLimit: 2 };
  const targetOf = (bmc: SimBmc): PollTarget => ({ nodeId: bmc.id, site: bmc.site, rack: bmc.rack, baseUrl: bmc.baseUrl, credentialRef: bmc.id, sessionLimit: bmc.sessionLimit, expectedIntervalS: 60 });
  const credentialOf = (bmc: SimBmc) => ({ username: bmc.username, password: bmc.password, version: '1', endpoints: ['*'] });
  const basic = (bmc: SimBmc): string => `Basic ${Buffer.from(`${bmc.username}:${bmc.password}`).toString('base64')}`;

  /** The GETs each BMC's heavy read sent, by origin (recorded at the first round, replayed by `raw`). */
  const paths = new Map<string, string[]>();
  const onRequest = (message: unknown): void => {
    const { request } = message as { request: { origin: string; path: string; method: string } };
    if (request.method !== 'GET') return;
    let own = paths.get(request.origin);
    if (!own) paths.set(request.origin, (own = []));
    own.push(request.path);
  };

  /** CPU of this process (all threads) and requests the simulator served, while `work` runs. */
  const measure = async (work: () => Promise<void>): Promise<{ cpuUs: number; requests: number }> => {
    const before = await simRequests();
    const cpu = process.cpuUsage();
    await work();
    const used = process.cpuUsage(cpu);
    return { cpuUs: used.user + used.system, requests: (await simRequests()) - before };
  };

  // A pass over the fleet costs the poller a few tens of ms of CPU: a collection the heavy read before it left to do
  // (its marking threads count in this process) could double it. Five passes per measurement drown that out.
  const livenessPasses = 5;
  const oursLiveness = async (): Promise<void> => {
    for (let pass = 0; pass < livenessPasses; pass += 1) for (const bmc of bmcs) {
      const result = await visitor.visit(targetOf(bmc), credentialOf(bmc), ['liveness'], options);
      if (!result.ok) throw new Error(`liveness check of ${bmc.id} failed: ${String(result.error)}`);
    }
  };
  const rawLiveness = async (): Promise<void> => {
    for (let pass = 0; pass < livenessPasses; pass += 1) for (const bmc of bmcs) {
      const origin = new URL(bmc.baseUrl).origin;
      const client = tls ? rawPool(origin) : new Client(origin);
      const answer = await client.request({ method: 'GET', path: '/redfish/v1/Systems', headers: { authorization: basic(bmc), accept: 'application/json' } });
      await answer.body.text();
      if (answer.statusCode !== 200) throw new Error(`raw check of ${bmc.id}: ${answer.statusCode}`);
      if (!tls) await client.close();
    }
  };
  const oursHeavy = async (): Promise<void> => {
    for (const bmc of bmcs) {
      const result = await visitor.visit(targetOf(bmc), credentialOf(bmc), ['health', 'inventory', 'firmware'], options);
      if (!result.ok) throw new Error(`heavy read of ${bmc.id} failed: ${String(result.error)}`);
    }
  };
  const rawHeavy = async (): Promise<void> => {
    for (const bmc of bmcs) {
      const origin = new URL(bmc.baseUrl).origin;
      const queue = [...(paths.get(origin) ?? [])];
      const pool = tls ? rawPool(origin) : new Pool(origin, { connections: 2 });
      const lane = async (): Promise<void> => {
        for (let path = queue.shift(); path !== undefined; path = queue.shift()) {
          const answer = await pool.request({ method: 'GET', path, headers: { authorization: basic(bmc), accept: 'application/json', 'odata-version': '4.0' } });
          const text = await answer.body.text();
          if (answer.statusCode === 200) JSON.parse(text);
        }
      };
      await Promise.all([lane(), lane()]);
      if (!tls) await pool.close();
    }
  };

  const clientHeavy = async (): Promise<void> => {
    for (const bmc of bmcs) {
      const queue = [...(paths.get(new URL(bmc.baseUrl).origin) ?? [])];
      const dispatcher = transports?.connectionFor(targetOf(bmc), options.sessionLimit)?.dispatcher;
      const client = new RedfishClient({ baseUrl: bmc.baseUrl, username: bmc.username, password: bmc.password, authMode: 'basic', maxConcurrency: 2, requestTimeoutMs: options.firmwareTimeoutMs, ...(dispatcher ? { dispatcher } : {}) });
      await client.login();
      const lane = async (): Promise<void> => {
        for (let path = queue.shift(); path !== undefined; path = queue.shift()) {
          // Non-2xx answers are typed errors (the read's own 404s): counted like raw's, which parses only 200s.
          await client.get(path).catch(() => undefined);
        }
      };
      await Promise.all([lane(), lane()]);
      await client.close();
    }
  };

  // Two warm-up rounds of each (the JIT compiles; the heavy read records its paths), then the measured rounds. With
  // one, the first measured round was charged the warm-up's leftovers (the optimizing compiler's and the concurrent
  // marker's threads count in this process's CPU): whichever went first in it paid 1.5 to 2 times its later rounds.
  subscribe('undici:request:create', onRequest);
  await oursHeavy();
  unsubscribe('undici:request:create', onRequest);
  await rawHeavy();
  await oursLiveness();
  await rawLiveness();
  await rawHeavy();
  await oursHeavy();
  await rawLiveness();
  await oursLiveness();
  await clientHeavy();
  await clientHeavy();
  const totals = { oursLiveness: { cpuUs: 0, requests: 0 }, rawLiveness: { cpuUs: 0, requests: 0 }, oursHeavy: { cpuUs: 0, requests: 0 }, rawHeavy: { cpuUs: 0, requests: 0 }, clientHeavy: { cpuUs: 0, requests: 0 } };
  const ratios: { liveness: number[]; heavy: number[]; client: number[] } = { liveness: [], heavy: [], client: [] };
  for (let index = 0; index < rounds; index += 1) {
    const add = (into: { cpuUs: number; requests: number }, from: { cpuUs: number; requests: number }): void => {
      into.cpuUs += from.cpuUs;
      into.requests += from.requests;
    };
    // Alternating which goes first, so neither always runs on a machine the other warmed.
    const pairs: Array<[keyof typeof totals, () => Promise<void>]> = [
      ['oursLiveness', oursLiveness],
      ['rawLiveness', rawLiveness],
      ['oursHeavy', oursHeavy],
      ['rawHeavy', rawHeavy],
      ['clientHeavy', clientHeavy],
    ];
    const measured: Partial<Record<keyof typeof totals, { cpuUs: number; requests: number }>> = {};
    for (const [name, work] of index % 2 === 0 ? pairs : [pairs[1]!, pairs[0]!, pairs[4]!, pairs[3]!, pairs[2]!]) {
      measured[name] = await measure(work);
      add(totals[name], measured[name]);
    }
    const per = (m: { cpuUs: number; requests: number } | undefined): number => m!.cpuUs / Math.max(1, m!.requests);
    ratios.liveness.push(round(per(measured.oursLiveness) / per(measured.rawLiveness)));
    ratios.heavy.push(round(per(measured.oursHeavy) / per(measured.rawHeavy)));
    ratios.client.push(round(per(measured.clientHeavy) / per(measured.rawHeavy)));
  }
  const perRequest = (total: { cpuUs: number; requests: number }): number => Math.round(total.cpuUs / Math.max(1, total.requests));
  const models = new Map<string, { visits: number; requests: number }>();
  for (const bmc of bmcs) {
    const model = models.get(bmc.fixture) ?? { visits: 0, requests: 0 };
    model.visits += 1;
    model.requests += paths.get(new URL(bmc.baseUrl).origin)?.length ?? 0;
    models.set(bmc.fixture, model);
  }
  const tlsCounters = tls ? await simJson<{ handshakes: number; resumed: number; connectionsPeak: number; connectionsRefused: number }>(`${controlUrl}/sim/tls`) : undefined;
  const line = {
    scenario: 'poll',
    tls,
    bmcs: bmcCount,
    rounds,
    liveness_us_per_check: perRequest(totals.oursLiveness),
    raw_liveness_us_per_check: perRequest(totals.rawLiveness),
    liveness_ratio_to_raw: round(perRequest(totals.oursLiveness) / perRequest(totals.rawLiveness)),
    liveness_ratio_by_round: ratios.liveness,
    heavy_us_per_request: perRequest(totals.oursHeavy),
    raw_heavy_us_per_request: perRequest(totals.rawHeavy),
    heavy_ratio_to_raw: round(perRequest(totals.oursHeavy) / perRequest(totals.rawHeavy)),
    heavy_ratio_by_round: ratios.heavy,
    heavy_us_per_visit: Math.round(totals.oursHeavy.cpuUs / (rounds * bmcs.length)),
    client_heavy_us_per_request: perRequest(totals.clientHeavy),
    client_heavy_ratio_to_raw: round(perRequest(totals.clientHeavy) / perRequest(totals.rawHeavy)),
    client_heavy_ratio_by_round: ratios.client,
    ...(tlsCounters ? { sim_tls_handshakes: tlsCounters.handshakes, sim_tls_resumed: tlsCounters.resumed, sim_connections_peak_per_bmc: tlsCounters.connectionsPeak, sim_connections_refused: tlsCounters.connectionsRefused } : {}),
    gets_per_heavy_read: Object.fromEntries([...models].sort(([a], [b]) => a.localeCompare(b)).map(([model, m]) => [model, Math.round(m.requests / m.visits)])),
  };
  process.stdout.write(values.json ? `${JSON.stringify(line)}\n` : `${Object.entries(line).map(([k, v]) => `${k}=${typeof v === 'object' ? JSON.stringify(v) : v}`).join(' ')}\n`);
} finally {
  await Promise.all([...rawPools.values()].map((pool) => pool.destroy()));
  await transports?.close();
  child.kill();
}
