/**
 * Several `fleet-ledger start` processes on one database polling one simulated fleet in several sites: one process
 * SIGKILLed at a random moment, optionally another SIGSTOPped past its lease and resumed. Judged from the
 * simulator's side (session-limit refusals, two processes' requests in flight to one BMC at once) and from the log
 * (outcomes recorded twice, the longest silence of any node, dark nodes, who polled under which epoch).
 * Used by `test/cluster/three-processes.test.ts` (small) and `npm run bench:scale -- --processes N` (large).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { simJson, startSimProcess, type SimBmc } from './sim-process.js';
import { percentile, round } from './bench-database.js';
import { freePort } from './free-port.js';
import { cliArguments } from './cli-entry.js';

export interface ClusterRunOptions {
  connectionString: string;
  bmcs: number;
  sites: number;
  processes: number;
  intervalS: number;
  leaseTtlS: number;
  /** Seconds of steady polling after every node was contacted once, before the kill. */
  warmupS: number;
  /** The kill comes at a random moment within this many seconds after the warm-up. */
  killWindowS: number;
  killOne: boolean;
  /** SIGSTOP another process for this many seconds (past its lease) after the take-over, then SIGCONT; 0: no pause. */
  pauseS: number;
  /**
   * Seconds of polling after the last disturbance, before the processes are stopped. After a pause this is the least
   * time waited after SIGCONT (for the resumed process to be given a share back); the wait goes on until every node of
   * the paused process's shards was contacted by another process, up to two intervals after the SIGSTOP.
   */
  settleS: number;
  /**
   * Seconds watched after the kill's lease take-over before the pause, at the least: the wait goes on until every node
   * of the killed process's shards was contacted again, up to two intervals after the kill (default three intervals).
   */
  afterKillS?: number;
  latencyScale: number;
  seed: number;
  log?: (line: string) => void;
}

export interface ClusterRunResult {
  processes: number;
  bmcs: number;
  sites: number;
  interval_s: number;
  lease_ttl_s: number;
  first_sweep_s: number;
  /** From the SIGKILL until every BMC of the killed process's shards was contacted again by another process. */
  takeover_s: number | null;
  /** From the SIGKILL until another process held each of the killed process's leases. */
  lease_takeover_s: number | null;
  /** From the SIGSTOP until every BMC of the paused process's shards was contacted by another process. */
  pause_takeover_s: number | null;
  /** Requests that met another process's request in flight to the same BMC (the simulator's count), and the BMCs. */
  double_polled: number;
  bmcs_double_polled: number;
  session_limit_violations: number;
  /** Nodes the liveness read model holds dark at the end (none was made dark). */
  false_dark_alarms: number;
  /** Liveness checks that failed (none should: no fault was injected). */
  liveness_misses: number;
  /** The same outcome (node, work, instant) recorded in two batches. */
  duplicate_outcomes: number;
  /** The longest time between two contacts of one node, and its p99 over nodes. */
  contact_gap_max_s: number;
  contact_gap_p99_s: number;
  /** Lease acquisitions over the run: new, released (a clean hand-over), expired (a take-over). */
  handovers: Record<string, number>;
  /** Outcome batches and observations the paused process tried to append under its superseded epoch (refused). */
  stale_appends_refused: number;
  /** An append under the killed process's last epoch, made after the run: the ledger's error code. */
  stale_epoch_error: string | null;
  outcomes: number;
  /** From the first process's start to the clean stop. */
  run_s: number;
  /** Lease acquisitions and losses as the processes logged them (seconds from the first process's start). */
  lease_events: string[];
}



/** A small seeded generator (mulberry32): the kill moment and the victim are reproducible per seed. */
function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

interface Member {
  child: ChildProcess;
  index: number;
  port: number;
  lines: string[];
  exited: boolean;
}

export async function runCluster(options: ClusterRunOptions): Promise<ClusterRunResult> {
  const log = options.log ?? (() => undefined);
  const random = seeded(options.seed);
  const dir = mkdtempSync(join(tmpdir(), 'fl-cluster-'));
  const siteIds = Array.from({ length: options.sites }, (_, i) => `site-${String.fromCharCode(97 + i)}`);
  const perSite = Math.ceil(options.bmcs / options.sites);
  const nodesPerRack = 40;
  const scenario = {
    name: 'cluster run',
    seed: options.seed,
    fleet: { mix: [{ profile: 'dell', share: 0.5 }, { profile: 'hpe', share: 0.5 }] },
    sites: siteIds.map((id) => ({ id, racks: Math.ceil(perSite / nodesPerRack), nodesPerRack })),
    behaviour: { latencyScale: options.latencyScale },
  };
  writeFileSync(join(dir, 'scenario.json'), JSON.stringify(scenario));
  const sim = await startSimProcess(['--scenario', join(dir, 'scenario.json')]);
  const pool = new pg.Pool({ connectionString: options.connectionString, max: 2 });
  const members: Member[] = [];
  try {
    const fleet = (await simJson<{ bmcs: SimBmc[] }>(`${sim.controlUrl}/sim/fleet`)).bmcs;
    log(`simulator: ${fleet.length} BMCs in ${new Set(fleet.map((b) => b.site)).size} sites`);
    writeFileSync(join(dir, 'targets.json'), JSON.stringify({ targets: fleet.map((b) => ({ nodeId: b.id, site: b.site, rack: b.rack, bmc: b.baseUrl, credentialRef: b.id, sessionLimit: b.sessionLimit, intervalS: options.intervalS })) }));
    writeFileSync(join(dir, 'credentials.json'), JSON.stringify(Object.fromEntries(fleet.map((b) => [b.id, { username: b.username, password: b.password, endpoints: [new URL(b.baseUrl).origin] }]))), { mode: 0o600 });

    const startMember = async (index: number): Promise<Member> => {
      const port = await freePort();
      const child = spawn(
        process.execPath,
        ['--unhandled-rejections=strict', ...cliArguments(), 'start', '--no-sim', '--targets', join(dir, 'targets.json'), '--allow-http-site', '*', '--port', String(port), '--lease-ttl', String(options.leaseTtlS), '--data-dir', join(dir, `p${index}`), '--checkpoint-key', join(dir, 'checkpoint-signer.key'), '--publish-dir', join(dir, 'transparency')],
        { stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, DATABASE_URL: options.connectionString, FLEET_LEDGER_CREDENTIALS_FILE: join(dir, 'credentials.json'), FLEET_LEDGER_LOG_FORMAT: 'json' } },
      );
      const member: Member = { child, index, port, lines: [], exited: false };
      let partial = '';
      child.stderr!.on('data', (chunk: Buffer) => {
        const text = partial + chunk.toString();
        const lines = text.split('\n');
        partial = lines.pop()!;
        for (const line of lines) {
          if (!/"level":(4|5|6)0|cluster|refused|lease/.test(line)) continue;
          member.lines.push(line);
          if (/did not end within its bound/.test(line)) log(`p${index} abandoned a stuck visit: ${line}`);
          if (/poll lease|cluster round|keeper|polling shard/.test(line)) log(`p${index} ${line.replace(/.*"msg":"([^"]*)".*/, '$1')} ${/"shard":"([^"]*)"/.exec(line)?.[1] ?? ''} ${/"(tookMs|sinceLastMs|targets|reason)":("?[^,}]*)/.exec(line)?.[0] ?? ''}`);
        }
      });
      child.on('exit', () => (member.exited = true));
      for (const deadline = Date.now() + 180_000 + options.bmcs * 10; ; ) {
        if (member.exited) throw new Error(`process ${index} exited during start: ${member.lines.slice(-5).join('\n')}`);
        const ready = await fetch(`http://127.0.0.1:${port}/readyz`).then((r) => r.ok).catch(() => false);
        if (ready) break;
        if (Date.now() > deadline) throw new Error(`process ${index} not ready within ${180 + options.bmcs / 100} s`);
        await sleep(250);
      }
      return member;
    };
    // The first registers the fleet; the others find it registered (and start together, as a deployment's would).
    const started = Date.now();
    members.push(await startMember(0));
    members.push(...(await Promise.all(Array.from({ length: options.processes - 1 }, (_, i) => startMember(i + 1)))));
    log(`${members.length} processes ready after ${round((Date.now() - started) / 1000, 1)} s`);

    const processIdOf = async (member: Member): Promise<string> => {
      const row = await pool.query<{ process_id: string }>('SELECT process_id FROM cluster_members WHERE pid = $1 ORDER BY started_at DESC LIMIT 1', [member.child.pid]);
      return row.rows[0]?.process_id ?? '';
    };
    const shardsOf = async (processId: string): Promise<Array<{ shard: string; epoch: number }>> =>
      (await pool.query<{ shard: string; epoch: string }>('SELECT shard, epoch FROM cluster_leases WHERE owner = $1 AND NOT released', [processId])).rows.map((row) => ({ shard: row.shard, epoch: Number(row.epoch) }));

    const siteOf = new Map(fleet.map((b) => [b.id, b.site]));
    /**
     * Seconds from `from` (ms) until every node of `shards` had a liveness contact recorded under a newer epoch than
     * the one given (read from the log after `fromPosition`); null while some node has none. The instant of a contact is
     * its batch's window start plus its offset, as the poller recorded it.
     */
    const recontactS = async (shards: Array<{ shard: string; epoch: number }>, fromPosition: number, from: number): Promise<number | null> => {
      const nodes = fleet.filter((b) => shards.some((s) => s.shard === siteOf.get(b.id))).length;
      const row = await pool.query<{ nodes: string; last: Date | null }>(
        `SELECT count(*) AS nodes, max(first_at) AS last FROM (
           SELECT n.node, min((e.data->>'windowStart')::timestamptz + (e.data->'offsetMs'->>(n.i::int - 1))::int * interval '1 millisecond') AS first_at
             FROM ledger_events e
             JOIN unnest($1::text[], $2::bigint[]) AS s(shard, epoch)
               ON e.actor->'lease'->>'shard' = s.shard AND (e.actor->'lease'->>'epoch')::bigint > s.epoch
             CROSS JOIN LATERAL jsonb_array_elements_text(e.data->'nodeIds') WITH ORDINALITY AS n(node, i)
            WHERE e.type = 'PollOutcomesRecorded' AND e.position > $3
              AND e.data->'work'->>(n.i::int - 1) = 'liveness'
              AND e.data->'outcomes'->>(n.i::int - 1) IN ('success', 'not-modified')
            GROUP BY n.node) contacted`,
        [shards.map((s) => s.shard), shards.map((s) => s.epoch), fromPosition],
      );
      const { nodes: contacted, last } = row.rows[0]!;
      return Number(contacted) >= nodes && last ? round((new Date(last).getTime() - from) / 1000, 1) : null;
    };
    /**
     * Waits until `recontactS` has an answer, or until `until` (ms): keeps the run from stopping before the take-over
     * it measures could complete. The result's figures are asked again after the stop, when every batch is recorded.
     */
    const awaitRecontact = async (shards: Array<{ shard: string; epoch: number }>, fromPosition: number, from: number, until: number): Promise<boolean> => {
      for (;;) {
        if ((await recontactS(shards, fromPosition, from)) !== null) return true;
        if (Date.now() > until) return false;
        await sleep(1000);
      }
    };
    const headPosition = async (): Promise<number> => Number((await pool.query<{ position: string }>('SELECT position FROM ledger_head')).rows[0]?.position ?? 0);

    // Every node contacted once, every process holding a share.
    let firstSweep = Number.NaN;
    for (const deadline = Date.now() + Math.max(300_000, options.bmcs * 50); ; ) {
      const contacted = Number((await pool.query(`SELECT count(*) AS n FROM liveness_nodes WHERE last_contact_at IS NOT NULL`).catch(() => ({ rows: [{ n: 0 }] }))).rows[0].n);
      const owners = Number((await pool.query(`SELECT count(DISTINCT owner) AS n FROM cluster_leases WHERE NOT released AND expires_at > now()`)).rows[0].n);
      if (contacted >= fleet.length && owners === Math.min(options.processes, options.sites)) {
        firstSweep = (Date.now() - started) / 1000;
        break;
      }
      if (Date.now() > deadline) {
        const bySite = (await pool.query(`SELECT site, count(*) FILTER (WHERE last_contact_at IS NOT NULL) AS contacted, count(*) AS nodes FROM liveness_nodes GROUP BY site ORDER BY site`)).rows;
        const polls = (await pool.query(`SELECT stream, count(*) AS batches, max(position) AS last FROM ledger_events WHERE type = 'PollOutcomesRecorded' GROUP BY stream`)).rows;
        const lag = (await pool.query(`SELECT * FROM projection_checkpoints`).catch(() => ({ rows: [] }))).rows;
        const head = (await pool.query(`SELECT position FROM ledger_head`)).rows;
        // The nodes never contacted, with every outcome the log holds of them, and what the processes said of them.
        const silent = (await pool.query<{ node_id: string; site: string }>(`SELECT node_id, site FROM liveness_nodes WHERE last_contact_at IS NULL ORDER BY node_id LIMIT 5`)).rows;
        const outcomesOf = (
          await pool.query(
            `SELECT n.node, e.data->'work'->>(n.i::int - 1) AS work, e.data->'outcomes'->>(n.i::int - 1) AS outcome, e.actor->'lease' AS lease, count(*) AS n
               FROM ledger_events e CROSS JOIN LATERAL jsonb_array_elements_text(e.data->'nodeIds') WITH ORDINALITY AS n(node, i)
              WHERE e.type = 'PollOutcomesRecorded' AND n.node = any($1) GROUP BY 1, 2, 3, 4`,
            [silent.map((row) => row.node_id)],
          )
        ).rows;
        for (const member of members) log(`p${member.index} last lines:\n${member.lines.filter((l) => !/poll lease|polling shard|"msg":"fleet: /.test(l)).slice(-12).join('\n')}`);
        for (const member of members) log(`p${member.index} on the silent nodes:\n${member.lines.filter((l) => silent.some((row) => l.includes(row.node_id))).slice(-5).join('\n')}`);
        throw new Error(`first sweep not done in ${Math.max(300, options.bmcs / 20)} s: ${contacted} of ${fleet.length} contacted, ${owners} owners; by site ${JSON.stringify(bySite)}; never contacted ${JSON.stringify(silent)}, their outcomes ${JSON.stringify(outcomesOf)}; polls ${JSON.stringify(polls)}; head ${JSON.stringify(head)}; checkpoints ${JSON.stringify(lag)}`);
      }
      await sleep(500);
    }
    log(`first sweep after ${round(firstSweep, 1)} s`);
    await sleep(options.warmupS * 1000);

    let killAt: number | null = null;
    let killedFrom = 0;
    let killed: { processId: string; shards: Array<{ shard: string; epoch: number }> } | null = null;
    let leaseTakeover: number | null = null;
    if (options.killOne) {
      await sleep(random() * options.killWindowS * 1000);
      // The victim: a process holding at least one shard, chosen at random.
      const holders: Array<{ member: Member; processId: string; shards: Array<{ shard: string; epoch: number }> }> = [];
      for (const member of members) {
        const processId = await processIdOf(member);
        const shards = await shardsOf(processId);
        if (shards.length > 0) holders.push({ member, processId, shards });
      }
      const victim = holders[Math.floor(random() * holders.length)]!;
      killedFrom = await headPosition();
      victim.member.child.kill('SIGKILL');
      killAt = Date.now();
      killed = { processId: victim.processId, shards: victim.shards };
      log(`SIGKILL process ${victim.member.index} (${victim.processId}) holding ${victim.shards.map((s) => `${s.shard}#${s.epoch}`).join(', ')}`);
      for (const deadline = Date.now() + options.intervalS * 6_000; ; ) {
        const rows = (await pool.query<{ shard: string; owner: string; epoch: string }>('SELECT shard, owner, epoch FROM cluster_leases WHERE shard = ANY($1)', [victim.shards.map((s) => s.shard)])).rows;
        if (rows.every((row) => row.owner !== victim.processId)) {
          leaseTakeover = (Date.now() - killAt) / 1000;
          break;
        }
        if (Date.now() > deadline) break;
        await sleep(100);
      }
      log(`leases taken over after ${leaseTakeover} s`);
      const watchedUntil = Date.now() + (options.afterKillS ?? options.intervalS * 3) * 1000;
      const recontacted = await awaitRecontact(victim.shards, killedFrom, killAt, killAt + options.intervalS * 2_000);
      log(`killed shards ${recontacted ? '' : 'not '}contacted again after ${round((Date.now() - killAt) / 1000, 1)} s`);
      await sleep(Math.max(0, watchedUntil - Date.now()));
    }

    let pauseAt: number | null = null;
    let pausedFrom = 0;
    let paused: { processId: string; shards: Array<{ shard: string; epoch: number }> } | null = null;
    let pausedMember: Member | null = null;
    if (options.pauseS > 0) {
      const alive = members.filter((m) => !m.exited);
      for (const member of alive) {
        const processId = await processIdOf(member);
        const shards = await shardsOf(processId);
        if (shards.length > 0) {
          paused = { processId, shards };
          pausedMember = member;
          break;
        }
      }
      if (paused && pausedMember) {
        pausedFrom = await headPosition();
        pausedMember.child.kill('SIGSTOP');
        pauseAt = Date.now();
        log(`SIGSTOP process ${pausedMember.index} (${paused.processId}) holding ${paused.shards.map((s) => `${s.shard}#${s.epoch}`).join(', ')} for ${options.pauseS} s`);
        await sleep(options.pauseS * 1000);
        pausedMember.child.kill('SIGCONT');
        log('SIGCONT');
        const settled = Date.now() + options.settleS * 1000;
        const recontacted = await awaitRecontact(paused.shards, pausedFrom, pauseAt, pauseAt + options.intervalS * 2_000);
        log(`paused shards ${recontacted ? '' : 'not '}contacted by others after ${round((Date.now() - pauseAt) / 1000, 1)} s`);
        await sleep(Math.max(0, settled - Date.now()));
      } else {
        await sleep(options.settleS * 1000);
      }
    } else {
      await sleep(options.settleS * 1000);
    }

    // Clean stops: each drains and releases its shards.
    const stopAt = Date.now();
    await Promise.all(
      members.filter((m) => !m.exited).map(
        (m) =>
          new Promise<void>((resolve) => {
            m.child.once('exit', () => resolve());
            m.child.kill('SIGTERM');
            setTimeout(() => {
              m.child.kill('SIGKILL');
              resolve();
            }, 30_000);
          }),
      ),
    );
    const simStats = await simJson<{ rejections: number; doublePolled: number; bmcsDoublePolled: number; doublePollSamples: unknown[] }>(`${sim.controlUrl}/sim/stats`);
    if (simStats.doublePolled > 0) log(`double polls: ${JSON.stringify(simStats.doublePollSamples)}`);

    // The log's view: every outcome, with the lease it was recorded under.
    interface Outcome {
      node: string;
      work: string;
      outcome: string;
      at: number;
      shard: string;
      epoch: number;
    }
    const outcomes: Outcome[] = [];
    const batches = await pool.query<{ data: { nodeIds: string[]; work: string[]; outcomes: string[]; offsetMs: number[]; windowStart: string }; actor: { lease?: { shard: string; epoch: number } } }>(
      `SELECT data, actor FROM ledger_events WHERE type = 'PollOutcomesRecorded' ORDER BY position`,
    );
    for (const { data, actor } of batches.rows) {
      const start = Date.parse(data.windowStart);
      data.nodeIds.forEach((node, i) => outcomes.push({ node, work: data.work[i]!, outcome: data.outcomes[i]!, at: start + data.offsetMs[i]!, shard: actor.lease?.shard ?? '', epoch: actor.lease?.epoch ?? 0 }));
    }
    const seen = new Set<string>();
    let duplicates = 0;
    for (const o of outcomes) {
      const key = `${o.node}\u0000${o.work}\u0000${o.at}\u0000${o.epoch}`;
      if (seen.has(key)) duplicates += 1;
      seen.add(key);
    }
    const contacts = new Map<string, number[]>();
    let misses = 0;
    for (const o of outcomes) {
      if (o.work !== 'liveness') continue;
      if (o.outcome === 'success' || o.outcome === 'not-modified') {
        let list = contacts.get(o.node);
        if (!list) contacts.set(o.node, (list = []));
        list.push(o.at);
      } else if (o.outcome !== 'latched') {
        misses += 1;
      }
    }
    const gaps: number[] = [];
    for (const list of contacts.values()) {
      list.sort((a, b) => a - b);
      let max = 0;
      for (let i = 1; i < list.length; i += 1) max = Math.max(max, list[i]! - list[i - 1]!);
      gaps.push(max);
    }
    gaps.sort((a, b) => a - b);
    const leaseEvents: string[] = [];
    for (const member of members) {
      for (const line of member.lines) {
        if (!/poll lease (acquired|lost)|cluster round/.test(line)) continue;
        try {
          const entry = JSON.parse(line) as { time: number; msg: string; shard?: string; epoch?: number; reason?: string; tookMs?: number; sinceLastMs?: number };
          leaseEvents.push(`${round((entry.time - started) / 1000, 1)} p${member.index} ${entry.msg.replace('poll lease ', '')} ${entry.shard ?? ''}${entry.epoch ? `#${entry.epoch}` : ''} ${entry.reason ?? ''}${entry.tookMs ?? entry.sinceLastMs ?? ''}`);
        } catch {
          // not a JSON line
        }
      }
    }
    leaseEvents.sort((a, b) => Number(a.split(' ')[0]) - Number(b.split(' ')[0]));
    const handovers: Record<string, number> = {};
    for (const member of members) {
      for (const line of member.lines) {
        const match = /"msg":"poll lease acquired".*?"reason":"(\w+)"|"reason":"(\w+)".*?"msg":"poll lease acquired"/.exec(line);
        const reason = match?.[1] ?? match?.[2];
        if (reason) handovers[reason] = (handovers[reason] ?? 0) + 1;
      }
    }
    const staleRefused = pausedMember ? pausedMember.lines.filter((line) => /their shard was taken over|LEDGER_STALE_EPOCH/.test(line)).length : 0;
    let staleError: string | null = null;
    if (killed && killed.shards.length > 0) {
      // The killed process's last epoch, presented once more: refused, typed.
      const { EventStore } = await import('../../src/ledger/index.js');
      const store = await EventStore.open({ connectionString: options.connectionString, migrate: false, poolSize: 1 });
      const shard = killed.shards[0]!;
      staleError = await store
        .append(`polls-${shard.shard}`, [{ type: 'PollOutcomesRecorded', data: { site: shard.shard, windowStart: new Date().toISOString(), nodeIds: ['x'], work: ['liveness'], outcomes: ['success'], latencyMs: [1], offsetMs: [0] }, actor: { kind: 'system', id: 'poller', lease: shard } }])
        .then(() => 'accepted', (error: unknown) => String((error as { code?: string }).code ?? error));
      await store.close();
    }
    const dark = Number((await pool.query(`SELECT count(*) AS n FROM liveness_nodes WHERE state = 'dark'`)).rows[0].n);
    return {
      processes: options.processes,
      bmcs: fleet.length,
      sites: options.sites,
      interval_s: options.intervalS,
      lease_ttl_s: options.leaseTtlS,
      first_sweep_s: round(firstSweep, 1),
      takeover_s: killAt !== null && killed ? await recontactS(killed.shards, killedFrom, killAt) : null,
      lease_takeover_s: leaseTakeover === null ? null : round(leaseTakeover, 1),
      pause_takeover_s: pauseAt !== null && paused ? await recontactS(paused.shards, pausedFrom, pauseAt) : null,
      double_polled: simStats.doublePolled,
      bmcs_double_polled: simStats.bmcsDoublePolled,
      session_limit_violations: simStats.rejections,
      false_dark_alarms: dark,
      liveness_misses: misses,
      duplicate_outcomes: duplicates,
      contact_gap_max_s: round((gaps.at(-1) ?? Number.NaN) / 1000, 1),
      contact_gap_p99_s: round(percentile(gaps, 99) / 1000, 1),
      handovers,
      stale_appends_refused: staleRefused,
      stale_epoch_error: staleError,
      outcomes: outcomes.length,
      run_s: round((stopAt - started) / 1000, 1),
      lease_events: leaseEvents,
    };
  } finally {
    for (const member of members) if (!member.exited) member.child.kill('SIGKILL');
    await pool.end().catch(() => undefined);
    sim.child.kill('SIGTERM');
    await new Promise((resolve) => {
      sim.child.once('exit', resolve);
      setTimeout(resolve, 5000);
    });
    rmSync(dir, { recursive: true, force: true });
  }
}
