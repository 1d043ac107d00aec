/**
 * The rollout run across several processes: each runs a `SagaSupervisor` (as `fleet-ledger start` does) on one
 * database, and the one that holds the rollout is SIGKILLed at seeded moments and replaced by a new process, so the
 * rollout must go on in another one. Used by `rollout-run.ts` when it is given `processes` > 1.
 *
 * Who did what is read from PostgreSQL, not from the processes (they die):
 * - the holder of the rollout: the session holding its advisory lock in `pg_locks`, named by the `application_name`
 *   each process connects with (sampled every 50 ms);
 * - who dispatched: a trigger notes, for every append to the rollout's streams (rollout, node steps, capacity), the
 *   `application_name` of the session that made it, i.e. the process that appended, and which process held the
 *   rollout's lock at that instant. An update intent is appended by the process that sends the request right
 *   after it, so this also says who sent each firmware submission.
 *
 * Between the kills, `cuts` more interruptions end only the holder's lock session (`pg_terminate_backend`, as an
 * administrator or an `idle_session_timeout` would) and leave the process running: it must stop dispatching, since
 * another process takes the rollout over. Each interruption waits until another process is up and standing by (a
 * replacement takes seconds to start), and lands a seeded time after that or after the holder took the rollout,
 * whichever is later.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { bundledEntry } from './bundled-entry.js';

export interface ProcessesRunOptions {
  connectionString: string;
  processes: number;
  kills: number;
  /** Lock sessions of the holder to end, between the kills (the process lives on). */
  cuts?: number;
  /** An interruption lands this long after the holder took the rollout or another process was up (uniform between the two). */
  killAfterMs: [number, number];
  rolloutId: string;
  accessFile: string;
  timing: string;
  random: () => number;
  deadline: number;
  /** The rollout's status once it stopped (completed, aborted, halted, paused), else undefined. */
  finished: () => Promise<string | undefined>;
  log: (line: string) => void;
}

export interface Takeover {
  how: 'kill' | 'cut';
  /** The process that held the rollout and was killed, or whose lock session was ended. */
  killed: string;
  by: string;
  /** From the SIGKILL to the next process seen holding the rollout's lock. */
  lock_ms: number;
  /** From the SIGKILL to that process's first append to the rollout's streams (null: it had nothing left to write). */
  first_append_ms: number | null;
}

export interface Dispatcher {
  process: string;
  appends: number;
  /** `UpdateIntentRecorded` appends: each is followed by this process's firmware request to the BMC. */
  intents: number;
}

export interface ProcessesRunResult {
  processes: number;
  kills: number;
  status: string;
  takeovers: Takeover[];
  /** The processes that appended to the rollout's streams, in the order they did. */
  dispatchers: Dispatcher[];
  appends: number;
  /**
   * Appends to the rollout's streams by a process while another process held the rollout's lock. Not 0 by itself: the
   * next owner takes the lock, then raises the epoch, and the raise waits for an append already in its transaction
   * under the old epoch, which is written in that moment (and read by the next owner, which loads after the raise).
   */
  appends_beside_owner: number;
  /** Appends under an epoch written after a newer epoch had been raised: a superseded owner writing (goal 0). */
  appends_after_superseded: number;
  /**
   * Appends by a process that no longer held the lock, with nobody holding it yet: a write already under way when its
   * lock session ended (each named with how long after the interruption it landed).
   */
  appends_after_lease_lost: Array<{ process: string; type: string; after_ms: number }>;
  /**
   * The fence, read from the log: every append to the rollout's streams carries the saga epoch it was written under.
   * `unfenced_appends`: appends by a process with no epoch (goal 0); `epoch_regressions`: appends whose epoch is older
   * than one already in the log before them, i.e. a superseded owner writing after its successor (goal 0);
   * `epochs_shared`: epochs that more than one process wrote under (goal 0).
   */
  unfenced_appends: number;
  epoch_regressions: number;
  epochs_shared: number;
  /** The epochs the rollout was taken under, in log order. */
  epochs: number[];
  /** The most sessions ever seen holding the rollout's lock at once (by sampling; 1). */
  max_lock_holders: number;
  /** The most sessions ever seen waiting for the rollout's lock at once (each a pooled connection of a standby process). */
  max_lock_waiters: number;
}

const childScript = fileURLToPath(new URL('./saga-child.ts', import.meta.url));
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));

interface SagaProcess {
  name: string;
  child: ChildProcess;
  alive: boolean;
  /** It printed `ready`: its supervisor runs (and stands by for the rollout, unless it holds it). */
  ready: boolean;
  stderr: string;
}

export async function runAcrossProcesses(options: ProcessesRunOptions): Promise<ProcessesRunResult> {
  const observer = new pg.Client({ connectionString: options.connectionString, application_name: 'rollout-run-observer' });
  observer.on('error', (error) => options.log(`observer connection lost: ${String(error)}`));
  await observer.connect();
  const processes = new Map<string, SagaProcess>();
  let spawned = 0;
  const script = await bundledEntry(childScript); // a replacement starts in half the time
  const start = (): SagaProcess => {
    const name = `saga-process-${++spawned}`;
    const child = spawn(process.execPath, [script, options.connectionString, options.accessFile, options.timing], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, PGAPPNAME: name },
    });
    const entry: SagaProcess = { name, child, alive: true, ready: false, stderr: '' };
    child.stdout!.on('data', (chunk: Buffer) => {
      if (chunk.toString().includes('ready\n')) entry.ready = true;
    });
    child.stderr!.on('data', (chunk: Buffer) => {
      entry.stderr = (entry.stderr + chunk.toString()).slice(-4000);
      if (process.env['FLEET_LEDGER_DEBUG_ROLLOUT']) process.stderr.write(`[${name}] ${chunk}`);
    });
    child.on('exit', (code, signal) => {
      entry.alive = false;
      if (signal !== 'SIGKILL' && signal !== 'SIGTERM' && code !== 0) options.log(`${name} exited ${code ?? signal}: ${entry.stderr}`);
    });
    processes.set(name, entry);
    return entry;
  };
  let sampling = true;
  let sampler: Promise<void> = Promise.resolve();
  try {
    const key = BigInt((await observer.query<{ key: string }>('SELECT hashtext($1)::bigint::text AS key', [`fleet-ledger:rollout:${options.rolloutId}`])).rows[0]!.key);
    const lock = { classid: ((key >> 32n) & 0xffffffffn).toString(), objid: (key & 0xffffffffn).toString() };
    await recordAppendOrigins(observer, options.rolloutId, lock);
    for (let i = 0; i < options.processes; i++) start();

    // The holder of the rollout, sampled from pg_locks.
    let holder: { name: string; pid: number; since: number } | undefined;
    let maxHolders = 0;
    let maxWaiters = 0;
    sampler = (async () => {
      while (sampling) {
        const { rows } = await observer.query<{ name: string; pid: number; granted: boolean }>(
          `SELECT a.application_name AS name, l.pid, l.granted
             FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
            WHERE l.locktype = 'advisory' AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
              AND l.objsubid = 1 AND l.classid::text = $1 AND l.objid::text = $2`,
          [lock.classid, lock.objid],
        );
        const holders = rows.filter((row) => row.granted);
        maxHolders = Math.max(maxHolders, holders.length);
        maxWaiters = Math.max(maxWaiters, rows.length - holders.length);
        const now = holders[0];
        if (now?.pid !== holder?.pid) holder = now === undefined ? undefined : { name: now.name, pid: now.pid, since: Date.now() };
        await sleep(50);
      }
    })();

    // Kills and cuts alternate (kill, cut, kill, ...; the rest at the end), so a replacement has time to start.
    const interruptions: Array<'kill' | 'cut'> = [];
    const cuts = options.cuts ?? 0;
    for (let i = 0; i < Math.max(options.kills, cuts); i++) {
      if (i < options.kills) interruptions.push('kill');
      if (i < cuts) interruptions.push('cut');
    }
    const done: Array<{ how: 'kill' | 'cut'; name: string; at: number; lockMs: number; by: string }> = [];
    let status: string | undefined;
    while (done.length < interruptions.length && Date.now() < options.deadline) {
      status = await options.finished();
      if (status) break;
      const how = interruptions[done.length]!;
      const current = holder;
      const entry = current ? processes.get(current.name) : undefined;
      // Another process is up and standing by before the next interruption: a take-over is measured from one, not
      // from a replacement still starting.
      const standing = [...processes.values()].some((candidate) => candidate.alive && candidate.ready && candidate.name !== current?.name);
      if (!current || !entry?.alive || !standing) {
        await sleep(50);
        continue;
      }
      const killAt = Math.max(current.since, Date.now()) + options.killAfterMs[0] + options.random() * (options.killAfterMs[1] - options.killAfterMs[0]);
      while (Date.now() < killAt && holder?.pid === current.pid) await sleep(Math.min(50, killAt - Date.now()));
      if (holder?.pid !== current.pid) continue; // it let the rollout go on its own
      if (how === 'kill') entry.child.kill('SIGKILL');
      else await observer.query('SELECT pg_terminate_backend($1)', [current.pid]);
      const at = Date.now();
      if (how === 'kill') start(); // a replacement, as an operator's service manager would start one
      const movedOn = (): boolean => holder !== undefined && holder.pid !== current.pid && (how === 'cut' || holder.name !== current.name);
      while (Date.now() < options.deadline && !movedOn() && !(await options.finished())) await sleep(20);
      const next = movedOn() ? holder! : undefined;
      done.push({ how, name: current.name, at, by: next?.name ?? '', lockMs: next ? next.since - at : -1 });
      options.log(`${new Date(at).toISOString()} ${how} ${done.length}: ${current.name} ${how === 'kill' ? 'killed' : 'lost its lock session'} after ${Math.round(at - current.since)} ms holding the rollout; ${next ? `${next.name} took it over after ${next.since - at} ms` : 'nobody took it over'}`);
    }
    while (!status && Date.now() < options.deadline) {
      status = await options.finished();
      if (!status) await sleep(300);
    }
    sampling = false;
    await sampler;

    const origins = await observer.query<{ name: string; type: string; at: string; held: boolean; holder: string | null; epoch: string | null; superseded: boolean }>(
      `SELECT application_name AS name, type, (extract(epoch FROM at) * 1000)::bigint::text AS at, holder = application_name AS held, holder, epoch::text AS epoch,
              EXISTS (SELECT 1 FROM rollout_run_epoch_raise r WHERE r.epoch > o.epoch AND r.at < o.at) AS superseded
         FROM rollout_run_append_origin o ORDER BY position`,
    );
    const ours = origins.rows.filter((row) => processes.has(row.name));
    const dispatchers: Dispatcher[] = [];
    for (const row of ours) {
      const last = dispatchers[dispatchers.length - 1];
      const intent = row.type === 'UpdateIntentRecorded' ? 1 : 0;
      if (last?.process === row.name) {
        last.appends++;
        last.intents += intent;
      } else dispatchers.push({ process: row.name, appends: 1, intents: intent });
    }
    const takeovers = done.map((interruption): Takeover => {
      const first = ours.find((row) => row.name === interruption.by && row.held && Number(row.at) >= interruption.at);
      return { how: interruption.how, killed: interruption.name, by: interruption.by, lock_ms: interruption.lockMs, first_append_ms: first ? Number(first.at) - interruption.at : null };
    });
    return {
      processes: options.processes,
      kills: done.filter((interruption) => interruption.how === 'kill').length,
      status: status ?? 'timeout',
      takeovers,
      dispatchers,
      appends: ours.length,
      appends_beside_owner: ours.filter((row) => row.holder !== null && !row.held).length,
      appends_after_superseded: ours.filter((row) => row.superseded).length,
      appends_after_lease_lost: ours
        .filter((row) => row.holder === null)
        .map((row) => {
          const before = done.filter((interruption) => interruption.at <= Number(row.at)).pop();
          return { process: row.name, type: row.type, after_ms: before ? Number(row.at) - before.at : -1 };
        }),
      max_lock_holders: maxHolders,
      max_lock_waiters: maxWaiters,
      ...fenceOf(ours),
    };
  } finally {
    sampling = false;
    await sampler.catch(() => undefined);
    for (const entry of processes.values()) if (entry.alive) entry.child.kill('SIGTERM');
    await Promise.all(
      [...processes.values()].filter((entry) => entry.alive).map(
        (entry) =>
          new Promise<void>((resolve) => {
            const guard = setTimeout(() => entry.child.kill('SIGKILL'), 10_000);
            entry.child.once('exit', () => (clearTimeout(guard), resolve()));
          }),
      ),
    );
    await observer.end();
  }
}

/**
 * Records, for every append to the rollout's streams, the application name of the session that made it and that of
 * the session holding the rollout's lock then, in a table of the run's own (the database is the run's,
 * dropped after it).
 */
async function recordAppendOrigins(client: pg.Client, rolloutId: string, lock: { classid: string; objid: string }): Promise<void> {
  await client.query(`
    CREATE TABLE IF NOT EXISTS rollout_run_append_origin (
      position bigint PRIMARY KEY, stream text NOT NULL, type text NOT NULL, application_name text NOT NULL, at timestamptz NOT NULL, epoch bigint, holder text);
    CREATE OR REPLACE FUNCTION rollout_run_note_origin() RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_catalog AS $$
    BEGIN
      INSERT INTO rollout_run_append_origin VALUES (NEW.position, NEW.stream, NEW.type, current_setting('application_name'), clock_timestamp(), (NEW.actor->'lease'->>'epoch')::bigint, (
        SELECT a.application_name FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
         WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 1 AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
           AND l.classid::text = ${pg.escapeLiteral(lock.classid)} AND l.objid::text = ${pg.escapeLiteral(lock.objid)}
         LIMIT 1));
      RETURN NULL;
    END $$;
    -- Every take of the rollout: the epoch raised, and when (clock_timestamp() in the statement: after the raise waited
    -- for the row, i.e. for any append in flight under the old epoch).
    CREATE TABLE IF NOT EXISTS rollout_run_epoch_raise (epoch bigint PRIMARY KEY, owner text NOT NULL, at timestamptz NOT NULL);
    CREATE OR REPLACE FUNCTION rollout_run_note_raise() RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_catalog AS $$
    BEGIN
      INSERT INTO rollout_run_epoch_raise VALUES (NEW.epoch, NEW.owner, clock_timestamp()) ON CONFLICT DO NOTHING;
      RETURN NULL;
    END $$;
    DROP TRIGGER IF EXISTS rollout_run_epoch_raise ON saga_leases;
    CREATE TRIGGER rollout_run_epoch_raise AFTER INSERT OR UPDATE ON saga_leases FOR EACH ROW
      WHEN (NEW.saga = ${pg.escapeLiteral(`fleet-ledger:rollout:${rolloutId}`)})
      EXECUTE FUNCTION rollout_run_note_raise();
    DROP TRIGGER IF EXISTS rollout_run_append_origin ON ledger_events;
    CREATE TRIGGER rollout_run_append_origin AFTER INSERT ON ledger_events FOR EACH ROW
      WHEN (NEW.stream = ${pg.escapeLiteral(`rollout-${rolloutId}`)} OR starts_with(NEW.stream, ${pg.escapeLiteral(`fwstep-${rolloutId}-`)}) OR starts_with(NEW.stream, 'capacity-'))
      EXECUTE FUNCTION rollout_run_note_origin();`);
}

/** What the log says of the saga fence: appends without an epoch, epochs going backwards, epochs shared by processes. */
function fenceOf(rows: Array<{ name: string; epoch: string | null }>): Pick<ProcessesRunResult, 'unfenced_appends' | 'epoch_regressions' | 'epochs_shared' | 'epochs'> {
  let highest = 0;
  let regressions = 0;
  const writers = new Map<number, Set<string>>();
  const epochs: number[] = [];
  for (const row of rows) {
    if (row.epoch === null) continue;
    const epoch = Number(row.epoch);
    if (epoch < highest) regressions++;
    if (epoch > highest) epochs.push(epoch);
    highest = Math.max(highest, epoch);
    writers.set(epoch, (writers.get(epoch) ?? new Set()).add(row.name));
  }
  return {
    unfenced_appends: rows.filter((row) => row.epoch === null).length,
    epoch_regressions: regressions,
    epochs_shared: [...writers.values()].filter((names) => names.size > 1).length,
    epochs,
  };
}
