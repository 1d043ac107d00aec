import { closeSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { LedgerError } from './ledger-error.js';

export interface DataDirLockInfo {
  pid: number;
  port: number;
  startedAt: string;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * The lock file that makes one process the owner of an embedded data folder. Created with O_EXCL; a lock
 * left by a process that no longer exists (killed with SIGKILL) is taken over, a live owner's never.
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
    const info: DataDirLockInfo = { pid: process.pid, port, startedAt: new Date().toISOString() };
    for (let attempt = 0; attempt < 2; attempt += 1) {
      try {
        const fd = openSync(path, 'wx', 0o600);
        writeSync(fd, JSON.stringify(info));
        closeSync(fd);
        return new DataDirLock(path, info);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
        const holder = DataDirLock.read(dataDir);
        if (holder && holder.pid !== process.pid && alive(holder.pid)) {
          throw new LedgerError('LEDGER_DATA_DIR_LOCKED', { dataDir, pid: holder.pid }, `the data folder ${dataDir} is in use by process ${holder.pid}`);
        }
        rmSync(path, { force: true });
      }
    }
    throw new LedgerError('LEDGER_DATA_DIR_LOCKED', { dataDir, pid: -1 }, `could not take the lock on ${dataDir}`);
  }

  release(): void {
    const holder = DataDirLock.read(this.path.slice(0, -'/fleet-ledger.lock'.length));
    if (holder?.pid === process.pid) rmSync(this.path, { force: true });
  }
}
