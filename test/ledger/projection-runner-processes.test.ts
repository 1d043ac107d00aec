import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ProposedEvent } from '../../events/index.js';
import { fleetProjections } from '../../projections/index.js';
import { EventStore, ProjectionRunner, projectionLockKey } from '../../src/ledger/index.js';
import { seededRandom } from '../../sagas/index.js';
import { acknowledged, firmware, gpuTelemetry, inventory, maintenance, polls, registered, topology, xid, type Outcome } from '../projections/support/fleet-events.js';
import { snapshot } from '../projections/support/projection-harness.js';
import { backends, freshDatabase } from '../support/backends.js';

/**
 * Projections across processes: three processes run the fleet's projections (`ProjectionRunner`, as in `fleet-ledger
 * start`) on one database while this process appends a seeded fleet history (registrations, topology, a poll flush
 * every 30 ms, inventory, firmware, GPU and operator events). The process holding a projection (its advisory lock in
 * `pg_locks`, named by `application_name`) is SIGKILLed three times, each time a different projection's holder, 0.5 to
 * 2 s after another process is up, and a new process started in its place (every projection the killed process held
 * is taken over); once, only a holder's lock session for one projection is ended (`pg_terminate_backend`) and its
 * process lives on. A trigger records every checkpoint move with the process
 * that made it and the process holding that projection's lock at that instant. Default standby retry (2 s).
 */
const child = fileURLToPath(new URL('../support/projection-child.ts', import.meta.url));
const options = { liveness: { darkAfterMisses: 3, recoverAfterSuccesses: 2 }, blastRadius: { minNodes: 2 } };
const projections = fleetProjections(options);
const names = projections.map((projection) => projection.name);
const tables = projections.flatMap((projection) => projection.tables);
const standbyRetryMs = 2_000;
const nodes = Array.from({ length: 24 }, (_, i) => `n${String(i + 1).padStart(2, '0')}`);
const rackOf = (node: string): string => `r${(nodes.indexOf(node) % 4) + 1}`;
/** Nodes that never answer: their consecutive misses count every outcome appended for them, once. */
const silent = nodes.slice(0, 4);
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));

interface Takeover {
  how: 'kill' | 'cut';
  /** When the holder was killed or its lock session ended (ms since the epoch). */
  at: number;
  projection: string;
  from: string;
  by: string;
  lockMs: number;
  applyMs: number | null;
}

interface Move {
  name: string;
  from: number;
  to: number;
  mover: string;
  holder: string | null;
  at: number;
}

describe('projections shared by three processes', () => {
  let drop: () => Promise<void>;
  let store: EventStore;
  const takeovers: Takeover[] = [];
  const maxHolders = new Map<string, number>();
  let moves: Move[] = [];
  let head = 0;
  let checkpoints: Array<{ name: string; position: number; status: string }> = [];
  let incremental: Record<string, unknown[]> = {};
  let rebuilt: Record<string, unknown[]> = {};
  let deadLetters = 0;
  const timeoutsAppended = new Map<string, number>();
  let misses = new Map<string, number>();

  beforeAll(async () => {
    const db = await freshDatabase(backends()[0]!.adminUrl!);
    drop = db.drop;
    store = await EventStore.open({ connectionString: db.url, migrate: true, poolSize: 4 });
    const observer = new pg.Client({ connectionString: db.url, application_name: 'projection-test-observer' });
    observer.on('error', () => undefined); // the database is dropped under it if the run fails
    await observer.connect();
    // Each projection's lock as pg_locks shows a bigint key: its high and low 32 bits.
    const locks = new Map<string, string>(
      names.map((name) => {
        const key = BigInt.asUintN(64, projectionLockKey(name));
        return [`${key >> 32n}:${key & 0xffffffffn}`, name];
      }),
    );
    await observer.query(`
      CREATE TABLE test_projection_locks (name text PRIMARY KEY, classid text NOT NULL, objid text NOT NULL);
      CREATE TABLE test_checkpoint_moves (seq bigserial PRIMARY KEY, name text NOT NULL, from_position bigint NOT NULL, to_position bigint NOT NULL,
        mover text NOT NULL, holder text, at timestamptz NOT NULL);
      CREATE FUNCTION test_note_checkpoint_move() RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_catalog AS $$
      BEGIN
        INSERT INTO test_checkpoint_moves (name, from_position, to_position, mover, holder, at) VALUES (NEW.name, OLD.position, NEW.position,
          current_setting('application_name'), (
            SELECT a.application_name FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid JOIN test_projection_locks k ON k.name = NEW.name
             WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 1 AND l.classid::text = k.classid AND l.objid::text = k.objid
               AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
             LIMIT 1), clock_timestamp());
        RETURN NULL;
      END $$;
      CREATE TRIGGER test_checkpoint_moves AFTER UPDATE ON projection_checkpoints FOR EACH ROW
        WHEN (OLD.position IS DISTINCT FROM NEW.position) EXECUTE FUNCTION test_note_checkpoint_move();`);
    for (const [key, name] of locks) {
      const [classid, objid] = key.split(':');
      await observer.query('INSERT INTO test_projection_locks VALUES ($1, $2, $3)', [name, classid, objid]);
    }

    // The processes, named to PostgreSQL.
    interface ProjectionProcess { name: string; child: ChildProcess; alive: boolean; ready: boolean; stderr: string }
    const processes = new Map<string, ProjectionProcess>();
    let started = 0;
    const start = (): void => {
      const name = `projection-process-${++started}`;
      const proc = spawn(process.execPath, ['--import', 'tsx', child, db.url, JSON.stringify(options)], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, PGAPPNAME: name } });
      const entry: ProjectionProcess = { name, child: proc, alive: true, ready: false, stderr: '' };
      proc.stdout!.on('data', (chunk: Buffer) => {
        if (!chunk.toString().includes('ready\n')) return;
        entry.ready = true;
        if (process.env['FLEET_LEDGER_DEBUG_PROJECTIONS']) process.stderr.write(`${new Date().toISOString()} ${name} ready\n`);
      });
      proc.stderr!.on('data', (chunk: Buffer) => {
        entry.stderr = (entry.stderr + chunk.toString()).slice(-4000);
        if (process.env['FLEET_LEDGER_DEBUG_PROJECTIONS']) process.stderr.write(`[${name}] ${chunk}`);
      });
      proc.on('exit', (code, signal) => {
        entry.alive = false;
        if (signal === null && code !== 0) process.stderr.write(`${name} exited ${code ?? signal}: ${entry.stderr}\n`);
      });
      processes.set(name, entry);
    };

    // Who holds each projection, sampled from pg_locks.
    const holders = new Map<string, { name: string; pid: number; since: number }>();
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        const { rows } = await observer.query<{ name: string; pid: number; key: string }>(
          `SELECT a.application_name AS name, l.pid, l.classid::text || ':' || l.objid::text AS key
             FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
            WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 1 AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())`,
        );
        const seen = new Map<string, Array<{ name: string; pid: number }>>();
        for (const row of rows) {
          const projection = locks.get(row.key);
          if (projection) seen.set(projection, [...(seen.get(projection) ?? []), row]);
        }
        for (const projection of names) {
          const now = seen.get(projection) ?? [];
          maxHolders.set(projection, Math.max(maxHolders.get(projection) ?? 0, now.length));
          const holder = now[0];
          if (!holder) holders.delete(projection);
          else if (holders.get(projection)?.pid !== holder.pid) holders.set(projection, { ...holder, since: Date.now() });
        }
        await sleep(25);
      }
    })();

    // A seeded history, appended while the processes run and die.
    const random = seededRandom(20260416);
    let appending = true;
    const appender = (async () => {
      await store.append('racks', [1, 2, 3, 4].map((r) => topology(`r${r}`, [`PDU-${r}`], [`TOR-${r}`])));
      for (const node of nodes) await store.append(`node-${node}`, [registered(node, rackOf(node))]);
      for (let round = 1; appending; round++) {
        const outcomes = nodes.map((node): [string, Outcome] => [node, silent.includes(node) ? 'timeout' : (['success', 'success', 'success', 'not-modified', 'timeout', 'refused'] as const)[Math.floor(random() * 6)]!]);
        for (const node of silent) timeoutsAppended.set(node, (timeoutsAppended.get(node) ?? 0) + 1);
        const extra: Array<[string, ProposedEvent]> = [];
        const node = nodes[4 + Math.floor(random() * (nodes.length - 4))]!;
        if (round % 5 === 0) extra.push([`node-${node}`, inventory({ manufacturer: 'HPE', model: 'ProLiant DL380 Gen10 Plus', serial: `S-${node}`, bmcModel: 'iLO 5', bmcFirmware: random() < 0.5 ? 'iLO 5 v2.72' : 'iLO 5 v2.78' }, round * 60)]);
        if (round % 6 === 0) extra.push([`node-${node}`, firmware([{ component: 'iLO 5', version: random() < 0.5 ? '2.72 Sep 04 2022' : '2.78 Jan 10 2023' }], { seconds: round * 60 })]);
        if (round % 7 === 0) extra.push([`node-${node}`, random() < 0.5 ? xid(79, 'critical', round * 60) : gpuTelemetry(random() < 0.5 ? 0 : 2, round * 60)]);
        if (round % 13 === 0) extra.push([`node-${node}`, maintenance(node, round * 60, round * 60 + 300)]);
        if (round % 17 === 0) extra.push(['operators', acknowledged(`dark:${nodes[5]}:1`)]);
        await store.append('polls-dc1', [polls(round * 60, outcomes)]);
        for (const [stream, event] of extra) await store.append(stream, [event]);
        await sleep(30);
      }
    })();

    try {
      for (let i = 0; i < 3; i++) start();
      // Interruptions: the holders of three different projections killed, and one lock session ended.
      const plan: Array<{ how: 'kill' | 'cut'; projection: string }> = [
        { how: 'kill', projection: 'liveness' },
        { how: 'cut', projection: names[1]! },
        { how: 'kill', projection: names[4]! },
        { how: 'kill', projection: names[2]! },
      ];
      const deadline = Date.now() + 60_000;
      for (const step of plan) {
        let holder = holders.get(step.projection);
        while (Date.now() < deadline) {
          holder = holders.get(step.projection);
          const entry = holder && processes.get(holder.name);
          const standing = [...processes.values()].some((p) => p.alive && p.ready && p.name !== holder?.name);
          if (holder && entry?.alive && entry.ready && standing) break;
          await sleep(50);
        }
        if (!holder) throw new Error(`nobody holds ${step.projection}`);
        await sleep(500 + random() * 1_500);
        const victim = { ...holder };
        // A kill ends every lock of the process (one session per projection); a cut, that one session.
        const held = (step.how === 'kill' ? names.filter((name) => holders.get(name)?.name === victim.name) : [step.projection]).map((name) => ({ name, pid: holders.get(name)?.pid ?? victim.pid }));
        if (step.how === 'kill') {
          processes.get(victim.name)!.child.kill('SIGKILL');
          start();
        } else await observer.query('SELECT pg_terminate_backend(pid) FROM pg_locks l JOIN test_projection_locks k ON l.classid::text = k.classid AND l.objid::text = k.objid WHERE k.name = $1 AND l.pid = $2', [step.projection, victim.pid]);
        const at = Date.now();
        for (const { name: projection, pid: before } of held) {
          while (Date.now() < deadline) {
            const next = holders.get(projection);
            if (next && next.pid !== before && (step.how === 'cut' || next.name !== victim.name)) break;
            await sleep(10);
          }
          const next = holders.get(projection);
          takeovers.push({ how: step.how, at, projection, from: victim.name, by: next?.name ?? '', lockMs: next ? next.since - at : -1, applyMs: null });
        }
        process.stderr.write(`${new Date(at).toISOString()} ${step.how} ${victim.name} (holding ${held.map((h) => h.name).join(', ')}): ${takeovers.slice(-held.length).map((t) => `${t.projection} to ${t.by} in ${t.lockMs} ms`).join('; ')}\n`);
      }
      appending = false;
      await appender;
      head = (await store.head()).position;
      const caughtUp = async (): Promise<boolean> =>
        Number((await observer.query<{ n: string }>('SELECT count(*) AS n FROM projection_checkpoints WHERE position >= $1', [head])).rows[0]!.n) === names.length;
      const caughtUpBy = Date.now() + 30_000;
      while (!(await caughtUp())) {
        if (Date.now() > caughtUpBy) {
          const { rows } = await observer.query('SELECT name, position, status, error FROM projection_checkpoints');
          throw new Error(`the projections did not catch up with the log at ${head}: ${JSON.stringify(rows)}; holders ${JSON.stringify(Object.fromEntries(holders))}`);
        }
        await sleep(100);
      }
    } finally {
      appending = false;
      await appender.catch(() => undefined);
      sampling = false;
      await sampler;
      await Promise.all(
        [...processes.values()].filter((p) => p.alive).map(
          (p) =>
            new Promise<void>((resolve) => {
              const guard = setTimeout(() => p.child.kill('SIGKILL'), 10_000);
              p.child.once('exit', () => (clearTimeout(guard), resolve()));
              p.child.kill('SIGTERM');
            }),
        ),
      );
    }

    moves = (
      await observer.query<{ name: string; from: string; to: string; mover: string; holder: string | null; at: string }>(
        `SELECT name, from_position AS from, to_position AS to, mover, holder, (extract(epoch FROM at) * 1000)::bigint AS at FROM test_checkpoint_moves ORDER BY seq`,
      )
    ).rows.map((row) => ({ name: row.name, from: Number(row.from), to: Number(row.to), mover: row.mover, holder: row.holder, at: Number(row.at) }));
    for (const takeover of takeovers) {
      const first = moves.find((move) => move.name === takeover.projection && move.mover === takeover.by && move.at >= takeover.at);
      takeover.applyMs = first ? first.at - takeover.at : null;
    }
    checkpoints = (await observer.query<{ name: string; position: string; status: string }>('SELECT name, position, status FROM projection_checkpoints')).rows.map((row) => ({ ...row, position: Number(row.position) }));
    deadLetters = Number((await observer.query<{ n: string }>('SELECT count(*) AS n FROM projection_dead_letters')).rows[0]!.n);
    misses = new Map((await observer.query<{ node_id: string; consecutive_misses: number }>('SELECT node_id, consecutive_misses FROM liveness_nodes WHERE node_id = ANY($1)', [silent])).rows.map((row) => [row.node_id, row.consecutive_misses]));
    incremental = await snapshot(store.db as never, tables);
    await new ProjectionRunner(store, fleetProjections(options)).rebuildAll();
    rebuilt = await snapshot(store.db as never, tables);
    await observer.end();
    process.stderr.write(`projections across processes: ${JSON.stringify({ head, takeovers, maxHolders: Object.fromEntries(maxHolders), moves: moves.length })}\n`);
  }, 110_000);
  afterAll(async () => {
    await store?.close();
    await drop?.();
  });

  it('each projection was applied by one process at a time: one session held its lock, and no process moved a checkpoint while another held it', () => {
    for (const name of names) expect(maxHolders.get(name)).toBe(1);
    expect(new Set(moves.map((move) => move.mover)).size).toBeGreaterThanOrEqual(3);
    expect(moves.filter((move) => move.holder !== null && move.holder !== move.mover)).toEqual([]);
  });

  it(`a killed process's projections are taken over by another process within the standby retry (${standbyRetryMs} ms) plus 2 s`, () => {
    const kills = takeovers.filter((takeover) => takeover.how === 'kill');
    expect(new Set(kills.map((takeover) => takeover.from)).size).toBe(3);
    expect(kills.length).toBeGreaterThanOrEqual(3);
    for (const takeover of kills) {
      expect(takeover.by).not.toBe('');
      expect(takeover.by).not.toBe(takeover.from);
      expect(takeover.lockMs).toBeLessThanOrEqual(standbyRetryMs + 2_000);
      expect(takeover.applyMs).not.toBeNull();
    }
  });

  it('a process whose lock session ends stops applying that projection until a process (maybe itself, on a new session) holds it again', () => {
    const cut = takeovers.find((takeover) => takeover.how === 'cut')!;
    expect(cut.by).not.toBe('');
    expect(cut.lockMs).toBeLessThanOrEqual(standbyRetryMs + 2_000);
    // That it stopped is the first rule's check: no checkpoint moved by a process while another held the lock.
  });

  it('no event was applied twice: each checkpoint moved in one chain from 0 to the head, and the read models equal a rebuild from zero', () => {
    for (const name of names) {
      const chain = moves.filter((move) => move.name === name);
      expect(chain[0]?.from).toBe(0);
      for (let i = 1; i < chain.length; i++) expect({ name, i, from: chain[i]!.from }).toEqual({ name, i, from: chain[i - 1]!.to });
      expect(chain[chain.length - 1]?.to).toBe(checkpoints.find((checkpoint) => checkpoint.name === name)!.position);
    }
    expect(checkpoints.every((checkpoint) => checkpoint.status === 'running' && checkpoint.position >= head)).toBe(true);
    expect(deadLetters).toBe(0);
    expect(Object.values(incremental).reduce((n, rows) => n + rows.length, 0)).toBeGreaterThan(nodes.length);
    expect(incremental).toEqual(rebuilt);
  });

  it('a node that never answers has exactly as many consecutive misses as the outcomes appended for it', () => {
    expect(timeoutsAppended.get(silent[0]!)).toBeGreaterThan(100);
    for (const node of silent) expect({ node, misses: misses.get(node) }).toEqual({ node, misses: timeoutsAppended.get(node) });
  });
});
