/**
 * One scale run: a simulated fleet in its own process, the poller (or the naive baseline) in this one,
 * the ledger on a fresh database; 100 (or a share of) BMCs made dark mid-run, some made to flap while
 * still answering at least once every five polls. Prints nothing; returns the figures.
 */
import type { ChildProcess } from 'node:child_process';
import { cpus } from 'node:os';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { ThreadedProjectionRunner } from '../../projections/index.js';
import { EventStore } from '../../src/ledger/index.js';
import { Poller, type PushPolicy } from '../../src/poller/index.js';
import { injectPushFaults, pushFindings, type PushInjection } from './push-injection.js';
import { NaivePoller } from './naive-poller.js';
import { simJson, startSimProcess, type SimBmc } from './sim-process.js';
import { percentile, round } from './bench-database.js';

export interface ScaleRunOptions {
  bmcs: number;
  intervalS: number;
  durationS: number;
  /** When the dark BMCs go dark, seconds into the run. */
  darkAtS: number;
  darkCount: number;
  flapCount: number;
  naive: boolean;
  connectionString: string;
  /** Consecutive misses that make a node dark (the liveness rule). */
  darkThreshold?: number;
  requestTimeoutMs?: number;
  /** Real Mockup-Creator captures to serve instead of the built-in vendor profiles (`sim --captures`). */
  captures?: string;
  /** Run the fleet's projections beside the poller, as `fleet-ledger start` does, and measure their lag (default true). */
  projections?: boolean;
  /** The poller's `firstReadSpreadS` (default: the policy's). */
  firstReadSpreadS?: number;
  /** Heavy reads in flight across the fleet (default 1,024). */
  maxConcurrentReads?: number;
  /** The poller's `expandCollections` (default true): false reads every member of a collection on its own. */
  expandCollections?: boolean;
  /** The simulator's `--latency-scale` (default 1: modelled response times, firmware inventories of minutes). */
  latencyScale?: number;
  /**
   * The simulator serves HTTPS (`sim --tls`: a self-signed certificate per BMC, each generation's TLS versions,
   * handshake time, keep-alive and session resumption) and the poller pins each BMC's certificate at first use.
   */
  tls?: boolean;
  /**
   * The run goes on past `durationS` while some steady node is not inventoried yet, until this many seconds after the
   * start at most (default: no longer than `durationS`). A test sharing a loaded machine then waits for the CPU the
   * first reads need instead of failing on time it was not given; on an idle machine the run ends at `durationS`.
   */
  inventoryDeadlineS?: number;
  /** Vendor profiles of the fleet (`sim --mockup`; default the simulator's). */
  mockups?: string[];
  /** Heartbeats on every event stream, every this many seconds (`sim --event-heartbeat`). */
  eventHeartbeatS?: number;
  /** BMC requests are also counted from this many seconds into the run (after the first reads) to its end. */
  steadyFromS?: number;
  /** Push: the poller's policy, and at `injectAtS` `broken` subscriptions broken and `announced` health changes pushed. */
  push?: { policy: PushPolicy; injectAtS: number; broken: number; announced: number; capable: ReadonlySet<string> };
}

export interface ScaleRunResult {
  poller: 'scheduler' | 'naive';
  tls: boolean;
  bmcs: number;
  interval_s: number;
  duration_s: number;
  first_sweep_s: number;
  sweep_p99_s: number;
  contact_gap_max_s: number;
  session_limit_violations: number;
  bmc_resets: number;
  poller_cpu_cores: number;
  event_bytes_per_node_day: number;
  outcome_bytes_per_node_day: number;
  dark_detected: number;
  dark_detect_latency_p99_s: number | null;
  false_dark_alarms: number;
  /** Seconds from the start until every node that kept answering had its inventory and firmware read once (null: not within the run). */
  first_inventory_s: number | null;
  /** Seconds from the start until 90% and 99% of the nodes that kept answering were inventoried (null: not within the run). */
  first_inventory_p90_s: number | null;
  first_inventory_p99_s: number | null;
  /** Nodes that kept answering, inventoried within the first 600 s: the goal's count at its deadline. */
  inventoried_in_600_s: number;
  /** Nodes that kept answering (neither dark nor flapping): what `first_inventory_s` waits for. */
  steady_nodes: number;
  /**
   * The five steady nodes inventoried last (or never, `at_s` null): their model, when, and how many of their reads had
   * failed before (each failure of a first read waits `firstReadRetryS`, doubled at each further one). What the tail is.
   */
  first_inventory_last: Array<{ fixture: string; at_s: number | null; failed_reads: number }>;
  /** Steady nodes whose first read failed at least once before they were inventoried. */
  first_inventory_after_failure: number;
  /** Nodes whose inventory and firmware were both read at least once by the end. */
  inventoried_nodes: number;
  /** Heavy reads (health, inventory, firmware) by outcome. */
  heavy_outcomes: Record<string, number>;
  /** Per applied batch, seconds its oldest event waited to be reflected in the read model: p99 and max. */
  projection_lag_p99_s: number | null;
  projection_lag_max_s: number | null;
  /** Lag p99 per projection, seconds: which one is behind. */
  projection_lag_p99_by_name: Record<string, number>;
  /** The bench process's event-loop delay (poller and projections share it), p99 and max in ms. */
  event_loop_delay_p99_ms: number;
  event_loop_delay_max_ms: number;
  /** Share of the machine's CPU time busy during the run (all processes: simulator, poller, PostgreSQL). */
  machine_cpu_busy: number;
  sim_rss_mb: number;
  /** Over TLS: handshakes the BMCs completed, how many resumed a session, and certificates pinned (`BmcCertificateObserved`). */
  tls_handshakes?: number;
  tls_resumed?: number;
  certificates_pinned?: number;
  /** Requests the BMCs received over the run, and from `steadyFromS` to its end. */
  bmc_requests: number;
  bmc_requests_steady: number;
  push?: { streams_opened: number; gaps: Record<string, number>; events_recorded: number; event_to_ledger_p99_s: number | null; broken_subscriptions_injected: number; broken_subscriptions_found: number; broken_found_p99_s: number | null };
}

/** The machine's CPU time so far, all cores: idle and total, in ms. */
function machineCpu(): { idle: number; total: number } {
  let idle = 0;
  let total = 0;
  for (const cpu of cpus()) {
    idle += cpu.times.idle;
    total += cpu.times.user + cpu.times.nice + cpu.times.sys + cpu.times.idle + cpu.times.irq;
  }
  return { idle, total };
}

async function startSim(bmcs: number, captures: string | undefined, latencyScale: number | undefined, tls: boolean, extra: string[] = []): Promise<{ child: ChildProcess; controlUrl: string }> {
  return startSimProcess(['--bmcs', String(bmcs), '--seed', '7', ...(captures ? ['--captures', captures] : []), ...(latencyScale !== undefined ? ['--latency-scale', String(latencyScale)] : []), ...(tls ? ['--tls'] : []), ...extra]);
}

function simExtras(options: ScaleRunOptions): string[] {
  return [...(options.mockups ?? []).flatMap((mockup) => ['--mockup', mockup]), ...(options.eventHeartbeatS !== undefined ? ['--event-heartbeat', String(options.eventHeartbeatS)] : [])];
}

const getJson = simJson;

/** Seconds from `started` until `share` of `total` nodes were inventoried (`at`: when each was, in order), or null. */
function shareInventoriedS(at: readonly number[], total: number, share: number, started: number): number | null {
  const needed = Math.ceil(total * share);
  const when = at[needed - 1];
  return needed > 0 && when !== undefined ? round((when - started) / 1000, 1) : null;
}

export async function runScale(options: ScaleRunOptions): Promise<ScaleRunResult> {
  const threshold = options.darkThreshold ?? 10;
  if (options.tls && options.naive) throw new Error('--tls measures the scheduler: the naive baseline speaks plain HTTP only');
  const sim = await startSim(options.bmcs, options.captures, options.latencyScale, options.tls === true, simExtras(options));
  const store = await EventStore.open({ connectionString: options.connectionString, poolSize: 8 });
  try {
    const fleet = (await getJson<{ bmcs: SimBmc[] }>(`${sim.controlUrl}/sim/fleet`)).bmcs;
    // Dark ones and flapping ones are taken from different racks' worth of the fleet, deterministically.
    const darkIds = new Set(fleet.filter((_, i) => i % Math.floor(fleet.length / options.darkCount) === 1).slice(0, options.darkCount).map((b) => b.id));
    const flapIds = new Set(fleet.filter((b, i) => i % Math.floor(fleet.length / Math.max(1, options.flapCount)) === 3 && !darkIds.has(b.id)).slice(0, options.flapCount).map((b) => b.id));

    // Projection lag as readers feel it: per applied batch, how long its oldest event waited to be reflected.
    const lags: number[] = [];
    const lagsByName = new Map<string, number[]>();
    const onApplied = (name: string, oldest: Date, _events: number, at: Date): void => {
      const lag = (at.getTime() - oldest.getTime()) / 1000;
      lags.push(lag);
      let own = lagsByName.get(name);
      if (!own) lagsByName.set(name, (own = []));
      own.push(lag);
    };
    const runner = options.projections === false ? null : new ThreadedProjectionRunner({ connectionString: options.connectionString, onApplied });
    // Started before the clock of the run: the thread's start (its modules compiled) is not the poller's sweep.
    await runner?.start();
    const started = Date.now();
    const lastContact = new Map<string, number>();
    const gaps: number[] = [];
    const misses = new Map<string, number>();
    const detectedAt = new Map<string, number>();
    const falseAlarms = new Set<string>();
    let darkAt = Number.POSITIVE_INFINITY;
    const firstContact = new Map<string, number>();
    const onLiveness = (nodeId: string, ok: boolean, at: number): void => {
      if (ok) {
        const previous = lastContact.get(nodeId);
        if (previous !== undefined && !flapIds.has(nodeId) && !darkIds.has(nodeId)) gaps.push(at - previous);
        lastContact.set(nodeId, at);
        if (!firstContact.has(nodeId)) firstContact.set(nodeId, at);
        misses.set(nodeId, 0);
        return;
      }
      const count = (misses.get(nodeId) ?? 0) + 1;
      misses.set(nodeId, count);
      if (count === threshold) {
        if (darkIds.has(nodeId) && at >= darkAt) detectedAt.set(nodeId, at);
        else falseAlarms.add(nodeId);
      }
    };

    // First inventory: every node's inventory and firmware read once, counted over the nodes that keep answering.
    const heavyRead = new Map<string, Set<string>>();
    const steady = fleet.filter((b) => !darkIds.has(b.id) && !flapIds.has(b.id)).length;
    let inventoried = 0;
    let steadyInventoried = 0;
    const steadyInventoriedAt: number[] = [];
    let firstInventoryAt: number | null = null;
    const heavyOutcomes: Record<string, number> = {};
    const failedReads = new Map<string, number>();
    const inventoriedAt = new Map<string, number>();
    const onHeavyFailure = (nodeId: string, work: string): void => {
      // One outcome per work of a read: the inventory's counts the read.
      if (work === 'inventory' && !inventoriedAt.has(nodeId)) failedReads.set(nodeId, (failedReads.get(nodeId) ?? 0) + 1);
    };
    const onHeavy = (nodeId: string, work: string, at: number): void => {
      if (work !== 'inventory' && work !== 'firmware') return;
      let done = heavyRead.get(nodeId);
      if (!done) heavyRead.set(nodeId, (done = new Set()));
      if (done.has(work)) return;
      done.add(work);
      if (done.size < 2) return;
      inventoried += 1;
      inventoriedAt.set(nodeId, at);
      if (darkIds.has(nodeId) || flapIds.has(nodeId)) return;
      steadyInventoried += 1;
      steadyInventoriedAt.push(at);
      if (steadyInventoried === steady) firstInventoryAt = at;
    };

    const cpuBefore = process.cpuUsage();
    const machineBefore = machineCpu();
    const loopDelay = monitorEventLoopDelay({ resolution: 10 });
    loopDelay.enable();
    const headBefore = (await store.head()).position;
    let poller: Poller | null = null;
    let naive: NaivePoller | null = null;
    if (options.naive) {
      naive = new NaivePoller(fleet.map((b) => ({ nodeId: b.id, baseUrl: b.baseUrl, username: b.username, password: b.password })), options.intervalS, onLiveness);
      naive.start();
    } else {
      const credentials = new Map(fleet.map((b) => [b.id, { username: b.username, password: b.password, version: '1', endpoints: [new URL(b.baseUrl).origin] }]));
      poller = new Poller({
        store,
        credentials: { get: (ref) => credentials.get(ref) },
        plainHttpSites: ['*'],
        policy: {
          requestTimeoutMs: options.requestTimeoutMs ?? Math.min(10_000, options.intervalS * 500),
          flushIntervalMs: Math.min(5000, options.intervalS * 1000),
          maxConcurrentVisits: 1024,
          // Heavy reads wait on slow BMCs (a firmware inventory takes minutes on some models): many may be in flight.
          maxConcurrentReads: options.maxConcurrentReads ?? 1024,
          ...(options.firstReadSpreadS !== undefined ? { firstReadSpreadS: options.firstReadSpreadS } : {}),
          ...(options.expandCollections !== undefined ? { expandCollections: options.expandCollections } : {}),
        },
        ...(options.push ? { push: options.push.policy } : {}),
        onOutcome: (nodeId, work, outcome, _latency, at) => {
          if (work === 'liveness' && outcome !== 'latched') onLiveness(nodeId, outcome === 'success' || outcome === 'not-modified', at);
          else {
            heavyOutcomes[outcome] = (heavyOutcomes[outcome] ?? 0) + 1;
            if (outcome === 'success' || outcome === 'not-modified') onHeavy(nodeId, work, at);
            else onHeavyFailure(nodeId, work);
          }
        },
      });
      for (const b of fleet) {
        poller.addTarget({ nodeId: b.id, site: b.site, rack: b.rack, baseUrl: b.baseUrl, credentialRef: b.id, sessionLimit: b.sessionLimit, expectedIntervalS: options.intervalS }, { spreadFirstVisit: true });
      }
      poller.start();
    }

    const flapPeriod = options.intervalS * 1000;
    const until = started + options.durationS * 1000;
    const inventoryUntil = started + Math.max(options.durationS, options.inventoryDeadlineS ?? 0) * 1000;
    let flapping = false;
    let injection: PushInjection | undefined;
    let steadyRequests: number | undefined;
    const requestsNow = async (): Promise<number> => (await getJson<{ requests: number }>(`${sim.controlUrl}/sim/stats`)).requests;
    while (Date.now() < until || (firstInventoryAt === null && Date.now() < inventoryUntil)) {
      const elapsed = Date.now() - started;
      if (!flapping && flapIds.size > 0 && elapsed >= options.intervalS * 2000) {
        flapping = true;
        // Down for 3.5 intervals, up for 1.5: at least one answered poll in every five.
        await getJson(`${sim.controlUrl}/sim/faults`, { method: 'POST', body: { fault: 'flap', target: { bmc: [...flapIds] }, duration: `${options.durationS}s`, down: `${3.5 * flapPeriod}ms`, up: `${1.5 * flapPeriod}ms` } });
      }
      if (darkAt === Number.POSITIVE_INFINITY && elapsed >= options.darkAtS * 1000) {
        darkAt = Date.now();
        await getJson(`${sim.controlUrl}/sim/faults`, { method: 'POST', body: { fault: 'dark', target: { bmc: [...darkIds] }, duration: `${options.durationS * 2}s` } });
      }
      if (steadyRequests === undefined && elapsed >= (options.steadyFromS ?? 0) * 1000) steadyRequests = await requestsNow();
      if (options.push && !injection && elapsed >= options.push.injectAtS * 1000) {
        const candidates = fleet.filter((b) => options.push!.capable.has(b.fixture) && !darkIds.has(b.id) && !flapIds.has(b.id)).map((b) => b.id);
        injection = await injectPushFaults(sim.controlUrl, candidates, options.push.broken, options.push.announced);
      }
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    const requestsAtEnd = await requestsNow();
    const pushStats = poller?.stats().push;
    const wall = (Date.now() - started) / 1000;
    await poller?.stop();
    await naive?.stop();
    await runner?.stop();
    loopDelay.disable();
    const machineAfter = machineCpu();
    lags.sort((a, b) => a - b);
    const cpu = process.cpuUsage(cpuBefore);
    const findings = injection ? await pushFindings(store, injection, headBefore) : undefined;
    const toLedger = [...(pushStats?.eventToLedgerMs ?? [])].sort((a, b) => a - b);
    const stats = await getJson<{ rejections: number; resets: number; rssBytes: number }>(`${sim.controlUrl}/sim/stats`);
    const bytes = await store.pool.query<{ total: string; outcomes: string }>(
      `SELECT coalesce(sum(pg_column_size(e.*)), 0) AS total,
              coalesce(sum(pg_column_size(e.*)) FILTER (WHERE type = 'PollOutcomesRecorded'), 0) AS outcomes
       FROM ledger_events e WHERE position > $1`,
      [headBefore],
    );
    const tlsCounters = options.tls ? await getJson<{ handshakes: number; resumed: number }>(`${sim.controlUrl}/sim/tls`) : undefined;
    const pinned = options.tls ? Number((await store.pool.query<{ count: string }>(`SELECT count(*) AS count FROM ledger_events WHERE type = 'BmcCertificateObserved' AND position > $1`, [headBefore])).rows[0]!.count) : undefined;
    const perNodeDay = (value: number): number => Math.round((value / fleet.length / wall) * 86_400);
    const latencies = [...detectedAt.values()].map((at) => (at - darkAt) / 1000).sort((a, b) => a - b);
    gaps.sort((a, b) => a - b);
    const steadyFleet = fleet.filter((b) => !darkIds.has(b.id) && !flapIds.has(b.id));
    const last = steadyFleet
      .map((b) => ({ b, at: inventoriedAt.get(b.id) ?? Number.POSITIVE_INFINITY }))
      .sort((x, y) => y.at - x.at)
      .slice(0, 5)
      .map(({ b, at }) => ({ fixture: b.fixture, at_s: Number.isFinite(at) ? round((at - started) / 1000, 1) : null, failed_reads: failedReads.get(b.id) ?? 0 }));
    const firstSweep = firstContact.size === 0 ? Number.NaN : (Math.max(...firstContact.values()) - started) / 1000;
    return {
      poller: options.naive ? 'naive' : 'scheduler',
      tls: options.tls === true,
      bmcs: fleet.length,
      interval_s: options.intervalS,
      duration_s: round(wall, 1),
      first_sweep_s: round(firstSweep, 1),
      sweep_p99_s: round(percentile(gaps, 99) / 1000, 2),
      contact_gap_max_s: round((gaps.at(-1) ?? Number.NaN) / 1000, 2),
      session_limit_violations: stats.rejections,
      bmc_resets: stats.resets,
      poller_cpu_cores: round((cpu.user + cpu.system) / 1e6 / wall, 3),
      event_bytes_per_node_day: perNodeDay(Number(bytes.rows[0]!.total)),
      outcome_bytes_per_node_day: perNodeDay(Number(bytes.rows[0]!.outcomes)),
      dark_detected: detectedAt.size,
      dark_detect_latency_p99_s: latencies.length ? round(percentile(latencies, 99), 1) : null,
      false_dark_alarms: falseAlarms.size,
      first_inventory_s: firstInventoryAt === null ? null : round((firstInventoryAt - started) / 1000, 1),
      first_inventory_p90_s: shareInventoriedS(steadyInventoriedAt, steady, 0.9, started),
      first_inventory_p99_s: shareInventoriedS(steadyInventoriedAt, steady, 0.99, started),
      inventoried_in_600_s: steadyInventoriedAt.filter((at) => at - started <= 600_000).length,
      steady_nodes: steady,
      first_inventory_last: last,
      first_inventory_after_failure: steadyFleet.filter((b) => (failedReads.get(b.id) ?? 0) > 0).length,
      inventoried_nodes: inventoried,
      heavy_outcomes: heavyOutcomes,
      projection_lag_p99_s: lags.length ? round(percentile(lags, 99), 2) : null,
      projection_lag_max_s: lags.length ? round(lags.at(-1)!, 2) : null,
      projection_lag_p99_by_name: Object.fromEntries([...lagsByName].map(([name, own]) => [name, round(percentile(own.sort((a, b) => a - b), 99), 2)])),
      event_loop_delay_p99_ms: round(loopDelay.percentile(99) / 1e6, 1),
      event_loop_delay_max_ms: round(loopDelay.max / 1e6, 1),
      machine_cpu_busy: round(1 - (machineAfter.idle - machineBefore.idle) / Math.max(1, machineAfter.total - machineBefore.total), 3),
      sim_rss_mb: Math.round(stats.rssBytes / 2 ** 20),
      ...(tlsCounters ? { tls_handshakes: tlsCounters.handshakes, tls_resumed: tlsCounters.resumed } : {}),
      ...(pinned !== undefined ? { certificates_pinned: pinned } : {}),
      bmc_requests: requestsAtEnd,
      bmc_requests_steady: requestsAtEnd - (steadyRequests ?? 0),
      ...(pushStats
        ? {
            push: {
              streams_opened: pushStats.streamsOpened,
              gaps: pushStats.gaps,
              events_recorded: pushStats.eventsRecorded,
              event_to_ledger_p99_s: toLedger.length ? round(percentile(toLedger, 99) / 1000, 2) : null,
              broken_subscriptions_injected: injection?.broken.size ?? 0,
              broken_subscriptions_found: findings?.found ?? 0,
              broken_found_p99_s: findings?.foundP99S ?? null,
            },
          }
        : {}),
    };
  } finally {
    await store.close();
    sim.child.kill('SIGTERM');
    await new Promise((resolve) => {
      sim.child.once('exit', resolve);
      setTimeout(resolve, 5000);
    });
  }
}
