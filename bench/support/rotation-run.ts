/**
 * One credential rotation of a simulated fleet, with the engine in a child process SIGKILLed at seeded moments and
 * started again, judged from the BMCs' side. `npm run bench:rotation` runs it at scale; the kill test runs a small one.
 *
 * The parent holds what must outlive the kills: the simulator (each BMC's password, failed logins and lockouts with
 * a lockout threshold of 3), the credentials file and the poller, which logs in to every BMC with the version the
 * ledger says is in force (and to nothing while a rotation fences it), with heavy reads on, so a poller that raced a
 * change would show as a failed login, a lockout or a latch. FLEET_LEDGER_DEBUG_ROTATION=1 copies the engine's log.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { sql } from 'kysely';
import { FileCredentialStore, writeOperatorCredentials } from '../../src/credentials/index.js';
import { registerSimulatedFleet } from '../../src/demo/demo-fleet.js';
import { EventStore } from '../../src/ledger/index.js';
import { Poller } from '../../src/poller/index.js';
import { startSimulator, type FaultSpecInput, type FleetStats, type SimBmcInfo } from '../../src/sim/index.js';
import { profileNames } from '../../src/sim/capture-source.js';
import { applyRotationVerb, loadCredentialStep, loadRotation, previewRotation, requestRotation, rotationCandidates, seededRandom, type RotationRequest } from '../../sagas/index.js';
import { bundledEntry } from './bundled-entry.js';
import { simJson, startSimProcess } from './sim-process.js';

export interface RotationRunOptions {
  connectionString: string;
  bmcs: number;
  cap: number;
  kills: number;
  seed: number;
  /** Kills land this long after the engine reports ready (uniform between the two). */
  killAfterMs: [number, number];
  fenceGraceMs: number;
  livenessIntervalS: number;
  /** The poller's heavy reads (health, inventory, firmware) every this many seconds: they too must never race a change. */
  heavyIntervalS: number;
  pollerRequestTimeoutMs: number;
  waveFractions?: number[];
  bakeMs?: number;
  faults?: (bmcIds: string[]) => FaultSpecInput[];
  /** Failure budgets of the plan (default: 5 canary BMCs, 5% of a wave, 5% in all). */
  budgets?: RotationRequest['budgets'];
  /** The store holds the Dell factory credential (`factory:dell`, root/calvin) and the plan allows the fallback to it. */
  factoryFallback?: boolean;
  timeoutMs: number;
  simProcess?: boolean;
  log?: (line: string) => void;
}

export interface RotationRunResult {
  bmcs: number;
  kills: number;
  rotated: number;
  /** Not rotated: kept (the old version verified and in force), held (fenced, a named hold), skipped, or never settled. */
  held: number;
  lockouts: number;
  unknown_password_bmcs: number;
  max_failed_logins_per_bmc: number;
  poller_latches_from_rotation: number;
  wall_s: number;
  status: string;
  kept: number;
  held_fenced: number;
  failed_logins: number;
  password_changes: number;
  password_changes_refused: number;
  versions_retired: boolean;
  holds: Array<{ nodeId: string; hold?: string; cause?: string }>;
  /** Each BMC's failed logins and lockouts as the simulator counted them, and its login purposes in the rotation. */
  perBmc: Map<string, { failedLogins: number; lockouts: number }>;
  /** Every event type of every BMC's step stream (tests read what a BMC's rotation went through). */
  steps: Map<string, Array<{ type: string; data: Record<string, unknown> }>>;
  /** Liveness outcomes the poller recorded per node after the rotation settled. */
  outcomesAfter: Map<string, string[]>;
  scale: string;
}

interface SimHandle {
  controlUrl: string;
  bmcs: SimBmcInfo[];
  fleet(): Promise<SimBmcInfo[]>;
  stats(): Promise<FleetStats>;
  injectFault(fault: FaultSpecInput): Promise<void>;
  close(): Promise<void>;
}

const behaviour = { latencyScale: 0.02, darkMode: 'refuse' as const, lockoutThreshold: 3, lockoutMs: 600_000 };

async function inProcessSim(options: RotationRunOptions): Promise<SimHandle> {
  const sim = await startSimulator({ bmcs: options.bmcs, seed: options.seed, behaviour });
  return {
    controlUrl: sim.controlUrl,
    bmcs: sim.bmcs,
    fleet: async () => sim.fleet(),
    stats: async () => sim.stats(),
    injectFault: async (fault) => void sim.injectFault(fault),
    close: () => sim.close(),
  };
}

async function ownProcessSim(options: RotationRunOptions, folder: string): Promise<SimHandle> {
  const scenario = join(folder, 'scenario.json');
  writeFileSync(
    scenario,
    JSON.stringify({
      name: 'bench-rotation',
      seed: options.seed,
      fleet: { bmcs: options.bmcs, mix: profileNames().map((profile) => ({ profile, share: 1 })) },
      behaviour: { latencyScale: behaviour.latencyScale, darkMode: behaviour.darkMode, lockoutThreshold: behaviour.lockoutThreshold, lockoutDuration: '10m' },
    }),
  );
  const { child, controlUrl } = await startSimProcess(['--scenario', scenario]);
  const json = <T>(path: string, init?: { method: 'POST'; body: unknown }): Promise<T> => simJson<T>(`${controlUrl}${path}`, init);
  const bmcs = (await json<{ bmcs: SimBmcInfo[] }>('/sim/fleet')).bmcs;
  return {
    controlUrl,
    bmcs,
    fleet: async () => (await json<{ bmcs: SimBmcInfo[] }>('/sim/fleet')).bmcs,
    stats: () => json<FleetStats>('/sim/stats'),
    injectFault: async (fault) => void (await json('/sim/faults', { method: 'POST', body: fault })),
    close: async () => {
      child.kill('SIGTERM');
      await new Promise((resolve) => child.once('exit', resolve));
    },
  };
}

const child = fileURLToPath(new URL('./rotation-child.ts', import.meta.url));

export async function runRotation(options: RotationRunOptions): Promise<RotationRunResult> {
  const started = performance.now();
  const log = options.log ?? (() => undefined);
  const folder = mkdtempSync(join(tmpdir(), 'fleet-ledger-rotation-'));
  const sim = options.simProcess ? await ownProcessSim(options, folder) : await inProcessSim(options);
  for (const fault of options.faults?.(sim.bmcs.map((bmc) => bmc.id)) ?? []) await sim.injectFault(fault);
  // The operator's credentials file: one reference per BMC (the demo's `sim:<id>`), each bound to its BMC's address.
  const credentialsFile = join(folder, 'credentials.json');
  const operatorEntries = Object.fromEntries(sim.bmcs.map((bmc) => [`sim:${bmc.id}`, { username: bmc.username, password: bmc.password, endpoints: [new URL(bmc.baseUrl).origin] }]));
  if (options.factoryFallback) {
    // The site's factory credential, bound to the Dell BMCs' addresses only.
    operatorEntries['factory:dell'] = { username: 'root', password: 'calvin', endpoints: sim.bmcs.filter((bmc) => bmc.vendor === 'dell').map((bmc) => new URL(bmc.baseUrl).origin) };
  }
  writeOperatorCredentials(credentialsFile, operatorEntries);
  const credentials = new FileCredentialStore(credentialsFile);
  const store = await EventStore.open({ connectionString: options.connectionString, migrate: true, poolSize: 8 });
  await registerSimulatedFleet(store, sim.bmcs, options.livenessIntervalS);
  log(`${sim.bmcs.length} BMCs registered`);
  const heavy = options.heavyIntervalS;
  // The poller's outcomes once the rotation has settled: a rotated BMC must be logged in to with its new version.
  let settledAt = Number.POSITIVE_INFINITY;
  const recordedAfter = new Map<string, string[]>();
  const poller = new Poller({
    onOutcome: (nodeId, work, outcome, _latency, at) => {
      if (at < settledAt) return;
      const list = recordedAfter.get(nodeId) ?? [];
      if (list.length < 20) list.push(`${work}:${outcome}`);
      recordedAfter.set(nodeId, list);
    },
    store,
    credentials,
    plainHttpSites: ['*'],
    policy: { intervals: { health: heavy, inventory: heavy, firmware: heavy }, firstReadSpreadS: heavy, requestTimeoutMs: options.pollerRequestTimeoutMs, flushIntervalMs: 1_000 },
    log: () => undefined,
  });
  const intents = new AbortController();
  const following = poller.followIntents(intents.signal);
  poller.start();
  try {
    // Let the poller make its first contacts (and first heavy reads) before the rotation: it is in full swing.
    await new Promise((resolve) => setTimeout(resolve, Math.min(20_000, options.livenessIntervalS * 1000 + 1_500)));
    const rotationId = `bench-rotation-${options.seed}`;
    const request: RotationRequest = {
      selector: {},
      seed: options.seed,
      capPerSite: options.cap,
      inFlightDomainLimits: { rack: 8 },
      ...(options.waveFractions ? { waveFractions: options.waveFractions } : {}),
      budgets: options.budgets ?? { canaryFailures: 5, waveFailureRatio: 0.05, cumulativeFailureRatio: 0.05 },
      ...(options.factoryFallback ? { factoryFallback: { credentialRef: 'factory:dell' } } : {}),
      bakeMs: options.bakeMs ?? 1_000,
      fenceGraceMs: options.fenceGraceMs,
      lockoutThreshold: 3,
      retryBudget: 1,
      stepDeadlineMs: 600_000,
      retireOld: true,
    };
    const plan = previewRotation(request, await rotationCandidates(store.db as never));
    const operator = { kind: 'operator' as const, id: 'bench@fleet-ledger', role: 'operator' };
    const planned = await requestRotation(store, rotationId, plan, operator);
    const planPosition = Number((await store.readStream(`rotation-${rotationId}`, { limit: 1 }))[0]?.position ?? 0);
    await applyRotationVerb(store, rotationId, { verb: 'approve', reason: 'benchmark' }, operator, planned.version);
    log(`rotation ${rotationId} planned (${plan.targets.length} BMCs in ${plan.waves.length} waves) and approved`);
    const timing = { tickMs: 200, requestTimeoutMs: 5_000, retryBackoffMs: 1_000, unreachableRetryMs: 1_000 };
    const random = seededRandom(options.seed ^ 0x6b696c6c);
    const script = await bundledEntry(child);
    let kills = 0;
    let status = 'running';
    const deadline = Date.now() + options.timeoutMs;
    while (Date.now() < deadline) {
      const killAt = kills < options.kills ? options.killAfterMs[0] + random() * (options.killAfterMs[1] - options.killAfterMs[0]) : undefined;
      const outcome = await runChild(script, options.connectionString, rotationId, credentialsFile, JSON.stringify(timing), killAt, deadline - Date.now());
      if (outcome.killed) {
        kills++;
        log(`kill ${kills} after ${Math.round(killAt ?? 0)} ms`);
        continue;
      }
      status = outcome.status ?? 'unknown';
      break;
    }
    settledAt = Date.now();
    log(`rotation ended: ${status}`);
    // The poller meets the rotated BMCs with their new version before the count.
    await new Promise((resolve) => setTimeout(resolve, Math.min(15_000, options.livenessIntervalS * 1000 + 2_000)));
    const rotation = await loadRotation(store, rotationId);
    log('counting');
    const counts = { rotated: 0, kept: 0, held: 0, skipped: 0 };
    for (const { outcome } of rotation.outcomes.values()) counts[outcome]++;
    const holds: RotationRunResult['holds'] = [];
    for (const [nodeId, settled] of rotation.outcomes) {
      if (settled.outcome === 'rotated' && !process.env['FLEET_LEDGER_DEBUG_ROTATION_ALL']) continue;
      const step = await loadCredentialStep(store, rotationId, nodeId);
      if (holds.length < 50) holds.push({ nodeId, ...(step.hold ? { hold: step.hold } : {}), ...(step.cause ? { cause: step.cause.slice(0, 200) } : {}) });
      if (process.env['FLEET_LEDGER_DEBUG_ROTATION']) {
        const events = await store.readStreamToEnd(`credstep-${rotationId}-${nodeId}`);
        log(`${nodeId}: ${events.map((event) => `${event.type}${JSON.stringify(event.data).slice(0, 160)}@${event.recordedAt.toISOString().slice(14, 23)}`).join('\n  ')}`);
      }
    }
    // Every BMC's password, as the simulator holds it, against every version the store holds for its reference.
    const fleet = await sim.fleet();
    const checking = new FileCredentialStore(credentialsFile, { recheckMs: 0 });
    let unknownPasswords = 0;
    for (const bmc of fleet) {
      const ref = `sim:${bmc.id}`;
      const held = checking.versions(ref).some((info) => checking.getVersion(ref, info.version)?.password === bmc.password);
      if (!held) unknownPasswords++;
    }
    log('passwords checked');
    const latches = await sql<{ n: string }>`SELECT count(*) AS n FROM ledger_events WHERE type = 'LockoutLatched' AND position > ${planPosition}`.execute(store.db as never);
    const stats = await sim.stats();
    const perBmc = new Map<string, { failedLogins: number; lockouts: number }>();
    const steps = new Map<string, Array<{ type: string; data: Record<string, unknown> }>>();
    const outcomesAfter = new Map<string, string[]>();
    if (sim.bmcs.length <= 200) {
      for (const bmc of sim.bmcs) {
        const one = await simJson<{ detail: Array<{ failedLogins: number; lockouts: number }> }>(`${sim.controlUrl}/sim/stats?bmc=${bmc.id}`);
        perBmc.set(bmc.id, { failedLogins: one.detail[0]!.failedLogins, lockouts: one.detail[0]!.lockouts });
        steps.set(bmc.id, (await store.readStreamToEnd(`credstep-${rotationId}-${bmc.id}`)).map((event) => ({ type: event.type, data: event.data as Record<string, unknown> })));
      }
      for (const [nodeId, outcomes] of recordedAfter) outcomesAfter.set(nodeId, outcomes);
    }
    log('counted');
    const targets = plan.targets.length;
    return {
      bmcs: sim.bmcs.length,
      kills,
      rotated: counts.rotated,
      held: targets - counts.rotated,
      lockouts: stats.lockouts,
      unknown_password_bmcs: unknownPasswords,
      max_failed_logins_per_bmc: stats.failedLoginsMaxPerBmc,
      poller_latches_from_rotation: Number(latches.rows[0]?.n ?? 0),
      wall_s: Math.round((performance.now() - started) / 100) / 10,
      status: rotation.status === 'running' ? status : rotation.status,
      kept: counts.kept,
      held_fenced: counts.held,
      failed_logins: stats.failedLogins,
      password_changes: stats.passwordChanges,
      password_changes_refused: stats.passwordChangesRefused,
      versions_retired: rotation.retired,
      holds,
      perBmc,
      steps,
      outcomesAfter,
      scale: `fence grace ${options.fenceGraceMs} ms, poller liveness every ${options.livenessIntervalS} s and heavy reads every ${options.heavyIntervalS} s, BMC latency x${behaviour.latencyScale}`,
    };
  } finally {
    intents.abort();
    await following.catch(() => undefined);
    await poller.stop();
    await store.close();
    await sim.close();
    rmSync(folder, { recursive: true, force: true });
  }
}

function runChild(script: string, url: string, rotationId: string, credentialsFile: string, timing: string, killAfterMs: number | undefined, timeoutMs: number): Promise<{ killed: boolean; status?: string }> {
  return new Promise((resolve, reject) => {
    const proc = spawn(process.execPath, [script, url, rotationId, credentialsFile, timing], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let killed = false;
    let timer: NodeJS.Timeout | undefined;
    let timedOut = false;
    const guard = setTimeout(() => {
      timedOut = true;
      proc.kill('SIGKILL');
    }, Math.max(1_000, timeoutMs));
    proc.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      if (killAfterMs !== undefined && timer === undefined && out.includes('ready\n')) {
        timer = setTimeout(() => {
          killed = true;
          proc.kill('SIGKILL');
        }, killAfterMs);
      }
    });
    let err = '';
    proc.stderr.on('data', (chunk: Buffer) => {
      err = (err + chunk.toString()).slice(-4000);
      if (process.env['FLEET_LEDGER_DEBUG_ROTATION']) process.stderr.write(chunk);
    });
    proc.on('error', reject);
    proc.on('exit', (code) => {
      clearTimeout(guard);
      if (timer) clearTimeout(timer);
      if (killed) return resolve({ killed: true });
      if (timedOut) return resolve({ killed: false, status: 'timeout' });
      const status = /done (\w[\w-]*)/.exec(out)?.[1];
      if (code !== 0 && !status) return reject(new Error(`rotation engine exited ${code}: ${err}`));
      resolve({ killed: false, ...(status ? { status } : {}) });
    });
  });
}
