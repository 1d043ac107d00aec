import { closeSync, openSync, readFileSync, rmSync, statSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { LedgerError } from './ledger-error.js';

export interface DataDirLockInfo {
  pid: number;
  port: number;
  startedAt: string;
  /** When the owner process started, as the kernel counts it (Linux); tells a live owner from a reused pid. */
  processStart?: string;
}

/** How long a lock file may stay unreadable (its owner between creating and writing it) before it counts as stale. */
const WRITING_GRACE_MS = 5_000;
/** How long a takeover may take before its guard counts as left by a process that died in the middle of one. */
const TAKEOVER_GRACE_MS = 10_000;

/** The start time of process `pid` in clock ticks since boot (field 22 of /proc/<pid>/stat), or null where unknown. */
export function processStartTime(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) may hold spaces and parentheses: count fields after its closing parenthesis.
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19] ?? null;
  } catch {
    return null;
  }
}

/** The process that wrote `holder` still runs: its pid answers, and where the start time is known it is the same one. */
function alive(holder: DataDirLockInfo): boolean {
  try {
    process.kill(holder.pid, 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  if (holder.processStart === undefined) return true;
  const now = processStartTime(holder.pid);
  return now === null || now === holder.processStart;
}

function ageMs(path: string): number | null {
  try {
    return Date.now() - statSync(path).mtimeMs;
  } catch {
    return null;
  }
}

/**
 * The lock file that makes one process the owner of an embedded data folder. Created with O_EXCL. A lock left by a
 * process that no longer exists (killed with SIGKILL; its pid now free or another process's) is taken over, a live
 * owner's never. Taking over is itself exclusive (a guard file created with O_EXCL): two starts that find the same
 * stale lock cannot both remove it and each believe it owns the folder.
 */
export class DataDirLock {
  private constructor(
    readonly path: string,
    readonly info: DataDirLockInfo,
  ) {}

  static file(dataDir: string): string {
    return join(dataDir, 'fleet-ledger.lock');
  }

  static read(dataDir: string): DataDirLockInfo | null {
    try {
      return JSON.parse(readFileSync(DataDirLock.file(dataDir), 'utf8')) as DataDirLockInfo;
    } catch {
      return null;
    }
  }

  static acquire(dataDir: string, port: number): DataDirLock {
    const path = DataDirLock.file(dataDir);
    const start = processStartTime(process.pid);
    const info: DataDirLockInfo = { pid: process.pid, port, startedAt: new Date().toISOString(), ...(start !== null ? { processStart: start } : {}) };
    const create = (): DataDirLock | null => {
      try {
        const fd = openSync(path, 'wx', 0o600);
        writeSync(fd, JSON.stringify(info));
        closeSync(fd);
        return new DataDirLock(path, info);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
        return null;
      }
    };
    const locked = (pid: number, why: string): LedgerError => new LedgerError('LEDGER_DATA_DIR_LOCKED', { dataDir, pid }, `the data folder ${dataDir} ${why}`);

    const fresh = create();
    if (fresh) return fresh;
    const holder = DataDirLock.read(dataDir);
    if (holder && holder.pid !== process.pid && alive(holder)) throw locked(holder.pid, `is in use by process ${holder.pid}`);
    if (!holder && (ageMs(path) ?? Number.POSITIVE_INFINITY) < WRITING_GRACE_MS) throw locked(-1, 'is being locked by another process right now');

    // Stale: take it over under the guard, checking again once the guard is ours.
    const guard = `${path}.takeover`;
    const guardAge = ageMs(guard);
    if (guardAge !== null && guardAge > TAKEOVER_GRACE_MS) rmSync(guard, { force: true });
    let guardFd: number;
    try {
      guardFd = openSync(guard, 'wx', 0o600);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'EEXIST') throw locked(-1, 'is being taken over by another process right now');
      throw error;
    }
    try {
      const again = DataDirLock.read(dataDir);
      if (again && again.pid !== process.pid && alive(again)) throw locked(again.pid, `is in use by process ${again.pid}`);
      if (JSON.stringify(again) !== JSON.stringify(holder)) throw locked(again?.pid ?? -1, 'changed hands while this process looked at it');
      rmSync(path, { force: true });
      const taken = create();
      if (!taken) throw locked(-1, 'was taken by another process first');
      return taken;
    } finally {
      closeSync(guardFd);
      rmSync(guard, { force: true });
    }
  }

  release(): void {
    const holder = DataDirLock.read(this.path.slice(0, -'/fleet-ledger.lock'.length));
    if (holder?.pid === process.pid) rmSync(this.path, { force: true });
  }
}
