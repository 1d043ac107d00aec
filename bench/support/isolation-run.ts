/**
 * One run of the caller-isolation measurement (issue 39, point 3): a fleet polled by the scheduler while the API is
 * sent a large EBOM whose last line is bad and many large JSON bodies at once, against the same fleet without them.
 * The simulator runs in a process of its own (real BMCs do not share the ledger's loop either). Prints nothing;
 * `bench/caller-isolation.ts` and `test/poller/caller-isolation.test.ts` read the figures.
 *
 * A node is counted late when one of its liveness checks failed during the phase or it went longer than 1.5 intervals
 * (plus 1 s) without a successful contact, dark when it failed `darkThreshold` checks in a row or went that many
 * intervals without one. The poll loop's delay is how late its timers fired (the poller's thread, or the main
 * thread when `threaded` is false: the code before the poller had a thread of its own, run as the baseline).
 */
import type { ChildProcess } from 'node:child_process';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { buildApi, TokenTable } from '../../src/api/index.js';
import { EventStore } from '../../src/ledger/index.js';
import { Poller, ThreadedPoller, type LoopDelay, type PollPolicy } from '../../src/poller/index.js';
import { startThread } from '../../src/thread.js';
import type { FromLoadSender, LoadSenderData, LoadSenderResult } from './load-sender.js';
import { simJson, startSimProcess, type SimBmc } from './sim-process.js';
import { badLastLineEbom } from './bad-last-line-ebom.js';


export interface IsolationRunOptions {
  connectionString: string;
  bmcs: number;
  intervalS: number;
  /** Seconds of each phase (quiet, then loaded); the loaded phase lasts at least until every request is answered. */
  phaseS: number;
  ebomBytes: number;
  bodies: number;
  bodyBytes: number;
  /** False: the poller on the main thread, as before it had a thread of its own (the baseline). */
  threaded: boolean;
  requestTimeoutMs?: number;
  darkThreshold?: number;
}

export interface PhaseFigures {
  liveness_checks: number;
  failed_checks: number;
  late_nodes: number;
  dark_nodes: number;
  loop_delay_p50_ms: number;
  loop_delay_p99_ms: number;
  loop_delay_max_ms: number;
  healthz_max_ms: number;
  healthz_p99_ms: number;
}

export interface IsolationRunResult {
  poller: 'thread' | 'main-thread';
  bmcs: number;
  interval_s: number;
  quiet: PhaseFigures;
  /** Why the poller stopped following the log, if it did (its targets then stop changing). */
  follow_failure: string | null;
  loaded: PhaseFigures & { ebom_mb: number; ebom_status: number; ebom_field: string | null; ebom_s: number; bodies: number; body_mb: number; bodies_statuses: Record<string, number>; bodies_s: number; events_written: number };
  /** loaded / quiet; late and dark as the nodes added by the load. */
  ratios: { loop_delay_p99: number; healthz_max: number; late_nodes_added: number; dark_nodes_added: number };
}

const operatorToken = 'isolation-operator-token-01';

function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

/**
 * Asked again after a failure: in the baseline the API's thread is frozen long enough for a database connection to time
 * out, which is a figure of that run, not a reason to lose it.
 */
async function patiently<T>(ask: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await ask();
    } catch (error) {
      if (attempt >= 5) throw error;
      await new Promise((resolve) => setTimeout(resolve, 2000));
    }
  }
}

const round = (value: number, places = 2): number => Math.round(value * 10 ** places) / 10 ** places;

export async function runIsolation(options: IsolationRunOptions): Promise<IsolationRunResult> {
  const darkThreshold = options.darkThreshold ?? 10;
  let sim: { child: ChildProcess; controlUrl: string } | null = null;
  const store = await EventStore.open({ connectionString: options.connectionString, poolSize: 8 });
  let poller: Poller | ThreadedPoller | null = null;
  const follow = new AbortController();
  let following: Promise<void> = Promise.resolve();
  let followFailure: string | null = null;
  let app: Awaited<ReturnType<typeof buildApi>> | null = null;
  const mainDelay = monitorEventLoopDelay({ resolution: 10 });
  try {
    sim = await startSimProcess(['--bmcs', String(options.bmcs), '--seed', '7', '--latency-scale', '0.05']);
    const fleet = (await simJson<{ bmcs: SimBmc[] }>(`${sim.controlUrl}/sim/fleet`)).bmcs;
    const actor = { kind: 'operator' as const, id: 'isolation-bench' };
    await Promise.all(
      fleet.map((bmc) =>
        store.append(`node-${bmc.id}`, [
          { type: 'NodeRegistered', data: { nodeId: bmc.id, site: bmc.site, rack: bmc.rack, bmc: { protocol: 'redfish', address: bmc.baseUrl, credentialRef: bmc.id, sessionLimit: bmc.sessionLimit }, expectedIntervalS: options.intervalS }, actor },
        ]),
      ),
    );
    const credentials = new Map(fleet.map((b) => [b.id, { username: b.username, password: b.password, version: '1', endpoints: [new URL(b.baseUrl).origin] }]));

    // Liveness checks by the time they were made: a phase counts the checks of its own window.
    const checks: Array<{ nodeId: string; ok: boolean; at: number }> = [];
    const onOutcome = (nodeId: string, work: string, outcome: string, _latencyMs: number, at: number): void => {
      if (work === 'liveness' && outcome !== 'latched') checks.push({ nodeId, ok: outcome === 'success' || outcome === 'not-modified', at });
    };
    const policy: Partial<PollPolicy> = {
      requestTimeoutMs: options.requestTimeoutMs ?? Math.min(10_000, options.intervalS * 500),
      flushIntervalMs: Math.min(5000, options.intervalS * 1000),
      maxConcurrentVisits: 1024,
      // Only liveness: the heavy reads of a fleet brought up would be load of their own, the same in both phases.
      firstReadSpreadS: 86_400,
    };
    if (options.threaded) {
      poller = new ThreadedPoller({ connectionString: options.connectionString, credentials: { get: (ref) => credentials.get(ref) }, credentialRefs: () => credentials.keys(), policy, plainHttpSites: ['*'], onOutcome });
      await poller.ready();
    } else {
      poller = new Poller({ store, credentials: { get: (ref) => credentials.get(ref) }, policy, plainHttpSites: ['*'], onOutcome });
    }
    // A follow that fails (the baseline's frozen thread lets its database connections time out) is a figure, not a crash.
    following = poller.followIntents(follow.signal).catch((error: unknown) => {
      followFailure = String(error);
    });
    poller.start();

    app = await buildApi({ store, poller, tokens: new TokenTable([{ token: operatorToken, principal: 'isolation-bench', role: 'operator' }]) });
    const address = await app.listen({ port: 0, host: '127.0.0.1' });

    // Warm up: every node contacted, and one more interval of steady polling.
    const warmUntil = Date.now() + 120_000;
    while (new Set(checks.filter((c) => c.ok).map((c) => c.nodeId)).size < fleet.length && Date.now() < warmUntil) await new Promise((resolve) => setTimeout(resolve, 250));
    await new Promise((resolve) => setTimeout(resolve, options.intervalS * 1000));

    const threadedPoller = poller instanceof ThreadedPoller ? poller : null;
    const loopDelay = async (): Promise<LoopDelay> => {
      if (!threadedPoller) {
        const ms = (ns: number): number => round(ns / 1e6);
        return { p50Ms: ms(mainDelay.percentile(50)), p99Ms: ms(mainDelay.percentile(99)), maxMs: ms(mainDelay.max), samples: mainDelay.count };
      }
      // The thread reports once a second: wait for a report that covers the whole phase.
      await new Promise((resolve) => setTimeout(resolve, 1500));
      return threadedPoller.loopDelay();
    };
    const resetDelay = (): void => {
      mainDelay.reset();
      mainDelay.enable();
      threadedPoller?.resetLoopDelay();
    };

    /**
     * A phase: the callers' thread asks `/healthz` throughout and sends `load` (if any); the phase lasts `phaseS`, or
     * until the load is answered.
     */
    const phase = async (load: LoadSenderData['load']): Promise<{ figures: PhaseFigures; startedAt: number; sent: LoadSenderResult | null }> => {
      resetDelay();
      const startedAt = Date.now();
      const callers = startThread(new URL('./load-sender.ts', import.meta.url), { address, token: operatorToken, load } satisfies LoadSenderData);
      const answers: FromLoadSender[] = [];
      const next = (kind: FromLoadSender['kind']): Promise<FromLoadSender> =>
        new Promise((resolve, reject) => {
          const found = answers.find((answer) => answer.kind === kind);
          if (found) return resolve(found);
          const onMessage = (message: FromLoadSender): void => {
            if (message.kind !== kind) return void answers.push(message);
            callers.off('message', onMessage);
            resolve(message);
          };
          callers.on('message', onMessage);
          callers.once('error', reject);
        });
      const done = (await next('load-done')) as FromLoadSender & { kind: 'load-done' };
      const rest = startedAt + options.phaseS * 1000 - Date.now();
      if (rest > 0) await new Promise((resolve) => setTimeout(resolve, rest));
      callers.postMessage('stop');
      const health = ((await next('health')) as FromLoadSender & { kind: 'health' }).answerMs.sort((x, y) => x - y);
      await callers.terminate();
      const delay = await loopDelay();
      // Outcomes of checks made in the window reach us up to a second late (the thread reports once a second).
      await new Promise((resolve) => setTimeout(resolve, 1500));
      const endedAt = startedAt + Math.max(options.phaseS * 1000, Date.now() - 1500 - startedAt);
      const inWindow = checks.filter((c) => c.at >= startedAt && c.at <= endedAt);
      // Late: a check failed, or the node went longer than its interval (and a half, and a second of slack) without
      // a successful contact (a check that is never made fails nobody, but the node is just as late).
      const allowedGapMs = options.intervalS * 1500 + 1000;
      const late = new Set(inWindow.filter((c) => !c.ok).map((c) => c.nodeId));
      const lastOk = new Map<string, number>();
      const dark = new Set<string>();
      const streak = new Map<string, number>();
      for (const check of checks) {
        if (check.at > endedAt) continue;
        if (check.at >= startedAt) {
          const count = check.ok ? 0 : (streak.get(check.nodeId) ?? 0) + 1;
          streak.set(check.nodeId, count);
          if (count >= darkThreshold) dark.add(check.nodeId);
        }
        if (!check.ok) continue;
        const previous = lastOk.get(check.nodeId);
        if (previous !== undefined && check.at >= startedAt && check.at - previous > allowedGapMs) late.add(check.nodeId);
        if (previous !== undefined && check.at >= startedAt && check.at - previous > darkThreshold * options.intervalS * 1000) dark.add(check.nodeId);
        lastOk.set(check.nodeId, check.at);
      }
      for (const [nodeId, at] of lastOk) if (endedAt - at > allowedGapMs) late.add(nodeId);
      return {
        startedAt,
        sent: done.result,
        figures: {
          liveness_checks: inWindow.length,
          failed_checks: inWindow.filter((c) => !c.ok).length,
          late_nodes: late.size,
          dark_nodes: dark.size,
          loop_delay_p50_ms: delay.p50Ms,
          loop_delay_p99_ms: delay.p99Ms,
          loop_delay_max_ms: delay.maxMs,
          healthz_max_ms: round(health.at(-1) ?? Number.NaN),
          healthz_p99_ms: round(percentile(health, 99)),
        },
      };
    };

    const quiet = await phase(null);

    // Every body made before the phase: the sender shares the API's thread, and must not be what delays it.
    const ebom = badLastLineEbom(options.ebomBytes);
    const ebomBytes = Buffer.from(ebom.text);
    const padding = 'x'.repeat(options.bodyBytes);
    // Registrations whose interval is a megabyte of text: parsed whole, then refused naming the field.
    const bigBodies = Array.from({ length: options.bodies }, (_, i) =>
      Buffer.from(JSON.stringify({ nodeId: `big-${i}`, site: 'ebsite', rack: 'r1', bmc: { protocol: 'redfish', address: `https://big-${i}.bmc`, credentialRef: 'c' }, expectedIntervalS: padding })),
    );
    const loadFigures = { ebom_status: 0, ebom_field: null as string | null, ebom_s: 0, bodies_statuses: {} as Record<string, number>, bodies_s: 0 };
    const headBefore = (await patiently(() => store.head())).position;
    const loaded = await phase({ ebom: ebomBytes, bodies: bigBodies });
    if (loaded.sent) Object.assign(loadFigures, { ebom_status: loaded.sent.ebomStatus, ebom_field: loaded.sent.ebomField, ebom_s: loaded.sent.ebomS, bodies_statuses: loaded.sent.bodiesStatuses, bodies_s: loaded.sent.bodiesS });
    // What the load could have written (the poller writes outcomes and observations meanwhile, which do not count).
    const written = await patiently(() => store.pool.query<{ n: string }>(`SELECT count(*) AS n FROM ledger_events WHERE position > $1 AND type IN ('EbomImported', 'NodeDeclared', 'NodeRegistered')`, [headBefore]));

    const q = quiet.figures;
    const l = loaded.figures;
    return {
      poller: options.threaded ? 'thread' : 'main-thread',
      bmcs: fleet.length,
      interval_s: options.intervalS,
      quiet: q,
      follow_failure: followFailure,
      loaded: { ...l, ebom_mb: round(ebom.text.length / 1e6, 1), ebom_status: loadFigures.ebom_status, ebom_field: loadFigures.ebom_field, ebom_s: loadFigures.ebom_s, bodies: options.bodies, body_mb: round(options.bodyBytes / 1e6, 2), bodies_statuses: loadFigures.bodies_statuses, bodies_s: loadFigures.bodies_s, events_written: Number(written.rows[0]!.n) },
      ratios: {
        loop_delay_p99: round(l.loop_delay_p99_ms / q.loop_delay_p99_ms),
        healthz_max: round(l.healthz_max_ms / q.healthz_max_ms),
        late_nodes_added: l.late_nodes - q.late_nodes,
        dark_nodes_added: l.dark_nodes - q.dark_nodes,
      },
    };
  } finally {
    mainDelay.disable();
    follow.abort();
    await app?.close();
    await poller?.stop();
    await following;
    sim?.child.kill('SIGTERM');
    await store.close();
  }
}
