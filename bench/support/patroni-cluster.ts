/**
 * A Patroni-managed PostgreSQL cluster on loopback, in a temp folder, for the failover bench and tests: one etcd
 * member (the distributed configuration store), three PostgreSQL 15 nodes each run by its own Patroni, and HAProxy in
 * front (`primaryUrl` reaches whichever node Patroni's REST API says is the primary, `replicaUrl` a streaming
 * standby). Every port is a free loopback port; `stop()` ends every process it started and removes the folder.
 *
 * Settings (see docs/failover.md for why): Patroni `synchronous_mode` with `synchronous_mode_strict` (a commit waits
 * until a standby has it, and no standby that might lack it is promoted), `synchronous_commit` as asked (`on` by
 * default; `off` for the asynchronous test, where Patroni's synchronous mode is off too), `primary_start_timeout: 0`
 * (a primary whose postmaster died is failed over at once instead of restarted in place), `use_pg_rewind` (the old
 * primary rejoins as a standby). Short `ttl`/`loop_wait` so a failover takes seconds.
 *
 * PostgreSQL refuses to run as root: as root, Patroni (and through it every server program) runs as the `postgres`
 * user, which owns the folders. The programs come from Debian: `apt-get install -y patroni etcd-server haproxy
 * postgresql-15`.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, chownSync, createWriteStream, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync, type WriteStream } from 'node:fs';
import { createServer, connect, type Server, type Socket } from 'node:net';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { stringify as toYaml } from 'yaml';
import { findProgram, type ToolRequirement } from '../../test/support/system-tool.js';
import { freePort } from './free-port.js';

/** What the cluster needs of the machine, found; or why it cannot run and how to install it. */
export type PatroniTools = { found: { patroni: string; etcd: string; haproxy: string; pgBin: string }; reason?: undefined } | { found?: undefined; reason: string };

export const patroniInstall = 'apt-get install -y patroni etcd-server haproxy postgresql-15';

/** Looks for patroni, etcd, haproxy and a PostgreSQL bin folder with pg_rewind (newest version first). */
export function findPatroniTools(env: NodeJS.ProcessEnv = process.env): PatroniTools {
  const path = env.PATH ?? '';
  const patroni = findProgram('patroni', path);
  const etcd = findProgram('etcd', path);
  const haproxy = findProgram('haproxy', `${path}:/usr/sbin:/sbin`);
  const root = '/usr/lib/postgresql';
  const pgBin = existsSync(root)
    ? readdirSync(root)
        .filter((version) => /^\d+$/.test(version))
        .sort((a, b) => Number(b) - Number(a))
        .map((version) => join(root, version, 'bin'))
        .find((dir) => ['postgres', 'pg_ctl', 'initdb', 'pg_rewind', 'pg_basebackup'].every((program) => existsSync(join(dir, program))))
    : undefined;
  const missing = [!patroni && 'patroni', !etcd && 'etcd', !haproxy && 'haproxy', !pgBin && '/usr/lib/postgresql/<version>/bin'].filter(Boolean);
  if (missing.length > 0) return { reason: `${missing.join(', ')} not found (${patroniInstall})` };
  if (userInfo().uid === 0 && postgresIds() === null) return { reason: 'running as root and there is no postgres user to run PostgreSQL as' };
  return { found: { patroni: patroni!, etcd: etcd!, haproxy: haproxy!, pgBin: pgBin! } };
}

/**
 * The test rule for machine programs (`test/support/system-tool.ts`) applied to the Patroni cluster: skipped off CI
 * with the install command in the title when a program is missing; on CI (`.ci/run` installs them) a failure.
 */
export function patroniRequirement(env: NodeJS.ProcessEnv = process.env): ToolRequirement {
  const reason = findPatroniTools(env).reason;
  return {
    available: reason === undefined,
    runnable: reason === undefined || env.CI === 'true',
    reason,
    title: (name) => (reason ? `${name} (skipped: ${reason})` : name),
    require: () => {
      if (reason) throw new Error(`${reason}; CI installs it through .ci/run`);
    },
  };
}

function postgresIds(): { uid: number; gid: number } | null {
  try {
    return { uid: Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' })), gid: Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' })) };
  } catch {
    return null;
  }
}

export interface PatroniClusterOptions {
  /** Number of PostgreSQL nodes (default 3). */
  nodes?: number;
  /**
   * `synchronous` (default): Patroni synchronous_mode + strict, synchronous_commit `on` (or `remote_apply` with
   * `synchronousCommit`). `asynchronous`: Patroni's synchronous mode off, synchronous_commit `local` (what a plain
   * streaming setup does): an acknowledged commit may exist on the primary alone.
   */
  replication?: 'synchronous' | 'asynchronous';
  synchronousCommit?: 'on' | 'remote_apply' | 'remote_write';
  /** Patroni's leader key ttl and loop wait, seconds (default 10 and 1). */
  ttlS?: number;
  loopWaitS?: number;
  /** For asynchronous clusters: the most a standby may lag (bytes) and still be promoted (Patroni's default 1 MiB). */
  maximumLagOnFailover?: number;
  /** Progress lines (starts, failovers); default none. */
  log?: (message: string) => void;
  /** Keep the folder after stop (for a look at the logs). */
  keep?: boolean;
}

export interface PatroniNode {
  name: string;
  pgPort: number;
  /** The address the other nodes replicate from (Patroni's `connect_address`): a relay to `pgPort` the harness can cut. */
  replicationPort: number;
  restPort: number;
  dataDir: string;
  url: string;
}

export interface MemberState {
  name: string;
  role: string;
  state: string;
  timeline?: number;
  lag?: number | string;
}

export interface PatroniCluster {
  /** Superuser URL of the `postgres` database through HAProxy's primary port. */
  primaryUrl: string;
  /** Through HAProxy's replica port (any running standby). */
  replicaUrl: string;
  haproxyPort: number;
  nodes: PatroniNode[];
  base: string;
  /** The same server, another database (and optionally another user/password). */
  database(url: string, name: string, user?: { user: string; password: string }): string;
  /** The members as Patroni's REST API reports them (`GET /cluster` on any node that answers). */
  members(): Promise<MemberState[]>;
  /** The current leader's name, or null. */
  leader(): Promise<string | null>;
  /**
   * Until a leader runs, every other node streams and (synchronous clusters) one is the synchronous standby; with
   * `expectNodes` fewer than all, that many members running is enough.
   */
  waitHealthy(timeoutMs?: number, expectNodes?: number): Promise<string>;
  /** SIGKILL of the leader's postmaster. Resolves with the node and the pid killed. */
  killPrimaryPostmaster(): Promise<{ node: string; pid: number; at: number }>;
  /**
   * Until a node other than `old` leads and accepts writes through HAProxy; resolves with it. With `orRestarted`,
   * `old` itself leading again counts too (Patroni restarts a crashed primary in place when no standby may be
   * promoted: in synchronous mode, when none was confirming commits).
   */
  waitNewLeader(old: string, timeoutMs?: number, orRestarted?: boolean): Promise<string>;
  /** SIGSTOP/SIGCONT of a whole node (its Patroni and its PostgreSQL, with every backend). */
  pauseNode(name: string): void;
  resumeNode(name: string): void;
  /**
   * Cuts every replication connection to node `name` and refuses new ones until `restoreReplication`: its standbys
   * receive nothing more (a network cut, not a pause: a paused standby's socket buffers would still take the WAL).
   * Clients (HAProxy, the ledger) reach it as before.
   */
  cutReplication(name: string): void;
  restoreReplication(name: string): void;
  /** The last lines of a node's Patroni log, or of HAProxy's / etcd's. */
  logTail(name: string, lines?: number): string;
  stop(): Promise<void>;
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Clusters of this process not stopped yet, for a Ctrl-C handler (`stopEveryCluster`). */
const running = new Set<() => Promise<void>>();

/** Stops every cluster this process started and has not stopped (a bench's SIGINT handler calls it). */
export async function stopEveryCluster(): Promise<void> {
  await Promise.all([...running].map((stop) => stop()));
}

interface Started {
  name: string;
  child: ChildProcess;
  log: WriteStream;
  logPath: string;
}

/**
 * Starts etcd, the Patroni nodes and HAProxy; resolves once a leader runs and every standby streams. A port found free
 * can be taken by another program before etcd, Patroni, PostgreSQL or HAProxy binds it (the suite starts many servers
 * at once): then everything started is stopped and the cluster is started again on other ports, up to three times.
 */
export async function startPatroniCluster(options: PatroniClusterOptions = {}): Promise<PatroniCluster> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await startPatroniClusterOnce(options);
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      if (attempt >= 3 || !/Address already in use|could not bind|bind: address/i.test(message)) throw error;
      options.log?.(`a port was taken meanwhile; starting the cluster again (attempt ${attempt + 1})`);
    }
  }
}

async function startPatroniClusterOnce(options: PatroniClusterOptions): Promise<PatroniCluster> {
  const lookup = findPatroniTools();
  if (!lookup.found) throw new Error(lookup.reason);
  const tools = lookup.found;
  const log = options.log ?? (() => undefined);
  const count = options.nodes ?? 3;
  const synchronous = (options.replication ?? 'synchronous') === 'synchronous';
  const ids = userInfo().uid === 0 ? postgresIds() : null;
  const base = mkdtempSync(join(tmpdir(), 'fleet-ledger-patroni-'));
  chmodSync(base, 0o755);
  if (ids) chownSync(base, ids.uid, ids.gid);
  const started: Started[] = [];
  let stopped = false;

  const spawnLogged = (name: string, command: string, args: string[], asPostgres: boolean): Started => {
    const logPath = join(base, `${name}.log`);
    const logStream = createWriteStream(logPath, { flags: 'a' });
    const child = spawn(command, args, {
      // A group of its own: a stop reaches the process (and, for Patroni, nothing else: its postgres is a
      // session of its own), and a Ctrl-C of the terminal does not.
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
      cwd: base,
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', LC_ALL: 'C.UTF-8', LANG: 'C.UTF-8', HOME: base, PYTHONUNBUFFERED: '1' },
      ...(asPostgres && ids ? ids : {}),
    });
    child.stdout!.pipe(logStream, { end: false });
    child.stderr!.pipe(logStream, { end: false });
    const entry = { name, child, log: logStream, logPath };
    started.push(entry);
    return entry;
  };

  const nodes: PatroniNode[] = [];
  const relays = new Map<string, Relay>();
  const stop = async (): Promise<void> => {
    if (stopped) return;
    stopped = true;
    running.delete(stop);
    // Nothing here is kept: HAProxy and every Patroni are killed at once (so none starts its PostgreSQL again), each
    // postmaster is told to stop immediately (SIGQUIT ends its backends too), then etcd.
    const kill = (entry: Started, signal: NodeJS.Signals): void => {
      try {
        process.kill(-entry.child.pid!, 'SIGCONT');
        process.kill(-entry.child.pid!, signal);
      } catch {
        // gone
      }
    };
    const exited = (entry: Started): Promise<void> =>
      entry.child.exitCode !== null || entry.child.signalCode !== null ? Promise.resolve() : new Promise((resolve) => entry.child.once('exit', () => resolve()));
    const servers = started.filter((entry) => entry.name !== 'etcd');
    for (const entry of servers) kill(entry, 'SIGKILL');
    await Promise.all(servers.map(exited));
    const postmasters = nodes.map((node) => postmasterPid(node.dataDir)).filter((pid): pid is number => pid !== null);
    for (const pid of postmasters) {
      for (const signal of ['SIGCONT', 'SIGQUIT'] as const) {
        try {
          process.kill(pid, signal);
        } catch {
          // gone
        }
      }
    }
    for (const deadline = Date.now() + 10_000; postmasters.some(alive) && Date.now() < deadline; ) await sleep(100);
    for (const pid of postmasters.filter(alive)) process.kill(pid, 'SIGKILL');
    for (const entry of started.filter((candidate) => candidate.name === 'etcd')) {
      kill(entry, 'SIGTERM');
      await exited(entry);
    }
    for (const relay of relays.values()) await relay.close();
    for (const entry of started) entry.log.end();
    if (!options.keep) rmSync(base, { recursive: true, force: true });
    else log(`kept ${base}`);
  };

  running.add(stop);
  try {
    // etcd: one member, its client and peer ports on loopback.
    const etcdClient = await freePort();
    const etcdPeer = await freePort();
    const etcdDir = join(base, 'etcd');
    const etcd = spawnLogged('etcd', tools.etcd, [
      '--name', 'e0', '--data-dir', etcdDir,
      '--listen-client-urls', `http://127.0.0.1:${etcdClient}`, '--advertise-client-urls', `http://127.0.0.1:${etcdClient}`,
      '--listen-peer-urls', `http://127.0.0.1:${etcdPeer}`, '--initial-advertise-peer-urls', `http://127.0.0.1:${etcdPeer}`,
      '--initial-cluster', `e0=http://127.0.0.1:${etcdPeer}`, '--initial-cluster-state', 'new', '--initial-cluster-token', `fleet-ledger-${etcdClient}`,
    ], false);
    await waitFor(`etcd on ${etcdClient}`, 30_000, async () => {
      if (etcd.child.exitCode !== null) throw new Error(`etcd exited: ${tail(etcd.logPath)}`);
      const answer = await fetch(`http://127.0.0.1:${etcdClient}/health`, { signal: AbortSignal.timeout(1000) }).then((r) => r.json() as Promise<{ health?: string }>, () => null);
      return answer?.health === 'true';
    });
    log(`etcd on 127.0.0.1:${etcdClient}`);

    const ttl = options.ttlS ?? 10;
    const loopWait = options.loopWaitS ?? 1;
    const scope = `fleet-ledger-${etcdClient}`;
    for (let i = 0; i < count; i += 1) {
      const name = `pg${i + 1}`;
      const pgPort = await freePort();
      const restPort = await freePort();
      const relay = new Relay(pgPort);
      const replicationPort = await relay.listen();
      relays.set(name, relay);
      const nodeDir = join(base, name);
      mkdirSync(nodeDir, { mode: 0o700 });
      if (ids) chownSync(nodeDir, ids.uid, ids.gid);
      const dataDir = join(nodeDir, 'data');
      const config = {
        scope,
        name,
        log: { level: 'INFO', format: '%(asctime)s %(levelname)s: %(message)s' },
        restapi: { listen: `127.0.0.1:${restPort}`, connect_address: `127.0.0.1:${restPort}` },
        etcd3: { host: `127.0.0.1:${etcdClient}` },
        bootstrap: {
          dcs: {
            ttl,
            loop_wait: loopWait,
            retry_timeout: Math.max(1, Math.floor((ttl - loopWait) / 2) - 1),
            maximum_lag_on_failover: options.maximumLagOnFailover ?? 1_048_576,
            synchronous_mode: synchronous,
            synchronous_mode_strict: synchronous,
            primary_start_timeout: 0,
            postgresql: {
              use_pg_rewind: true,
              use_slots: true,
              parameters: {
                synchronous_commit: synchronous ? options.synchronousCommit ?? 'on' : 'local',
                wal_level: 'replica',
                wal_log_hints: 'on',
                hot_standby: 'on',
                max_connections: 300,
                max_wal_senders: 10,
                max_replication_slots: 10,
                wal_keep_size: '256MB',
                shared_buffers: '64MB',
                // These clusters live for one run; a SIGKILLed postmaster does not lose the OS's page cache.
                // (full_page_writes stays on: pg_rewind, which brings a diverged old primary back, requires it.)
                fsync: 'off',
                wal_receiver_status_interval: '1s',
                hot_standby_feedback: 'on',
              },
            },
          },
          initdb: [{ encoding: 'UTF8' }, { locale: 'C.UTF-8' }],
        },
        postgresql: {
          listen: `127.0.0.1:${pgPort}`,
          connect_address: `127.0.0.1:${replicationPort}`,
          data_dir: dataDir,
          bin_dir: tools.pgBin,
          pgpass: join(nodeDir, 'pgpass'),
          authentication: {
            superuser: { username: 'postgres', password: 'postgres' },
            replication: { username: 'replicator', password: 'replicator' },
            rewind: { username: 'postgres', password: 'postgres' },
          },
          parameters: { unix_socket_directories: nodeDir },
          pg_hba: ['local all all trust', 'host all all 127.0.0.1/32 trust', 'host replication all 127.0.0.1/32 trust'],
        },
        tags: { nofailover: false, noloadbalance: false, clonefrom: false, nosync: false },
      };
      const configPath = join(nodeDir, 'patroni.yml');
      writeFileSync(configPath, toYaml(config));
      if (ids) chownSync(configPath, ids.uid, ids.gid);
      nodes.push({ name, pgPort, replicationPort, restPort, dataDir, url: `postgres://postgres@127.0.0.1:${pgPort}/postgres` });
      spawnLogged(name, tools.patroni, [configPath], true);
      // The first node bootstraps alone, so the others clone it rather than race for the initialize key.
      if (i === 0) {
        await waitFor(`${name} to bootstrap`, 120_000, async () => {
          checkAlive();
          const state = await restJson<{ role?: string; state?: string }>(restPort, '/patroni');
          return state?.state === 'running' && (state.role === 'master' || state.role === 'primary');
        });
        log(`${name} leads (postgres on 127.0.0.1:${pgPort}, rest ${restPort})`);
      }
    }

    const haproxyPort = await freePort();
    const replicaPort = await freePort();
    const haproxyConfig = [
      'global',
      '  maxconn 2000',
      'defaults',
      '  mode tcp',
      '  retries 2',
      '  timeout connect 2s',
      '  timeout client 30m',
      '  timeout server 30m',
      '  timeout check 1s',
      '  default-server inter 500ms fastinter 250ms downinter 500ms fall 2 rise 2 on-marked-down shutdown-sessions',
      'listen primary',
      `  bind 127.0.0.1:${haproxyPort}`,
      '  option httpchk OPTIONS /primary',
      '  http-check expect status 200',
      ...nodes.map((node) => `  server ${node.name} 127.0.0.1:${node.pgPort} maxconn 500 check port ${node.restPort}`),
      'listen replicas',
      `  bind 127.0.0.1:${replicaPort}`,
      '  balance roundrobin',
      '  option httpchk OPTIONS /replica',
      '  http-check expect status 200',
      ...nodes.map((node) => `  server ${node.name} 127.0.0.1:${node.pgPort} maxconn 500 check port ${node.restPort}`),
      '',
    ].join('\n');
    const haproxyPath = join(base, 'haproxy.cfg');
    writeFileSync(haproxyPath, haproxyConfig);
    const haproxy = spawnLogged('haproxy', tools.haproxy, ['-db', '-f', haproxyPath], false);
    await sleep(300);
    if (haproxy.child.exitCode !== null) throw new Error(`haproxy exited: ${tail(haproxy.logPath)}`);

    const cluster: PatroniCluster = {
      primaryUrl: `postgres://postgres@127.0.0.1:${haproxyPort}/postgres`,
      replicaUrl: `postgres://postgres@127.0.0.1:${replicaPort}/postgres`,
      haproxyPort,
      nodes,
      base,
      database(url, name, user) {
        const parsed = new URL(url);
        parsed.pathname = `/${name}`;
        if (user) {
          parsed.username = encodeURIComponent(user.user);
          parsed.password = encodeURIComponent(user.password);
        }
        return parsed.toString();
      },
      members,
      async leader() {
        const all = await members();
        return all.find((member) => isLeaderRole(member.role) && member.state === 'running')?.name ?? null;
      },
      async waitHealthy(timeoutMs = 120_000, expectNodes = count) {
        let seen: MemberState[] = [];
        let leaderName = '';
        await waitFor('the cluster to be healthy', timeoutMs, async () => {
          checkAlive();
          seen = await members();
          const leading = seen.find((member) => isLeaderRole(member.role) && member.state === 'running');
          const streaming = seen.filter((member) => !isLeaderRole(member.role) && (member.state === 'streaming' || member.state === 'running'));
          const syncOk = !synchronous || seen.some((member) => member.role === 'sync_standby' && (member.state === 'streaming' || member.state === 'running'));
          if (!leading || streaming.length < expectNodes - 1 || !syncOk) return false;
          leaderName = leading.name;
          // HAProxy must route to it, and it must take a write (a synchronous commit needs its standby).
          return writable(cluster.primaryUrl);
        }, () => JSON.stringify(seen));
        return leaderName;
      },
      async killPrimaryPostmaster() {
        const name = await cluster.leader();
        if (!name) throw new Error(`no leader to kill: ${JSON.stringify(await members())}`);
        const node = nodes.find((candidate) => candidate.name === name)!;
        const pid = postmasterPid(node.dataDir);
        if (pid === null) throw new Error(`${name} leads but has no running postmaster`);
        process.kill(pid, 'SIGKILL');
        log(`SIGKILL postmaster ${pid} of ${name}`);
        return { node: name, pid, at: Date.now() };
      },
      async waitNewLeader(old, timeoutMs = 90_000, orRestarted = false) {
        let seen: MemberState[] = [];
        let found = '';
        await waitFor(orRestarted ? 'a leader' : `a leader other than ${old}`, timeoutMs, async () => {
          checkAlive();
          seen = await members();
          const leading = seen.find((member) => isLeaderRole(member.role) && member.state === 'running' && (orRestarted || member.name !== old));
          if (!leading) return false;
          found = leading.name;
          return writable(cluster.primaryUrl);
        }, () => JSON.stringify(seen));
        log(`${found} leads`);
        return found;
      },
      pauseNode(name) {
        signalNode(name, 'SIGSTOP');
      },
      resumeNode(name) {
        signalNode(name, 'SIGCONT');
      },
      cutReplication(name) {
        const relay = relays.get(name);
        if (!relay) throw new Error(`no node ${name}`);
        relay.cut();
        log(`replication from ${name} cut`);
      },
      restoreReplication(name) {
        relays.get(name)?.restore();
        log(`replication from ${name} restored`);
      },
      logTail(name, lines = 40) {
        const entry = started.find((candidate) => candidate.name === name);
        return entry ? tail(entry.logPath, lines) : '';
      },
      stop,
    };

    await cluster.waitHealthy(180_000);
    log(`cluster healthy: ${JSON.stringify(await members())}; primary through haproxy 127.0.0.1:${haproxyPort}`);
    return cluster;
  } catch (error) {
    const logs = started.map((entry) => `--- ${entry.name}\n${tail(entry.logPath, 15)}`).join('\n');
    await stop();
    throw new Error(`${(error as Error).message}\n${logs}`);
  }

  function checkAlive(): void {
    for (const entry of started) {
      if (entry.child.exitCode !== null && !stopped) throw new Error(`${entry.name} exited (${entry.child.exitCode}): ${tail(entry.logPath)}`);
    }
  }

  async function members(): Promise<MemberState[]> {
    for (const node of nodes) {
      const answer = await restJson<{ members?: MemberState[] }>(node.restPort, '/cluster');
      if (answer?.members) return answer.members;
    }
    return [];
  }

  function signalNode(name: string, signal: NodeJS.Signals): void {
    const node = nodes.find((candidate) => candidate.name === name);
    const entry = started.find((candidate) => candidate.name === name);
    if (!node || !entry) throw new Error(`no node ${name}`);
    const targets = [entry.child.pid!];
    const pid = postmasterPid(node.dataDir);
    if (pid !== null) targets.push(pid);
    for (const target of targets) {
      try {
        // The postmaster's own group: it and its backends, walsender and walreceiver.
        process.kill(-target, signal);
      } catch {
        try {
          process.kill(target, signal);
        } catch {
          // gone
        }
      }
    }
    // Backends run in the postmaster's group only when it leads one; signal its children by their parent too.
    if (pid !== null) {
      for (const child of childrenOf(pid)) {
        try {
          process.kill(child, signal);
        } catch {
          // gone
        }
      }
    }
  }
}

/**
 * A TCP relay to a node's PostgreSQL for the other nodes' replication connections, which the harness can cut: every
 * open connection destroyed and new ones closed at once until restored.
 */
class Relay {
  readonly #server: Server;
  readonly #sockets = new Set<Socket>();
  #cut = false;

  constructor(private readonly port: number) {
    this.#server = createServer((client) => {
      client.on('error', () => undefined);
      if (this.#cut) {
        client.destroy();
        return;
      }
      const server = connect(this.port, '127.0.0.1');
      server.on('error', () => undefined);
      for (const socket of [client, server]) {
        this.#sockets.add(socket);
        socket.on('close', () => {
          this.#sockets.delete(socket);
          client.destroy();
          server.destroy();
        });
      }
      client.pipe(server);
      server.pipe(client);
    });
  }

  listen(): Promise<number> {
    return new Promise((resolve) => this.#server.listen(0, '127.0.0.1', () => resolve((this.#server.address() as { port: number }).port)));
  }

  cut(): void {
    this.#cut = true;
    for (const socket of this.#sockets) socket.destroy();
  }

  restore(): void {
    this.#cut = false;
  }

  async close(): Promise<void> {
    this.cut();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }
}

/** The process runs (a zombie, ended but not yet reaped by its new parent, does not). */
function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    try {
      process.kill(pid, 0);
      return true;
    } catch {
      return false;
    }
  }
}

function isLeaderRole(role: string): boolean {
  return role === 'leader' || role === 'master' || role === 'primary';
}

/** The pids whose parent is `pid` (from /proc). */
function childrenOf(pid: number): number[] {
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const parent = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (parent === pid) found.push(Number(entry));
    } catch {
      // gone
    }
  }
  return found;
}

/** The running postmaster of `dataDir`, from its pid file; null when none runs. */
export function postmasterPid(dataDir: string): number | null {
  try {
    const pid = Number(readFileSync(join(dataDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
    if (!Number.isInteger(pid) || pid <= 0) return null;
    process.kill(pid, 0);
    return pid;
  } catch {
    return null;
  }
}

async function restJson<T>(port: number, path: string): Promise<T | null> {
  try {
    const response = await fetch(`http://127.0.0.1:${port}${path}`, { signal: AbortSignal.timeout(1500) });
    return (await response.json()) as T;
  } catch {
    return null;
  }
}

/**
 * True when a write commits through `url` within 3 s: HAProxy routes to a primary and its commits are acknowledged.
 * The deadline is the client's, never `statement_timeout`: a cancelled wait for the synchronous standby answers the
 * COMMIT as a success (with a warning), which would call a primary without its standby writable.
 */
async function writable(url: string): Promise<boolean> {
  const { default: pg } = await import('pg');
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2000 });
  client.on('error', () => undefined);
  let timer: NodeJS.Timeout | undefined;
  try {
    const write = (async () => {
      await client.connect();
      await client.query('CREATE TABLE IF NOT EXISTS harness_probe (at timestamptz)');
      await client.query('INSERT INTO harness_probe VALUES (now())');
      return true;
    })();
    const late = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), 3000)));
    return await Promise.race([write.catch(() => false), late]);
  } finally {
    clearTimeout(timer);
    await client.end().catch(() => undefined);
  }
}

async function waitFor(what: string, timeoutMs: number, ready: () => Promise<boolean>, seen: () => string = () => ''): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await ready()) return;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs / 1000} s waiting for ${what} ${seen()}`);
    await sleep(250);
  }
}

function tail(path: string, lines = 25): string {
  try {
    return readFileSync(path, 'utf8').split('\n').slice(-lines).join('\n');
  } catch {
    return '(no log)';
  }
}
