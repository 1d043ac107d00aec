import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { describe, expect, inject, it } from 'vitest';
import { folderClosedToOthers } from '../../src/ledger/embedded-postgres.js';
import { DataDirLock, postmasterPid, processStartTime, startEmbeddedPostgres } from '../../src/ledger/index.js';

describe('embedded backend', () => {
  // CI and this project's machines run the tests as root, where PostgreSQL runs as the postgres user.
  it.skipIf(userInfo().uid !== 0)('as root, a data folder inside a folder closed to others is refused, typed, naming that folder, and nothing is started', async () => {
    const closed = mkdtempSync(join(tmpdir(), 'fleet-ledger-closed-')); // 0700, as `mktemp -d` makes it
    try {
      expect(folderClosedToOthers(join(closed, 'data'))).toBe(closed);
      expect(folderClosedToOthers(tmpdir())).toBeNull();
      const refused = startEmbeddedPostgres({ dataDir: join(closed, 'data') });
      await expect(refused).rejects.toMatchObject({ code: 'LEDGER_EMBEDDED_START_FAILED' });
      await expect(refused).rejects.toThrow(`cannot enter ${closed}`);
      expect(DataDirLock.read(join(closed, 'data'))).toBeNull();
    } finally {
      rmSync(closed, { recursive: true, force: true });
    }
  });

  it('a second process cannot open a data folder another live process owns', async () => {
    // The test run's own embedded PostgreSQL is owned by the vitest main process.
    await expect(startEmbeddedPostgres({ dataDir: inject('embeddedDataDir') })).rejects.toMatchObject({ code: 'LEDGER_DATA_DIR_LOCKED' });
  });

  it('a lock left by a process that no longer exists is taken over', () => {
    const dir = mkdtempSync(join(tmpdir(), 'fleet-ledger-lock-'));
    try {
      writeFileSync(DataDirLock.file(dir), JSON.stringify({ pid: 2 ** 22 + 17, port: 1, startedAt: 'then' }));
      const lock = DataDirLock.acquire(dir, 5555);
      expect(DataDirLock.read(dir)).toMatchObject({ pid: process.pid, port: 5555 });
      lock.release();
      expect(DataDirLock.read(dir)).toBeNull();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  const inFolder = (run: (dir: string) => void) => () => {
    const dir = mkdtempSync(join(tmpdir(), 'fleet-ledger-lock-'));
    try {
      run(dir);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  };

  it(
    "a lock whose pid now belongs to another process (the owner died, the pid was reused) is stale: taken over",
    inFolder((dir) => {
      // The parent of this worker is alive, but it is not the process that wrote the lock: its start time differs.
      expect(processStartTime(process.ppid)).not.toBeNull();
      writeFileSync(DataDirLock.file(dir), JSON.stringify({ pid: process.ppid, port: 1, startedAt: 'then', processStart: '1' }));
      const lock = DataDirLock.acquire(dir, 5556);
      expect(DataDirLock.read(dir)).toMatchObject({ pid: process.pid, port: 5556, processStart: processStartTime(process.pid) });
      lock.release();
    }),
  );

  it(
    'a live owner keeps its lock: the same pid with the same start time is refused',
    inFolder((dir) => {
      writeFileSync(DataDirLock.file(dir), JSON.stringify({ pid: process.ppid, port: 1, startedAt: 'then', processStart: processStartTime(process.ppid) }));
      expect(() => DataDirLock.acquire(dir, 5557)).toThrow(expect.objectContaining({ code: 'LEDGER_DATA_DIR_LOCKED' }));
    }),
  );

  it(
    'taking over a stale lock is exclusive: while another process holds the takeover guard, the start is refused, the lock left alone',
    inFolder((dir) => {
      const stale = JSON.stringify({ pid: 2 ** 22 + 17, port: 1, startedAt: 'then' });
      writeFileSync(DataDirLock.file(dir), stale);
      writeFileSync(`${DataDirLock.file(dir)}.takeover`, '');
      expect(() => DataDirLock.acquire(dir, 5558)).toThrow(/being taken over by another process/);
      expect(JSON.stringify(DataDirLock.read(dir))).toBe(stale);
    }),
  );

  it(
    'a lock file caught between its creation and its content is a live owner, not a stale lock',
    inFolder((dir) => {
      writeFileSync(DataDirLock.file(dir), '');
      expect(() => DataDirLock.acquire(dir, 5559)).toThrow(/being locked by another process/);
    }),
  );

  it(
    'a stale postmaster.pid naming a live process that is not a postgres of this folder is never signalled',
    inFolder((dir) => {
      const cluster = join(dir, 'pg');
      mkdirSync(cluster);
      writeFileSync(join(cluster, 'postmaster.pid'), `${process.ppid}\n${cluster}\n0\n5432\n`);
      expect(postmasterPid(cluster)).toBeNull();
    }),
  );
});
