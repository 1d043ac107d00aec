/**
 * Issue 39's "Checked by" bar, met as a user meets it: `fleet-ledger start` from the compiled build (a process of its
 * own, embedded PostgreSQL in a temp folder) with a calm simulated fleet of 512 BMCs checked every 15 s, then
 *   1. the fleet polled (every node contacted);
 *   2. 40 `fleet-ledger events verify` runs and 40 `GET /v1/verify` under the poller's appends: how many say anything
 *      but intact (goal 0);
 *   3. a 40 MB EBOM whose last line is bad, POSTed while the fleet is polled: refused naming its last line, nothing
 *      written, nodes late and dark (the liveness read model) before, during and after, `/healthz` asked every 200 ms
 *      throughout (goal: max <= 2 s), against the same fleet in the interval before the EBOM (printed as a ratio);
 *   4. an anonymous plaintext KurrentDB `readAll` with the official client (goal: no payloads), and tokens sent over
 *      plaintext (goal: refused, nothing appended);
 *   5. `pg_ctl stop -m immediate` under the running process (goal: it keeps answering, reads 503 meanwhile, an
 *      operator intent recorded again within 90 s);
 *   6. from copies of the stopped instance, each tampered with as a database superuser while its PostgreSQL runs alone
 *      and then started as before: the tail deleted and the head rewound, a row rewritten and the chain recomputed, an
 *      older copy restored (taken before the live instance published a later checkpoint). Goal: each raises the online
 *      integrity alarm at that start (`/readyz` 503 naming the `AUDIT_*` code, `fleet_ledger_integrity_alarm`, the
 *      alarm in `audit status` and the process's log).
 *
 *   npm run bench:trust -- [--keep]      (--keep: leave the temp folder, for a look at the logs)
 *
 * Prints one JSON line with every figure and verdict (progress goes to stderr); exits 1 when any check fails. Every
 * process it starts (ledgers, PostgreSQL servers started by hand) is stopped, also when a step fails.
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, cpSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { spawn } from 'node:child_process';
import { EventStoreDBClient, jsonEvent, START } from '@eventstore/db-client';
import { parse as parseYaml } from 'yaml';
import { badLastLineEbom } from './support/bad-last-line-ebom.js';
import { cliArguments } from './support/cli-entry.js';
import { pgCtl, runningPostmaster, startClusterAlone, superuserUrl } from './support/embedded-pg-ctl.js';
import { freePort } from './support/free-port.js';
import { startLedgerProcess, type LedgerProcess } from './support/ledger-process.js';
import { deleteTailAndRewindHead, logSizes, rewriteRowAndRecomputeChain } from './support/log-tampering.js';
import { plaintextBearer } from './support/plaintext-bearer.js';

const { values } = parseArgs({ options: { keep: { type: 'boolean', default: false } } });

const BMCS = 512;
const INTERVAL_S = 15;
const VERIFIES = 40;
const EBOM_BYTES = 40e6;
const HEALTHZ_GOAL_MS = 2000;
const RECOVERY_GOAL_S = 90;

const tokens = { operator: 'trust-bar-operator-token', analyst: 'trust-bar-analyst-token', auditor: 'trust-bar-auditor-token' };
const principals = { operator: 'bar-operator', analyst: 'bar-analyst', auditor: 'bar-auditor' };
const env = {
  // The embedded backend, whatever the shell says.
  DATABASE_URL: '',
  FLEET_LEDGER_TOKENS: (Object.keys(tokens) as Array<keyof typeof tokens>).map((role) => `${tokens[role]}=${principals[role]}:${role}`).join(','),
};

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
const round = (value: number, places = 2): number => Math.round(value * 10 ** places) / 10 ** places;
const seconds = (fromMs: number): number => round((Date.now() - fromMs) / 1000, 1);
const progress = (message: string): void => void process.stderr.write(`[trust-bar ${new Date().toISOString().slice(11, 19)}] ${message}\n`);

const failures: string[] = [];
/** A check of the bar: recorded as its verdict, and as a failure with what was seen when it does not hold. */
function check(name: string, holds: boolean, seen: unknown): boolean {
  if (!holds) failures.push(`${name}: ${typeof seen === 'string' ? seen : JSON.stringify(seen)}`);
  return holds;
}

// ---------------------------------------------------------------------------------------------------------------
// Everything this run starts, stopped in `cleanup` whatever happens.
const ledgers = new Set<LedgerProcess>();
const clusterDirs = new Set<string>();
const root = mkdtempSync(join(tmpdir(), 'fleet-ledger-trust-bar-'));
// As root the embedded PostgreSQL runs as the postgres user, which must pass through the folder.
chmodSync(root, 0o755);
let cleaned = false;
async function cleanup(): Promise<void> {
  if (cleaned) return;
  cleaned = true;
  for (const ledger of ledgers) if (ledger.alive()) await ledger.stop(20_000).catch(() => ledger.kill());
  for (const dir of clusterDirs) {
    if (runningPostmaster(dir) === null) continue;
    await pgCtl(dir, ['stop', '-m', 'immediate', '-w']);
    const left = runningPostmaster(dir);
    if (left !== null) process.kill(left, 'SIGKILL');
  }
  if (!values.keep) rmSync(root, { recursive: true, force: true });
  else progress(`kept ${root}`);
}
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    progress(`${signal}: stopping everything this run started`);
    void cleanup().finally(() => process.exit(130));
  });
}

// ---------------------------------------------------------------------------------------------------------------
// Small clients of the running instance.
type Role = keyof typeof tokens;

async function api(base: string, path: string, role: Role | null, init: { method?: string; body?: string; contentType?: string; timeoutMs?: number } = {}): Promise<{ status: number; body: Record<string, unknown>; ms: number }> {
  const started = performance.now();
  const headers: Record<string, string> = {};
  if (role) headers.authorization = `Bearer ${tokens[role]}`;
  if (init.body !== undefined) headers['content-type'] = init.contentType ?? 'application/json';
  const response = await fetch(`${base}${path}`, { method: init.method ?? 'GET', headers, ...(init.body !== undefined ? { body: init.body } : {}), signal: AbortSignal.timeout(init.timeoutMs ?? 30_000) });
  const text = await response.text();
  let body: Record<string, unknown> = {};
  try {
    const parsed: unknown = JSON.parse(text);
    if (parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed)) body = parsed as Record<string, unknown>;
  } catch {
    body = { text };
  }
  return { status: response.status, body, ms: performance.now() - started };
}

const field = (value: unknown, ...path: string[]): unknown => path.reduce<unknown>((at, key) => (at !== null && typeof at === 'object' ? (at as Record<string, unknown>)[key] : undefined), value);
const errorCode = (body: Record<string, unknown>): string | null => {
  const code = field(body, 'error', 'code');
  return typeof code === 'string' ? code : null;
};

async function livenessStates(base: string): Promise<Record<string, number>> {
  const answer = await api(base, '/v1/liveness/summary', 'analyst');
  const states = field(answer.body, 'states');
  if (answer.status !== 200 || states === null || typeof states !== 'object') throw new Error(`liveness summary: ${answer.status} ${JSON.stringify(answer.body).slice(0, 300)}`);
  return Object.fromEntries(Object.entries(states).map(([state, count]) => [state, Number(count)]));
}

async function headPosition(base: string): Promise<number> {
  const position = field((await api(base, '/readyz', null)).body, 'headPosition');
  if (typeof position !== 'number') throw new Error('readyz gave no head position');
  return position;
}

/** Runs the command line (`fleet-ledger <args>`) as a user would; resolves with its exit code and output. */
function runCli(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [...cliArguments(), ...args], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, FLEET_LEDGER_URL: '', FLEET_LEDGER_TOKEN: '' } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    const timer = setTimeout(() => child.kill('SIGKILL'), 120_000);
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** The size in the published checkpoint (its second line), or 0 when none was published yet. */
function publishedSize(publishDir: string): number {
  const path = join(publishDir, 'checkpoint');
  return existsSync(path) ? Number(readFileSync(path, 'utf8').split('\n')[1]) : 0;
}

interface HealthzFigures {
  asks: number;
  failed: number;
  maxMs: number;
  p99Ms: number;
}

/**
 * `/healthz` asked every 200 ms until stopped: every answer's time (a failed or timed-out ask counts as its wait),
 * split at `splitAt` (set while running) into the asks before it (the baseline) and from it on.
 */
function healthzSampler(base: string): { splitAt: (at: number) => void; stop: () => Promise<{ before: HealthzFigures; after: HealthzFigures }> } {
  const samples: Array<{ at: number; ms: number; ok: boolean }> = [];
  let split = Number.POSITIVE_INFINITY;
  let running = true;
  const loop = (async () => {
    while (running) {
      const at = Date.now();
      const started = performance.now();
      const ok = await fetch(`${base}/healthz`, { signal: AbortSignal.timeout(10_000) }).then((r) => r.status === 200, () => false);
      const ms = performance.now() - started;
      samples.push({ at, ms, ok });
      await sleep(Math.max(0, 200 - ms));
    }
  })();
  const figures = (part: typeof samples): HealthzFigures => {
    const sorted = part.map((sample) => sample.ms).sort((a, b) => a - b);
    return { asks: part.length, failed: part.filter((sample) => !sample.ok).length, maxMs: round(sorted.at(-1) ?? Number.NaN), p99Ms: round(sorted[Math.max(0, Math.ceil(0.99 * sorted.length) - 1)] ?? Number.NaN) };
  };
  return {
    splitAt: (at) => void (split = at),
    async stop() {
      running = false;
      await loop;
      return { before: figures(samples.filter((sample) => sample.at < split)), after: figures(samples.filter((sample) => sample.at >= split)) };
    },
  };
}

// ---------------------------------------------------------------------------------------------------------------
// The instance.
const publishDir = join(root, 'published');
const liveDir = join(root, 'live');
/** A calm fleet: the demo's models and sites, 2 x 8 racks of 32 BMCs, with no scripted or random faults. */
const calmScenario = join(root, 'calm-fleet.json');
{
  const demo = parseYaml(readFileSync(new URL('../examples/scenario-demo.yaml', import.meta.url), 'utf8')) as { fleet: unknown; sites: Array<Record<string, unknown>>; behaviour: unknown };
  const racks = BMCS / 32 / demo.sites.length;
  writeFileSync(
    calmScenario,
    JSON.stringify({ name: 'calm', description: 'the demo fleet without faults', seed: 39, clockFactor: 1, fleet: demo.fleet, sites: demo.sites.map((site) => ({ ...site, racks, nodesPerRack: 32 })), behaviour: demo.behaviour }),
  );
}
const kurrentPort = await freePort();
const startArgs = (dataDir: string, published: string, kurrent: boolean): string[] => [
  '--bmcs', String(BMCS), '--scenario', calmScenario, '--interval', String(INTERVAL_S), '--data-dir', dataDir, '--publish-dir', published,
  ...(kurrent ? ['--kurrent-port', String(kurrentPort)] : []),
];
async function startInstance(dataDir: string, published: string, until: 'ready' | 'answering', kurrent: boolean): Promise<LedgerProcess> {
  clusterDirs.add(dataDir);
  return startLedgerProcess({ args: startArgs(dataDir, published, kurrent), env, until, timeoutMs: 600_000, onSpawn: (started) => ledgers.add(started) });
}
async function stopInstance(ledger: LedgerProcess, dataDir: string): Promise<{ exitCode: number | null; stopS: number; postgresLeft: boolean }> {
  const started = Date.now();
  const exitCode = await ledger.stop();
  return { exitCode, stopS: seconds(started), postgresLeft: runningPostmaster(dataDir) !== null };
}

const result: Record<string, unknown> = {
  bench: 'trust-bar',
  date: new Date().toISOString(),
  machine: { cores: cpus().length, loadavg_start: loadavg().map((l) => round(l)), uptime_start: execFileSync('uptime', { encoding: 'utf8' }).trim() },
  entry: cliArguments()[0]!.endsWith('.js') ? 'dist (compiled build)' : 'sources through tsx',
};

try {
  // 1. A calm fleet, polled.
  const bootAt = Date.now();
  progress(`starting ${BMCS} BMCs every ${INTERVAL_S} s in ${root}`);
  let live = await startInstance(liveDir, publishDir, 'ready', true);
  const readyS = seconds(bootAt);
  progress(`ready after ${readyS} s; waiting for every node to be contacted`);
  let states: Record<string, number> = {};
  for (const deadline = Date.now() + 600_000; ; ) {
    states = await livenessStates(live.url).catch(() => ({}));
    const total = Object.values(states).reduce((sum, n) => sum + n, 0);
    if (total >= BMCS && (states['never-contacted'] ?? 0) === 0) break;
    if (Date.now() > deadline) break;
    await sleep(1000);
  }
  const polledS = seconds(bootAt);
  const fleetNodes = Object.values(states).reduce((sum, n) => sum + n, 0);
  check('fleet polled', fleetNodes === BMCS && (states['never-contacted'] ?? 0) === 0, states);
  // One more interval of steady polling before anything is measured.
  await sleep(INTERVAL_S * 1000);
  result.fleet = { bmcs: fleetNodes, interval_s: INTERVAL_S, ready_s: readyS, polled_s: polledS, states_when_polled: states };
  progress(`polled after ${polledS} s: ${JSON.stringify(states)}`);

  // 2. Verifies under the poller's appends: the CLI and the API side by side.
  {
    const headBefore = await headPosition(live.url);
    const started = Date.now();
    const cli = { runs: 0, not_intact: 0, seen: [] as string[] };
    const http = { calls: 0, not_intact: 0, seen: [] as string[] };
    const cliRuns = (async () => {
      for (let i = 0; i < VERIFIES; i += 1) {
        const run = await runCli(['events', 'verify', '--url', live.url, '--token', tokens.auditor, '--json']);
        cli.runs += 1;
        let ok = false;
        try {
          ok = run.code === 0 && field(JSON.parse(run.stdout), 'ok') === true;
        } catch {
          ok = false;
        }
        if (!ok) {
          cli.not_intact += 1;
          cli.seen.push(`exit ${run.code}: ${(run.stdout + run.stderr).trim().slice(0, 200)}`);
        }
      }
    })();
    const httpCalls = (async () => {
      for (let i = 0; i < VERIFIES; i += 1) {
        const answer = await api(live.url, '/v1/verify', 'auditor', { timeoutMs: 120_000 }).catch((error: unknown) => ({ status: 0, body: { error: String(error) }, ms: 0 }));
        http.calls += 1;
        if (answer.status !== 200 || field(answer.body, 'ok') !== true) {
          http.not_intact += 1;
          http.seen.push(`${answer.status}: ${JSON.stringify(answer.body).slice(0, 200)}`);
        }
        await sleep(500);
      }
    })();
    await Promise.all([cliRuns, httpCalls]);
    const headAfter = await headPosition(live.url);
    result.verify = { cli_runs: cli.runs, cli_not_intact: cli.not_intact, http_calls: http.calls, http_not_intact: http.not_intact, appended_meanwhile: headAfter - headBefore, seconds: seconds(started), ...(cli.seen.length + http.seen.length > 0 ? { seen: [...cli.seen, ...http.seen].slice(0, 5) } : {}) };
    check('verifies say intact (0 false)', cli.not_intact + http.not_intact === 0, result.verify);
    check('verifies ran under appends', headAfter > headBefore, { headBefore, headAfter });
    progress(`verify: ${JSON.stringify(result.verify)}`);
  }

  // 3. A 40 MB EBOM bad at its last line, while the fleet is polled.
  {
    const ebom = badLastLineEbom(EBOM_BYTES);
    // Named, so what it could have written is told from the demo's own EBOM imports (it declares nodes as their
    // inventory is read, in the same window).
    const ebomSource = 'trust-bar';
    const ebomImportId = 'trust-bar-bad-last-line';
    const body = ebom.text;
    const before = await livenessStates(live.url);
    const headBefore = await headPosition(live.url);
    const health = healthzSampler(live.url);
    let watching = true;
    const during = { late_max: before.late ?? 0, dark_max: before.dark ?? 0, reads: 0 };
    const watcher = (async () => {
      while (watching) {
        const now = await livenessStates(live.url).catch(() => null);
        if (now) {
          during.reads += 1;
          during.late_max = Math.max(during.late_max, now.late ?? 0);
          during.dark_max = Math.max(during.dark_max, now.dark ?? 0);
        }
        await sleep(2000);
      }
    })();
    // One interval of the same fleet without the EBOM first: the baseline of `/healthz`.
    await sleep(INTERVAL_S * 1000);
    const sentAt = Date.now();
    health.splitAt(sentAt);
    const answer = await api(live.url, `/v1/ebom?source=${ebomSource}&importId=${ebomImportId}`, 'operator', { method: 'POST', body, contentType: 'text/csv', timeoutMs: 600_000 }).catch((error: unknown) => ({ status: 0, body: { error: String(error) }, ms: 0 }));
    const ebomS = seconds(sentAt);
    // Two intervals after the answer: a check the EBOM delayed shows as late by then.
    await sleep(2 * INTERVAL_S * 1000);
    watching = false;
    await watcher;
    const { before: quietHealthz, after: healthz } = await health.stop();
    const after = await livenessStates(live.url);
    // What the refused EBOM could have written: its import stream, an import of its source, its nodes' streams.
    const imports = await api(live.url, `/v1/events?from=${headBefore + 1}&types=EbomImported&limit=1000`, 'auditor');
    const importStream = await api(live.url, `/v1/events?from=${headBefore + 1}&stream=ebom-${ebomImportId}&limit=100`, 'auditor');
    const declared = await api(live.url, `/v1/events?from=${headBefore + 1}&stream=node-eb-&limit=100`, 'auditor');
    const items = (page: Record<string, unknown>): unknown[] => {
      const list = field(page, 'items');
      if (!Array.isArray(list)) throw new Error(`an events page without items: ${JSON.stringify(page).slice(0, 300)}`);
      return list;
    };
    const ours = items(imports.body).filter((item) => field(item, 'data', 'source') === ebomSource || field(item, 'stream') === `ebom-${ebomImportId}`).length;
    const demoImports = items(imports.body).length - ours;
    const refusedField = field(answer.body, 'error', 'details', 'field');
    const written = ours + items(importStream.body).length + items(declared.body).length;
    result.ebom = {
      mb: round(Buffer.byteLength(body) / 1e6, 1),
      last_line: ebom.lastLine,
      status: answer.status,
      code: errorCode(answer.body),
      field: typeof refusedField === 'string' ? refusedField : null,
      answered_s: ebomS,
      events_written: written,
      demo_ebom_imports_meanwhile: demoImports,
      late_before: before.late ?? 0,
      dark_before: before.dark ?? 0,
      late_max_during: during.late_max,
      dark_max_during: during.dark_max,
      late_after: after.late ?? 0,
      dark_after: after.dark ?? 0,
      liveness_reads: during.reads,
      healthz_asks: healthz.asks,
      healthz_failed: healthz.failed,
      healthz_max_ms: healthz.maxMs,
      healthz_p99_ms: healthz.p99Ms,
      // The same fleet in the interval before the EBOM was sent, and the ratio (with the EBOM / without).
      healthz_quiet_max_ms: quietHealthz.maxMs,
      healthz_quiet_p99_ms: quietHealthz.p99Ms,
      healthz_max_ratio: round(healthz.maxMs / quietHealthz.maxMs),
    };
    check('EBOM refused naming its last line', answer.status === 400 && typeof refusedField === 'string' && refusedField.startsWith(`body[line ${ebom.lastLine}]`), { status: answer.status, field: refusedField, lastLine: ebom.lastLine });
    check('EBOM wrote nothing', written === 0, { written });
    check('late/dark unchanged by the EBOM', during.late_max === (before.late ?? 0) && during.dark_max === (before.dark ?? 0) && (after.late ?? 0) === (before.late ?? 0) && (after.dark ?? 0) === (before.dark ?? 0), { before, during, after });
    check('/healthz <= 2 s throughout the EBOM', quietHealthz.failed + healthz.failed === 0 && healthz.maxMs <= HEALTHZ_GOAL_MS, { quietHealthz, healthz });
    progress(`ebom: ${JSON.stringify(result.ebom)}`);
  }

  // 4. The KurrentDB face on plaintext, with the official client.
  {
    const client = EventStoreDBClient.connectionString(`esdb://127.0.0.1:${kurrentPort}?tls=false`);
    /** A trailer the face sets on a refusal (`fleet-ledger-code`, `fleet-ledger-details`), read from the client's error. */
    const trailer = (error: unknown, key: string): string | null => {
      const metadata = field(error, '_raw', 'metadata');
      const get = field(metadata, 'get');
      if (typeof get !== 'function' || metadata === null || typeof metadata !== 'object') return null;
      const values: unknown = Reflect.apply(get, metadata, [key]);
      return Array.isArray(values) && values.length > 0 ? String(values[0]) : null;
    };
    const trailerCode = (error: unknown): string | null => trailer(error, 'fleet-ledger-code');
    /** Why a token was refused: `plaintext` when it was seen and refused, rather than ignored as if anonymous. */
    const refusalReason = (error: unknown): string | null => {
      const details = trailer(error, 'fleet-ledger-details');
      if (details === null) return null;
      try {
        const reason = field(JSON.parse(details), 'reason');
        return typeof reason === 'string' ? reason : null;
      } catch {
        return null;
      }
    };
    const errorType = (error: unknown): string => {
      const type = field(error, 'type');
      return typeof type === 'string' ? type : String(error).slice(0, 200);
    };
    const readAll = async (credentials?: { username: string; password: string }): Promise<{ returned: number; with_data: number; refused: string | null; code: string | null; reason: string | null }> => {
      let returned = 0;
      let withData = 0;
      try {
        for await (const resolved of client.readAll({ fromPosition: START, maxCount: 10_000, ...(credentials ? { credentials } : {}) })) {
          returned += 1;
          const data = resolved.event?.data;
          if (data !== null && data !== undefined) withData += 1;
        }
        return { returned, with_data: withData, refused: null, code: null, reason: null };
      } catch (error) {
        return { returned, with_data: withData, refused: errorType(error), code: trailerCode(error), reason: refusalReason(error) };
      }
    };
    const anonymous = await readAll();
    const auditorRead = await readAll({ username: principals.auditor, password: tokens.auditor });
    // An operator's intent sent with its token over plaintext: refused, and the node's stream unchanged.
    const nodeId = 'bmc-00002';
    const streamLength = async (): Promise<number> => {
      const page = await api(live.url, `/v1/streams/node-${nodeId}?limit=1000`, 'auditor');
      const list = field(page.body, 'items');
      return Array.isArray(list) ? list.length : Number.NaN;
    };
    const lengthBefore = await streamLength();
    let appendRefused: string | null = null;
    let appendCode: string | null = null;
    let appendReason: string | null = null;
    try {
      await client.appendToStream(`node-${nodeId}`, jsonEvent({ type: 'NodeCordoned', data: { nodeId, reason: 'over plaintext' } }), { credentials: { username: principals.operator, password: tokens.operator } });
    } catch (error) {
      appendRefused = errorType(error);
      appendCode = trailerCode(error);
      appendReason = refusalReason(error);
    }
    // The official client drops call credentials on an insecure channel (the face sees none: reason `missing`); the
    // issue's attacker sent `authorization: Bearer` by hand, which the face must refuse rather than use.
    const auditorBearer = plaintextBearer(kurrentPort, tokens.auditor);
    const operatorBearer = plaintextBearer(kurrentPort, tokens.operator);
    const bearerRead = await auditorBearer.readAll(10_000);
    const bearerAppend = await operatorBearer.append(`node-${nodeId}`, 'NodeCordoned', { nodeId, reason: 'bearer over plaintext' });
    auditorBearer.close();
    operatorBearer.close();
    const lengthAfter = await streamLength();
    await client.dispose();
    result.kurrent = {
      anonymous_read_all: anonymous,
      official_client_credentials_over_plaintext: {
        read_all: auditorRead,
        append: { refused: appendRefused, code: appendCode, reason: appendReason },
      },
      bearer_over_plaintext: {
        auditor_read_all: { refused: bearerRead.status !== null, code: bearerRead.code, reason: bearerRead.reason, returned: bearerRead.events, with_data: bearerRead.withData },
        operator_append: { refused: bearerAppend.status !== null, code: bearerAppend.code, reason: bearerAppend.reason },
      },
      node_stream_events_before: lengthBefore,
      node_stream_events_after: lengthAfter,
    };
    check('anonymous plaintext readAll gets no payloads', anonymous.with_data === 0, anonymous);
    check('credentials through the official client over plaintext get nothing', auditorRead.with_data === 0 && auditorRead.refused !== null && appendRefused !== null, result.kurrent);
    // Refused for being sent over plaintext: an anonymous caller is refused too, so the reason tells refused from ignored.
    check('a bearer token over plaintext is refused (read)', bearerRead.status !== null && bearerRead.code === 'API_UNAUTHORIZED' && bearerRead.reason === 'plaintext' && bearerRead.withData === 0, bearerRead);
    check('a bearer token over plaintext is refused (append)', bearerAppend.status !== null && bearerAppend.code === 'API_UNAUTHORIZED' && bearerAppend.reason === 'plaintext', bearerAppend);
    check('nothing appended over plaintext', lengthAfter === lengthBefore, { lengthBefore, lengthAfter });
    progress(`kurrent: ${JSON.stringify(result.kurrent)}`);
  }

  // 5. PostgreSQL stopped immediately under the running process.
  {
    const nodeId = 'bmc-00003';
    const killedAt = Date.now();
    const stopped = await pgCtl(liveDir, ['stop', '-m', 'immediate']);
    const outage = {
      pg_ctl: stopped.status === 0 ? 'stopped' : `exit ${stopped.status}: ${stopped.output.slice(0, 200)}`,
      healthz_asks: 0,
      healthz_failed: 0,
      healthz_max_ms: 0,
      readyz_503_seen: false,
      readyz_codes: [] as string[],
      reads_while_away: [] as string[],
      intents_refused: [] as string[],
      ready_again_s: null as number | null,
      intent_recorded_s: null as number | null,
      intent_position: null as number | null,
      process_alive: true,
    };
    const codes = new Set<string>();
    const readCodes = new Set<string>();
    const intentCodes = new Set<string>();
    let lastCordonAt = 0;
    while (Date.now() - killedAt < (RECOVERY_GOAL_S + 30) * 1000) {
      if (!live.alive()) break;
      const asked = performance.now();
      const healthy = await fetch(`${live.url}/healthz`, { signal: AbortSignal.timeout(5_000) }).then((r) => r.status === 200, () => false);
      outage.healthz_asks += 1;
      outage.healthz_max_ms = Math.max(outage.healthz_max_ms, round(performance.now() - asked));
      if (!healthy) outage.healthz_failed += 1;
      const ready = await api(live.url, '/readyz', null, { timeoutMs: 5_000 }).catch(() => null);
      if (ready && ready.status === 503) {
        outage.readyz_503_seen = true;
        codes.add(errorCode(ready.body) ?? 'none');
        // Reads while it says it is not ready: the log (through the store) and a read model (straight through pg).
        for (const [path, role] of [['/v1/events?limit=1', 'auditor'], ['/v1/liveness/summary', 'analyst']] as const) {
          const read = await api(live.url, path, role, { timeoutMs: 10_000 }).catch((error: unknown) => ({ status: 0, body: { error: String(error) }, ms: 0 }));
          readCodes.add(`${path} ${read.status} ${errorCode(read.body) ?? ''}`.trim());
        }
      }
      const readyNow = ready !== null && ready.status === 200;
      if (readyNow && outage.readyz_503_seen && outage.ready_again_s === null) outage.ready_again_s = seconds(killedAt);
      if (Date.now() - lastCordonAt >= 1000) {
        lastCordonAt = Date.now();
        const cordon = await api(live.url, `/v1/nodes/${nodeId}/cordon`, 'operator', { method: 'POST', body: JSON.stringify({ reason: 'trust bar: recorded again after PostgreSQL came back' }), timeoutMs: 15_000 }).catch((error: unknown) => ({ status: 0, body: { error: String(error) }, ms: 0 }));
        if (cordon.status === 201 || cordon.status === 200) {
          outage.intent_recorded_s = seconds(killedAt);
          const position = field(cordon.body, 'position');
          outage.intent_position = typeof position === 'number' ? position : null;
        } else {
          intentCodes.add(`${cordon.status} ${errorCode(cordon.body) ?? ''}`.trim());
        }
      }
      if (outage.intent_recorded_s !== null && readyNow) break;
      await sleep(250);
    }
    outage.process_alive = live.alive();
    outage.readyz_codes = [...codes];
    outage.reads_while_away = [...readCodes];
    outage.intents_refused = [...intentCodes];
    result.outage = outage;
    check('pg_ctl stop -m immediate ran', stopped.status === 0, stopped.output);
    check('the process outlives its database', outage.process_alive && outage.healthz_failed === 0, outage);
    check('/readyz says not ready while PostgreSQL is away', outage.readyz_503_seen, outage);
    check('reads answer 503 LEDGER_STORE_UNAVAILABLE while away', readCodes.size > 0 && [...readCodes].every((code) => / 503 LEDGER_STORE_UNAVAILABLE$/.test(code)), outage.reads_while_away);
    check('intents refused as retryable while away', [...intentCodes].every((code) => code === '503 LEDGER_STORE_UNAVAILABLE'), outage.intents_refused);
    check(`an intent recorded again within ${RECOVERY_GOAL_S} s`, outage.intent_recorded_s !== null && outage.intent_recorded_s <= RECOVERY_GOAL_S, outage);
    progress(`outage: ${JSON.stringify(outage)}`);
  }

  // 6. Tampering with copies of the stopped instance.
  {
    const tamper: Record<string, unknown> = {};
    // The older copy: taken now, after checkpoints were published.
    await sleep(12_000); // one checkpoint interval past the outage, so the published checkpoint covers it
    const olderPublished = publishedSize(publishDir);
    const firstStop = await stopInstance(live, liveDir);
    check('a clean stop', firstStop.exitCode === 0 && !firstStop.postgresLeft, firstStop);
    const olderDir = join(root, 'copy-older');
    execFileSync('cp', ['-a', liveDir, olderDir]);
    progress(`stopped (${JSON.stringify(firstStop)}); older copy taken at published size ${olderPublished}; starting again for a later checkpoint`);

    // The live instance goes on and publishes a later checkpoint.
    live = await startInstance(liveDir, publishDir, 'ready', true);
    // A checkpoint beyond every row of the older copy: its head is then behind what was published.
    const olderHead = await headPosition(live.url);
    const laterDeadline = Date.now() + 180_000;
    while (publishedSize(publishDir) <= olderHead && Date.now() < laterDeadline) await sleep(1000);
    const laterPublished = publishedSize(publishDir);
    const secondStop = await stopInstance(live, liveDir);
    check('a clean stop (second)', secondStop.exitCode === 0 && !secondStop.postgresLeft, secondStop);
    check("a later checkpoint published, beyond the older copy's head", laterPublished > olderHead, { olderPublished, olderHead, laterPublished });
    tamper.published_sizes = { when_older_copy_taken: olderPublished, later: laterPublished };

    const cases = [
      { name: 'tail_deleted_head_rewound', expected: 'AUDIT_TREE_BEYOND_LOG', from: liveDir },
      { name: 'row_rewritten_chain_recomputed', expected: 'AUDIT_LEAF_MISMATCH', from: liveDir },
      { name: 'older_copy_restored', expected: 'AUDIT_HEAD_BEHIND_CHECKPOINT', from: olderDir },
    ] as const;
    for (const tamperCase of cases) {
      const dir = tamperCase.from === olderDir ? olderDir : join(root, `copy-${tamperCase.name}`);
      if (dir !== olderDir) execFileSync('cp', ['-a', tamperCase.from, dir]);
      // Every copy is judged against what the live instance published last (the witnesses' and auditors' copy).
      const published = join(root, `published-${tamperCase.name}`);
      cpSync(publishDir, published, { recursive: true });
      clusterDirs.add(dir);
      const pgPort = await freePort();
      await startClusterAlone(dir, pgPort);
      const url = superuserUrl(dir, pgPort);
      const sizes = await logSizes(url);
      let done: Record<string, unknown> = { ...sizes };
      if (tamperCase.name === 'tail_deleted_head_rewound') {
        const keep = Math.min(sizes.headPosition, sizes.treeSize) - 100;
        done = { ...done, kept_to: keep, ...(await deleteTailAndRewindHead(url, keep)) };
      } else if (tamperCase.name === 'row_rewritten_chain_recomputed') {
        const position = sizes.treeSize - 200;
        done = { ...done, position, ...(await rewriteRowAndRecomputeChain(url, position, { kind: 'operator', id: 'someone-else' })) };
      }
      const halted = await pgCtl(dir, ['stop', '-m', 'fast', '-w']);
      if (halted.status !== 0) throw new Error(`pg_ctl stop on ${tamperCase.name}: ${halted.output}`);
      progress(`${tamperCase.name}: ${JSON.stringify(done)}; starting the copy`);

      const startedAt = Date.now();
      const copy = await startInstance(dir, published, 'answering', false);
      let ready: { status: number; body: Record<string, unknown> } = { status: 0, body: {} };
      let integrity: unknown = undefined;
      for (const deadline = Date.now() + 120_000; Date.now() < deadline && copy.alive(); ) {
        ready = await api(copy.url, '/readyz', null).catch(() => ({ status: 0, body: {}, ms: 0 }));
        integrity = field(ready.body, 'error', 'details', 'integrity');
        if (typeof integrity === 'string') break;
        await sleep(1000);
      }
      const alarmS = seconds(startedAt);
      const metrics = copy.alive() ? await api(copy.url, '/metrics', 'auditor').catch(() => null) : null;
      const metricLine = typeof field(metrics?.body, 'text') === 'string' ? String(field(metrics?.body, 'text')).split('\n').find((line) => line.startsWith('fleet_ledger_integrity_alarm{')) ?? null : null;
      const status = copy.alive() ? await api(copy.url, '/v1/audit/status', 'auditor').catch(() => null) : null;
      const statusCode = field(status?.body, 'integrityAlarm', 'code');
      const logged = /LEDGER INTEGRITY ALARM/.test(copy.output());
      // Whether an append may reuse a position the ledger already signed (it may not): an intent, and whatever the
      // poller's thread recorded in one interval since the start.
      const cordon = copy.alive() ? await api(copy.url, '/v1/nodes/bmc-00004/cordon', 'operator', { method: 'POST', body: JSON.stringify({ reason: 'trust bar: after the tampering' }) }).catch(() => null) : null;
      await sleep(Math.max(0, startedAt + (INTERVAL_S + 5) * 1000 - Date.now()));
      const headAtStop = copy.alive() ? await headPosition(copy.url).catch(() => null) : null;
      const copyStop = await stopInstance(copy, dir);
      const headAfterTampering = tamperCase.name === 'tail_deleted_head_rewound' ? Number(done.kept_to) : sizes.headPosition;
      const raised = ready.status === 503 && typeof integrity === 'string' && integrity.startsWith('AUDIT_') && metricLine !== null && / 1$/.test(metricLine) && statusCode === integrity && logged;
      tamper[tamperCase.name] = {
        tampering: done,
        verdict: raised ? 'alarm raised at start' : 'NOT RAISED',
        readyz: `${ready.status} ${errorCode(ready.body) ?? ''} ${typeof integrity === 'string' ? integrity : ''}`.trim(),
        expected_code: tamperCase.expected,
        metric: metricLine,
        audit_status_alarm: typeof statusCode === 'string' ? statusCode : null,
        alarm_logged: logged,
        alarm_s_after_start: alarmS,
        append_after: cordon ? `${cordon.status} ${errorCode(cordon.body) ?? ''}`.trim() : null,
        head_after_tampering: headAfterTampering,
        head_at_stop: headAtStop,
        stop_exit: copyStop.exitCode,
      };
      check(`${tamperCase.name}: online alarm at the next start`, raised, tamper[tamperCase.name]);
      // Behind what was signed, every position up to the signed size is refused to every writer: the head stays.
      if (tamperCase.name !== 'row_rewritten_chain_recomputed') check(`${tamperCase.name}: no signed position taken again`, headAtStop === headAfterTampering, { headAfterTampering, headAtStop });
      check(`${tamperCase.name}: the copy stops cleanly`, copyStop.exitCode === 0 && !copyStop.postgresLeft, copyStop);
      progress(`${tamperCase.name}: ${JSON.stringify(tamper[tamperCase.name])}`);
    }
    result.tamper = tamper;
  }
} catch (error) {
  failures.push(`the run stopped: ${error instanceof Error ? error.message.slice(0, 1500) : String(error)}`);
} finally {
  await cleanup();
}

result.machine = { ...(result.machine as object), loadavg_end: loadavg().map((l) => round(l)), uptime_end: execFileSync('uptime', { encoding: 'utf8' }).trim() };
result.passed = failures.length === 0;
result.failures = failures;
process.stdout.write(`${JSON.stringify(result)}\n`);
process.exitCode = failures.length === 0 ? 0 : 1;
