/**
 * The ledger on a Patroni cluster, its primary killed under load (issue 45): `fleet-ledger start` as a user runs it,
 * its `DATABASE_URL` pointed at HAProxy in front of three PostgreSQL nodes under Patroni (`patroni-cluster.ts`),
 * with a polled simulated fleet, `writers` HTTP writers appending with idempotency keys (each retried with the same
 * key until it is answered, as a client of `LEDGER_COMMIT_UNKNOWN` is told to), a firmware rollout of 60 of the
 * simulated nodes (its saga's lock session dies with each primary), a live feed and a KurrentDB subscription to
 * `$all` following the log, and the published checkpoints watched; then `failovers` times the primary's postmaster is
 * SIGKILLed. Afterwards, read from the cluster's final primary:
 *
 * - `acknowledged`: appends answered 201/200; `lost`: those whose events are not in the log;
 * - `duplicates`: writes stored twice (a writer's payload key) plus poll outcomes recorded twice;
 * - `max_unavailable_s`: per failover, the longest time no append of any writer was acknowledged (the kill to the
 *   first acknowledgement after it, or longer stalls around it); the worst;
 * - `chain_ok`: the hash chain verifies (`GET /v1/verify`);
 * - `checkpoints_consistent`: every checkpoint published while running (the folder's, read every 250 ms) and every
 *   one stored is signed by the ledger's key and its root is the root of the final log's first `size` leaves;
 * - `false_dark`: nodes the liveness read model showed dark at any sample, beyond those dark before the first kill;
 * - `live_feed`, `kurrent_subscription`: positions received, gaps and repeats (each position once, in order);
 * - `rollout`: its end, the simulator's count of duplicate update submissions, the saga's epoch (one take per lock
 *   session).
 *
 * With `cutReplicationS` (the default for `replication: 'asynchronous'`), the primary's replication connections are
 * cut for that long before each kill: asynchronous, it goes on acknowledging what no standby has, the promoted standby
 * lacks it, and `lost` counts it; synchronous, its commits wait instead, and nothing is lost.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import pg from 'pg';
import { EventStoreDBClient, START, type AllStreamResolvedEvent } from '@eventstore/db-client';
import { leafHash, MerkleAccumulator } from '../../replay/merkle/index.js';
import { openCheckpoint } from '../../replay/audit/checkpointer.js';
import { nameUuid } from '../../src/ledger/index.js';
import { freePort } from './free-port.js';
import { startLedgerProcess, type LedgerProcess } from './ledger-process.js';
import { startPatroniCluster, type PatroniCluster, type PatroniClusterOptions } from './patroni-cluster.js';

export interface FailoverRunOptions {
  bmcs: number;
  intervalS: number;
  writers: number;
  failovers: number;
  /** Seconds of steady load before the first kill and after each recovery. */
  settleS: number;
  replication?: PatroniClusterOptions['replication'];
  synchronousCommit?: PatroniClusterOptions['synchronousCommit'];
  /** Without the simulated fleet and its poller (the asynchronous test: writers alone). */
  fleet?: boolean;
  /**
   * Before each kill, the primary's replication connections are cut for this many seconds (default 5 for an
   * asynchronous cluster, 0 otherwise): the standbys fall behind what the primary acknowledges, if it still does.
   */
  cutReplicationS?: number;
  /**
   * With the fleet, synchronous: a firmware rollout of this many nodes (cap 10 per site) requested before the first
   * kill and followed to its end afterwards (default 60; 0: none). Its saga's lock session dies with each primary.
   */
  rolloutNodes?: number;
  /** After the writers stop, how long to wait for the projections, the tree, a checkpoint and the feeds (default 120). */
  catchUpS?: number;
  /** Folder for the ledger's data and published checkpoints (a temp folder of the cluster's when absent). */
  log?: (message: string) => void;
  keep?: boolean;
}

export interface FailoverRow {
  engine: 'patroni';
  replication: string;
  synchronous_commit: string;
  failovers: number;
  /** Kills after which Patroni started the old primary again instead of promoting a standby (counted in `failovers`). */
  restarted_in_place: number;
  acknowledged: number;
  lost: number;
  duplicates: number;
  max_unavailable_s: number;
  chain_ok: boolean;
  checkpoints_consistent: boolean;
  false_dark: number;
  writers: number;
  bmcs: number;
  unavailable_s: number[];
  /** Appends acknowledged while the primary's replication was cut (before the kill). */
  acknowledged_while_cut: number;
  failover_s: number[];
  commit_unknown_answers: number;
  refused_answers: number;
  head: number;
  checkpoints_seen: number;
  checkpoints_inconsistent: string[];
  live_feed: FeedCheck;
  kurrent_subscription: FeedCheck;
  rollout: RolloutCheck | null;
  projections_lag_max: number;
  merkle_lag: number;
  dark_before: number;
  dark_max: number;
  duplicate_writes: number;
  duplicate_outcomes: number;
  ledger_exit: number | null;
  ledger_warnings: Record<string, number>;
  seconds: number;
}

/** The rollout run through the failovers: where it ended, what the BMCs saw, and how often its saga was taken. */
export interface RolloutCheck {
  targets: number;
  status: string;
  outcomes: Record<string, number>;
  /** BMC update requests carrying an intent key already seen (a saga sent the same step twice): goal 0. */
  duplicate_submissions: number;
  max_in_flight: number;
  cap_per_site: number;
  /** The saga's fencing epoch at the end: one take at the start, one more per lock session lost. */
  saga_epoch: number | null;
  seconds: number;
}

export interface FeedCheck {
  received: number;
  last: number;
  reconnects: number;
  gaps: number;
  repeats: number;
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Ledger processes of runs in progress, for a Ctrl-C handler (`stopEveryLedger`). */
const ledgers = new Set<LedgerProcess>();

/** Kills every ledger process a run in progress started (a bench's SIGINT handler calls it, then stops the clusters). */
export function stopEveryLedger(): void {
  for (const ledger of ledgers) ledger.kill();
}
const round = (value: number, places = 1): number => Math.round(value * 10 ** places) / 10 ** places;

const tokens = { operator: 'failover-operator-token', analyst: 'failover-analyst-token', auditor: 'failover-auditor-token' };

interface Write {
  writer: number;
  seq: number;
  key: string;
  firstTryAt: number;
  ackAt: number | null;
  position: number | null;
  eventId: string;
}

/** Runs the whole scenario and returns the row; stops everything it started, also when a step throws. */
export async function runFailover(options: FailoverRunOptions): Promise<FailoverRow> {
  const log = options.log ?? (() => undefined);
  const startedAt = Date.now();
  const replication = options.replication ?? 'synchronous';
  const withFleet = options.fleet ?? true;
  let cluster: PatroniCluster | null = null;
  let ledger: LedgerProcess | null = null;
  const stops: Array<() => Promise<void> | void> = [];
  try {
    cluster = await startPatroniCluster({ replication, ...(options.synchronousCommit ? { synchronousCommit: options.synchronousCommit } : {}), log, keep: options.keep ?? false });
    const admin = new pg.Client({ connectionString: cluster.primaryUrl });
    await admin.connect();
    await admin.query('CREATE DATABASE fleet_ledger');
    await admin.end();
    const databaseUrl = cluster.database(cluster.primaryUrl, 'fleet_ledger');

    const root = join(cluster.base, 'ledger');
    mkdirSync(root, { recursive: true });
    const publishDir = join(root, 'published');
    const scenarioPath = join(root, 'calm-fleet.json');
    writeCalmScenario(scenarioPath, options.bmcs);
    const kurrentPort = await freePort();
    const env = {
      DATABASE_URL: databaseUrl,
      DATABASE_READ_URL: '',
      FLEET_LEDGER_TOKENS: Object.entries(tokens).map(([role, token]) => `${token}=failover-${role}:${role}`).join(','),
    };
    const args = [
      ...(withFleet ? ['--bmcs', String(options.bmcs), '--scenario', scenarioPath, '--interval', String(options.intervalS)] : ['--no-sim']),
      '--data-dir', join(root, 'data'), '--publish-dir', publishDir, '--checkpoint-interval', '2',
      '--kurrent-port', String(kurrentPort), '--kurrent-anonymous-envelopes',
    ];
    log(`starting the ledger on ${databaseUrl}`);
    ledger = await startLedgerProcess({ args, env, until: 'ready', timeoutMs: 300_000, onSpawn: (spawned) => ledgers.add(spawned) });
    const base = ledger.url;
    const api = apiClient(base);

    // The fleet polled, then one interval of steady polling.
    if (withFleet) {
      for (const deadline = Date.now() + 300_000; ; ) {
        const states = await api.liveness().catch(() => null);
        const total = states ? Object.values(states).reduce((sum, n) => sum + n, 0) : 0;
        if (states && total >= options.bmcs && (states['never-contacted'] ?? 0) === 0) break;
        if (Date.now() > deadline) throw new Error(`the fleet was not polled within 300 s: ${JSON.stringify(states)}`);
        await sleep(1000);
      }
      log('every node contacted');
    }
    // A rollout only where the log goes on: asynchronous, the failover may lose what it recorded (and the ledger then
    // refuses appends at the signed positions), and waiting for its end would measure nothing.
    const rolloutTargets = withFleet && replication === 'synchronous' ? (options.rolloutNodes ?? 60) : 0;
    const rollout = rolloutTargets > 0 ? await startRollout(api, ledger.output(), rolloutTargets, log) : null;

    // Watchers: the published checkpoint, liveness, the live feed, the KurrentDB subscription.
    const published = new Map<string, number>();
    let watching = true;
    const checkpointWatch = (async () => {
      while (watching) {
        const path = join(publishDir, 'checkpoint');
        if (existsSync(path)) {
          const note = readFileSync(path, 'utf8');
          if (!published.has(note)) published.set(note, Date.now());
        }
        await sleep(250);
      }
    })();
    let darkBefore = 0;
    let darkMax = 0;
    const darkNodes = new Set<string>();
    let killed = false;
    const livenessWatch = (async () => {
      while (watching && withFleet) {
        const states = await api.liveness().catch(() => null);
        if (states) {
          const dark = states.dark ?? 0;
          if (!killed) darkBefore = Math.max(darkBefore, dark);
          else darkMax = Math.max(darkMax, dark);
          if (killed && dark > 0) for (const node of await api.darkNodes().catch(() => [])) darkNodes.add(node);
        }
        await sleep(2000);
      }
    })();
    const liveFeed = followLiveFeed(base, () => watching);
    const subscription = followKurrent(kurrentPort, () => watching);
    stops.push(() => subscription.close());

    // The writers.
    const writes: Write[] = [];
    let commitUnknown = 0;
    let refused = 0;
    let writing = true;
    const writerLoops = Array.from({ length: options.writers }, (_, writer) =>
      (async () => {
        for (let seq = 1; writing; seq += 1) {
          const key = `w${writer}-${seq}`;
          const write: Write = { writer, seq, key, firstTryAt: Date.now(), ackAt: null, position: null, eventId: nameUuid(`failover-operator\u0000${key}\u0000POST /v1/streams/alarm-failover-w${writer}#0`) };
          writes.push(write);
          for (;;) {
            const answer = await api.append(writer, key).catch((error: unknown) => ({ status: 0, code: String(error).slice(0, 80), position: null }));
            if (answer.status === 201 || answer.status === 200) {
              write.ackAt = Date.now();
              write.position = answer.position;
              break;
            }
            if (answer.code === 'LEDGER_COMMIT_UNKNOWN') commitUnknown += 1;
            else refused += 1;
            // Stopped while this write was unanswered: it is not acknowledged, and not counted.
            if (!writing) break;
            await sleep(200);
          }
        }
      })(),
    );
    await sleep(options.settleS * 1000);

    const failoverS: number[] = [];
    const kills: number[] = [];
    const cutAt: number[] = [];
    let restartedInPlace = 0;
    const cutS = options.cutReplicationS ?? (replication === 'asynchronous' ? 5 : 0);
    const recovered: number[] = [];
    for (let n = 0; n < options.failovers; n += 1) {
      await cluster.waitHealthy(180_000);
      const leaderName = await cluster.leader();
      if (cutS > 0 && leaderName) {
        // The standbys receive nothing more from the primary (a network cut): asynchronous, the primary goes on
        // acknowledging alone; synchronous, its commits wait for a standby that cannot confirm.
        cluster.cutReplication(leaderName);
        cutAt.push(Date.now());
        await sleep(cutS * 1000);
      }
      const kill = await cluster.killPrimaryPostmaster();
      killed = true;
      kills.push(kill.at);
      if (cutS > 0 && leaderName) cluster.restoreReplication(leaderName);
      // After a cut, a synchronous cluster may have no standby it may promote (none confirmed the last commits):
      // Patroni then restarts the old primary in place.
      const leader = await cluster.waitNewLeader(kill.node, 120_000, cutS > 0);
      failoverS.push(round((Date.now() - kill.at) / 1000));
      if (leader === kill.node) restartedInPlace += 1;
      log(`failover ${n + 1}: ${kill.node} -> ${leader} in ${failoverS.at(-1)} s`);
      await cluster.waitHealthy(180_000);
      recovered.push(Date.now());
      await sleep(options.settleS * 1000);
    }

    writing = false;
    const writersStoppedAt = Date.now();
    await Promise.all(writerLoops);
    log(`writers stopped: ${writes.filter((w) => w.ackAt !== null).length} acknowledged`);

    const rolloutCheck = rollout ? await finishRollout(api, rollout, log) : null;

    // Everything catches up: the projections, the Merkle tree and a checkpoint of the head.
    let head = 0;
    let merkleLag = -1;
    let projectionsLag = -1;
    for (const deadline = Date.now() + (options.catchUpS ?? 120) * 1000; Date.now() < deadline; ) {
      const ready = await api.readyz().catch(() => null);
      const audit = await api.auditStatus().catch(() => null);
      if (ready && audit) {
        head = ready.headPosition ?? 0;
        projectionsLag = Math.max(0, ...ready.projections.map((p) => p.lagPositions));
        merkleLag = audit.lagPositions;
        if (ready.status === 'ready' && projectionsLag === 0 && merkleLag === 0 && (audit.lastCheckpoint?.size ?? 0) >= audit.treeSize && liveFeed.check().last >= head && subscription.check().last >= head) break;
      }
      await sleep(1000);
    }
    log(`caught up: head ${head}, projections lag ${projectionsLag}, tree lag ${merkleLag}`);
    await sleep(500);
    watching = false;
    await Promise.all([checkpointWatch, livenessWatch, liveFeed.done]);
    await subscription.close();

    const verify = await api.verify().catch(() => ({ ok: false }));
    const warnings = countWarnings(ledger.output());
    writeFileSync(join(root, 'ledger.log'), ledger.output());
    log('chain verified; stopping the ledger');
    const ledgerExit = await ledger.stop(60_000);
    ledger = null;
    log('ledger stopped');

    // The final state, read on the final primary.
    const reader = new pg.Client({ connectionString: databaseUrl });
    await reader.connect();
    let row: FailoverRow;
    try {
      const acknowledged = writes.filter((w) => w.ackAt !== null);
      const ids = acknowledged.map((w) => w.eventId);
      const found = new Set((await reader.query<{ event_id: string }>('SELECT event_id FROM ledger_events WHERE event_id = ANY($1::uuid[])', [ids])).rows.map((r) => r.event_id));
      const lost = acknowledged.filter((w) => !found.has(w.eventId));
      if (lost.length > 0) log(`lost: ${lost.slice(0, 10).map((w) => `${w.key}@${w.position}`).join(', ')}`);
      const writeNotes = await reader.query<{ note: string; n: string }>(`SELECT data->>'note' AS note, count(*) AS n FROM ledger_events WHERE type = 'AlarmAcknowledged' AND stream LIKE 'alarm-failover-w%' GROUP BY 1 HAVING count(*) > 1`);
      const duplicateWrites = writeNotes.rows.reduce((sum, r) => sum + Number(r.n) - 1, 0);
      const duplicateOutcomes = await countDuplicateOutcomes(reader);
      const leaves = await reader.query<{ hash: Buffer }>('SELECT hash FROM ledger_events ORDER BY position');
      head = leaves.rows.length;
      const stored = await reader.query<{ signed_note: string }>('SELECT signed_note FROM ledger_checkpoints');
      const verifierKey = readFileSync(join(publishDir, 'checkpoint.pub'), 'utf8').trim();
      const notes = new Set([...published.keys(), ...stored.rows.map((r) => r.signed_note)]);
      const inconsistent = checkInconsistent([...notes], verifierKey, leaves.rows.map((r) => r.hash));
      const unavailable = kills.map((at, i) => unavailableAround(writes, at, Math.min(writersStoppedAt, recovered[i]! + 30_000, (cutAt[i + 1] ?? kills[i + 1]) ?? Number.POSITIVE_INFINITY)));
      row = {
        engine: 'patroni',
        replication,
        synchronous_commit: replication === 'synchronous' ? options.synchronousCommit ?? 'on' : 'local',
        failovers: kills.length,
        restarted_in_place: restartedInPlace,
        acknowledged: acknowledged.length,
        lost: lost.length,
        duplicates: duplicateWrites + duplicateOutcomes,
        max_unavailable_s: Math.max(0, ...unavailable),
        chain_ok: verify.ok === true,
        checkpoints_consistent: inconsistent.length === 0 && notes.size > 0,
        false_dark: Math.max(0, darkMax - darkBefore),
        writers: options.writers,
        bmcs: withFleet ? options.bmcs : 0,
        unavailable_s: unavailable,
        acknowledged_while_cut: acknowledged.filter((w) => cutAt.some((at, i) => w.ackAt! >= at && w.ackAt! <= kills[i]!)).length,
        failover_s: failoverS,
        commit_unknown_answers: commitUnknown,
        refused_answers: refused,
        head,
        checkpoints_seen: notes.size,
        checkpoints_inconsistent: inconsistent.slice(0, 5),
        rollout: rolloutCheck,
        live_feed: liveFeed.check(),
        kurrent_subscription: subscription.check(),
        projections_lag_max: projectionsLag,
        merkle_lag: merkleLag,
        dark_before: darkBefore,
        dark_max: darkMax,
        duplicate_writes: duplicateWrites,
        duplicate_outcomes: duplicateOutcomes,
        ledger_exit: ledgerExit,
        ledger_warnings: warnings,
        seconds: round((Date.now() - startedAt) / 1000),
      };
      if (darkNodes.size > 0) log(`dark after a kill: ${[...darkNodes].slice(0, 10).join(', ')}`);
    } finally {
      await reader.end();
    }
    return row;
  } catch (error) {
    if (ledger) log(`ledger output (tail):\n${ledger.output().slice(-4000)}`);
    throw error;
  } finally {
    for (const stop of stops) await Promise.resolve(stop()).catch(() => undefined);
    if (ledger) await ledger.stop(20_000).catch(() => ledger?.kill());
    for (const spawned of ledgers) if (!spawned.alive()) ledgers.delete(spawned);
    await cluster?.stop();
    log('cluster stopped');
  }
}

/** The demo's models in two sites, `bmcs` nodes in racks of 25, without scripted or random faults. */
function writeCalmScenario(path: string, bmcs: number): void {
  const demo = parseYaml(readFileSync(new URL('../../examples/scenario-demo.yaml', import.meta.url), 'utf8')) as { fleet: unknown; sites: Array<Record<string, unknown>>; behaviour: unknown };
  const perRack = 25;
  const racks = Math.max(1, Math.ceil(bmcs / perRack / demo.sites.length));
  // Updates of 5 s and resets of 5 s, none failing: a rollout of a few racks runs through the failovers.
  const behaviour = { ...(demo.behaviour as Record<string, unknown>), firmwareUpdateDuration: '5s', resetDark: '5s', firmwareFailureRate: 0 };
  writeFileSync(path, JSON.stringify({ name: 'calm', description: 'the demo fleet without faults', seed: 45, clockFactor: 1, fleet: demo.fleet, sites: demo.sites.map((site) => ({ ...site, racks, nodesPerRack: perRack })), behaviour }));
}

function apiClient(base: string) {
  const call = async (path: string, role: keyof typeof tokens, init: { method?: string; body?: unknown; headers?: Record<string, string>; timeoutMs?: number } = {}): Promise<{ status: number; body: Record<string, unknown> }> => {
    const response = await fetch(`${base}${path}`, {
      method: init.method ?? 'GET',
      headers: { authorization: `Bearer ${tokens[role]}`, ...(init.body !== undefined ? { 'content-type': 'application/json' } : {}), ...init.headers },
      ...(init.body !== undefined ? { body: JSON.stringify(init.body) } : {}),
      signal: AbortSignal.timeout(init.timeoutMs ?? 60_000),
    });
    const text = await response.text();
    let body: Record<string, unknown> = {};
    try {
      body = JSON.parse(text) as Record<string, unknown>;
    } catch {
      body = { text };
    }
    return { status: response.status, body };
  };
  return {
    async append(writer: number, key: string): Promise<{ status: number; code: string | null; position: number | null }> {
      const answer = await call(`/v1/streams/alarm-failover-w${writer}`, 'operator', {
        method: 'POST',
        headers: { 'idempotency-key': key },
        body: { events: [{ type: 'AlarmAcknowledged', data: { alarmId: `failover-w${writer}`, note: key } }] },
      });
      const error = answer.body.error as { code?: string } | undefined;
      const positions = answer.body.positions as number[] | undefined;
      return { status: answer.status, code: error?.code ?? null, position: positions?.[0] ?? null };
    },
    async liveness(): Promise<Record<string, number>> {
      const answer = await call('/v1/liveness/summary', 'analyst', { timeoutMs: 10_000 });
      if (answer.status !== 200) throw new Error(`liveness ${answer.status}`);
      return Object.fromEntries(Object.entries(answer.body.states as Record<string, unknown>).map(([state, n]) => [state, Number(n)]));
    },
    async darkNodes(): Promise<string[]> {
      const answer = await call('/v1/liveness/dark?limit=100', 'analyst', { timeoutMs: 10_000 });
      const items = (answer.body.items ?? answer.body.nodes ?? []) as Array<{ nodeId?: string }>;
      return items.map((item) => item.nodeId ?? '').filter(Boolean);
    },
    async readyz(): Promise<{ status: string; headPosition: number | null; projections: Array<{ lagPositions: number }> }> {
      const answer = await call('/readyz', 'analyst', { timeoutMs: 10_000 });
      return answer.body as unknown as { status: string; headPosition: number | null; projections: Array<{ lagPositions: number }> };
    },
    async auditStatus(): Promise<{ treeSize: number; lagPositions: number; lastCheckpoint?: { size: number } }> {
      const answer = await call('/v1/audit/status', 'auditor', { timeoutMs: 10_000 });
      if (answer.status !== 200) throw new Error(`audit status ${answer.status}`);
      return answer.body as unknown as { treeSize: number; lagPositions: number; lastCheckpoint?: { size: number } };
    },
    async post(path: string, body: unknown): Promise<{ status: number; body: Record<string, unknown> }> {
      return call(path, 'operator', { method: 'POST', body });
    },
    async get(path: string, role: keyof typeof tokens = 'analyst'): Promise<{ status: number; body: Record<string, unknown> }> {
      return call(path, role, { timeoutMs: 10_000 });
    },
    async verify(): Promise<{ ok: boolean }> {
      const answer = await call('/v1/verify', 'auditor', { timeoutMs: 300_000 });
      return { ok: answer.status === 200 && answer.body.ok === true };
    },
  };
}

type Api = ReturnType<typeof apiClient>;
interface StartedRollout {
  id: string;
  control: string;
  targets: number;
  cap: number;
  startedAt: number;
}

/**
 * Requests and approves a BMC firmware rollout of the first `count` simulated nodes (cap 10 per site, no bake, waves
 * advanced by their gates), retried while the ledger answers 503: it runs while the primaries are killed.
 */
async function startRollout(api: Api, ledgerOutput: string, count: number, log: (message: string) => void): Promise<StartedRollout> {
  const control = /simulator control at (http:\/\/[^\s"]+)/.exec(ledgerOutput)?.[1];
  if (!control) throw new Error('the ledger did not print its simulator control URL');
  const fleet = (await (await fetch(`${control}/sim/fleet`)).json()) as { bmcs: Array<{ id: string; fixture: string }> };
  // Current Dell, HPE and Supermicro models (the older generations in the demo's mix have no UpdateService: their
  // steps fail on their own), spread over the racks (2 in flight per rack by default): every k-th one.
  const updatable = fleet.bmcs.filter((bmc) => ['dell', 'hpe', 'supermicro'].includes(bmc.fixture));
  const step = Math.max(1, Math.floor(updatable.length / count));
  const nodes = updatable.filter((_, index) => index % step === 0).slice(0, count).map((bmc) => bmc.id);
  const id = 'failover-rollout';
  const cap = 10;
  // A canary, one wave of 30 % and the rest, each gated on one read of the new version; the step's timing shortened
  // to the simulator's 5-s updates and resets (the defaults are for real BMCs' minutes: docs/sagas.md).
  const created = await api.post('/v1/rollouts', {
    rolloutId: id,
    firmware: { component: 'BMC', version: '9.45.0', imageUri: `${control}/sim/images/bmc-9.45.0.bin` },
    selector: { nodes },
    seed: 45,
    capPerSite: cap,
    canaryFraction: 0.05,
    waveFractions: [0.3],
    bakeMs: 0,
    verifyReads: 1,
    quietPeriodMs: 20_000,
    gate: { autoAdvance: true },
    stepTiming: { pollIntervalMs: 1000, readIntervalMs: 2000, probeIntervalMs: 2000, settleMs: 30_000, retryBackoffMs: 5000 },
  });
  if (created.status !== 201) throw new Error(`rollout request: ${created.status} ${JSON.stringify(created.body).slice(0, 300)}`);
  const approved = await api.post(`/v1/rollouts/${id}/approve`, { reason: 'failover bench' });
  if (approved.status !== 200) throw new Error(`rollout approval: ${approved.status} ${JSON.stringify(approved.body).slice(0, 300)}`);
  log(`rollout ${id} of ${nodes.length} nodes approved`);
  return { id, control, targets: nodes.length, cap, startedAt: Date.now() };
}

/** Waits (up to 5 minutes) for the rollout to end, then reads its outcome, the simulator's counts and the saga's epoch. */
async function finishRollout(api: Api, rollout: StartedRollout, log: (message: string) => void): Promise<RolloutCheck> {
  let summary: Record<string, unknown> = {};
  for (const deadline = Date.now() + 300_000; Date.now() < deadline; ) {
    const answer = await api.get(`/v1/rollouts/${rollout.id}`).catch(() => null);
    if (answer?.status === 200) {
      summary = answer.body;
      if (['completed', 'halted', 'aborted'].includes(String(summary.status))) break;
    }
    await sleep(2000);
  }
  const updates = (await (await fetch(`${rollout.control}/sim/updates`)).json()) as { duplicateSubmissions: number; maxInFlight: number };
  const cluster = await api.get('/v1/cluster').catch(() => null);
  const sagas = (cluster?.body.sagas ?? []) as Array<{ saga: string; epoch: number }>;
  const epoch = sagas.find((lease) => lease.saga.includes(rollout.id))?.epoch ?? null;
  const check: RolloutCheck = {
    targets: rollout.targets,
    status: String(summary.status ?? 'unknown'),
    outcomes: (summary.outcomes ?? {}) as Record<string, number>,
    duplicate_submissions: updates.duplicateSubmissions,
    max_in_flight: updates.maxInFlight,
    cap_per_site: rollout.cap,
    saga_epoch: epoch,
    seconds: round((Date.now() - rollout.startedAt) / 1000),
  };
  log(`rollout: ${JSON.stringify(check)}`);
  return check;
}

/** Positions received by a follower: in order, each once, none skipped. */
function feedChecker(): { see: (position: number) => void; reconnected: () => void; check: () => FeedCheck } {
  const state: FeedCheck = { received: 0, last: 0, reconnects: 0, gaps: 0, repeats: 0 };
  return {
    see(position) {
      state.received += 1;
      if (position === state.last + 1) state.last = position;
      else if (position <= state.last) state.repeats += 1;
      else {
        state.gaps += 1;
        state.last = position;
      }
    },
    reconnected: () => void (state.reconnects += 1),
    check: () => ({ ...state }),
  };
}

/** The SSE live feed from position 1, resumed with the last id it sent whenever the stream ends. */
function followLiveFeed(base: string, running: () => boolean): { done: Promise<void>; check: () => FeedCheck } {
  const checker = feedChecker();
  let lastId: string | null = null;
  const done = (async () => {
    while (running()) {
      const abort = new AbortController();
      const stopper = setInterval(() => {
        if (!running()) abort.abort();
      }, 500);
      try {
        const response = await fetch(`${base}/v1/events/live?from=1&payload=none`, { headers: { authorization: `Bearer ${tokens.auditor}`, ...(lastId ? { 'last-event-id': lastId } : {}) }, signal: abort.signal });
        if (response.status !== 200 || !response.body) throw new Error(`live feed ${response.status}`);
        let buffer = '';
        const decoder = new TextDecoder();
        for await (const chunk of response.body) {
          buffer += decoder.decode(chunk as Uint8Array, { stream: true });
          let end: number;
          while ((end = buffer.indexOf('\n\n')) >= 0) {
            const message = buffer.slice(0, end);
            buffer = buffer.slice(end + 2);
            const id = /^id: (\S+)$/m.exec(message)?.[1];
            if (id) {
              lastId = id;
              checker.see(Number(id.split('.')[0]));
            }
          }
        }
      } catch {
        // dropped: resumed below
      } finally {
        clearInterval(stopper);
      }
      if (running()) {
        checker.reconnected();
        await sleep(1000);
      }
    }
  })();
  return { done, check: checker.check };
}

/** A KurrentDB subscription to `$all` from the start, resubscribed after its last event when it drops. */
function followKurrent(port: number, running: () => boolean): { close: () => Promise<void>; check: () => FeedCheck } {
  const checker = feedChecker();
  const client = EventStoreDBClient.connectionString(`esdb://127.0.0.1:${port}?tls=false`);
  let last = 0;
  let current: ReturnType<EventStoreDBClient['subscribeToAll']> | null = null;
  let closed = false;
  const subscribe = (): void => {
    if (closed) return;
    const from = last === 0 ? START : { commit: BigInt(last), prepare: BigInt(last) };
    const subscription = client.subscribeToAll({ fromPosition: from });
    current = subscription;
    subscription.on('data', (resolved: AllStreamResolvedEvent) => {
      const position = Number(resolved.event?.position?.commit ?? 0n);
      if (position > 0) {
        checker.see(position);
        last = Math.max(last, position);
      }
    });
    const again = (): void => {
      if (current !== subscription || closed || !running()) return;
      current = null;
      checker.reconnected();
      setTimeout(subscribe, 1000);
    };
    subscription.on('error', again);
    subscription.on('end', again);
  };
  subscribe();
  return {
    async close() {
      closed = true;
      await current?.unsubscribe().catch(() => undefined);
      await client.dispose().catch(() => undefined);
    },
    check: checker.check,
  };
}

/**
 * The longest time around one failover in which no append was acknowledged: from the last acknowledgement before the
 * kill through every acknowledgement up to `end` (the cluster healthy again plus 30 s, or the writers' stop), and on to
 * `end` itself when acknowledgements stopped for good.
 */
function unavailableAround(writes: Write[], killAt: number, end: number): number {
  const acks = writes.map((w) => w.ackAt).filter((at): at is number => at !== null).sort((a, b) => a - b);
  const before = acks.filter((at) => at <= killAt).at(-1) ?? killAt;
  const window = [before, ...acks.filter((at) => at > killAt && at <= end), end];
  let worst = 0;
  for (let i = 1; i < window.length; i += 1) worst = Math.max(worst, window[i]! - window[i - 1]!);
  return round(worst / 1000);
}

/** Poll outcomes recorded twice: the same node, work and instant under the same lease epoch (cluster-run.ts's key). */
async function countDuplicateOutcomes(client: pg.Client): Promise<number> {
  const batches = await client.query<{ data: { nodeIds: string[]; work: string[]; offsetMs: number[]; windowStart: string }; actor: { lease?: { epoch: number } } }>(
    `SELECT data, actor FROM ledger_events WHERE type = 'PollOutcomesRecorded' ORDER BY position`,
  );
  const seen = new Set<string>();
  let duplicates = 0;
  for (const { data, actor } of batches.rows) {
    const start = Date.parse(data.windowStart);
    data.nodeIds.forEach((node, i) => {
      const key = `${node}\u0000${data.work[i]}\u0000${start + data.offsetMs[i]!}\u0000${actor.lease?.epoch ?? 0}`;
      if (seen.has(key)) duplicates += 1;
      seen.add(key);
    });
  }
  return duplicates;
}

/** The checkpoints (signed notes) whose signature fails or whose root is not the final log's root at their size. */
function checkInconsistent(notes: string[], verifierKey: string, hashes: Buffer[]): string[] {
  const opened = notes.map((note) => {
    try {
      return { note, ...openCheckpoint(note, verifierKey) };
    } catch (error) {
      return { note, error: String(error) };
    }
  });
  const bad: string[] = [];
  const sizes = new Map<number, Buffer>();
  for (const entry of opened) if ('size' in entry) sizes.set(entry.size, Buffer.alloc(0));
  const accumulator = new MerkleAccumulator();
  const wanted = [...sizes.keys()].sort((a, b) => a - b);
  let next = 0;
  for (let i = 0; i < hashes.length && next < wanted.length; i += 1) {
    accumulator.add(leafHash(hashes[i]!));
    while (next < wanted.length && wanted[next] === i + 1) {
      sizes.set(wanted[next]!, accumulator.root());
      next += 1;
    }
  }
  for (const entry of opened) {
    if ('error' in entry) bad.push(`unverifiable: ${entry.error}`);
    else if (entry.size > hashes.length) bad.push(`size ${entry.size} beyond the final log's ${hashes.length}`);
    else if (!sizes.get(entry.size)!.equals(entry.root)) bad.push(`size ${entry.size}: root ${entry.root.toString('hex').slice(0, 16)} is not the final log's ${sizes.get(entry.size)!.toString('hex').slice(0, 16)}`);
  }
  return bad;
}

/** Warning and error lines of the ledger's log, counted by message (what the failover made it say). */
function countWarnings(output: string): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const line of output.split('\n')) {
    if (!line.startsWith('{')) continue;
    try {
      const entry = JSON.parse(line) as { level?: number; msg?: string };
      if ((entry.level ?? 0) < 40 || !entry.msg) continue;
      const key = entry.msg.slice(0, 90);
      counts[key] = (counts[key] ?? 0) + 1;
    } catch {
      // not a log line
    }
  }
  return counts;
}
