import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, inject, it } from 'vitest';
import { DataDirLock, startEmbeddedPostgres } from '../../src/ledger/index.js';

describe('embedded backend', () => {
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
});
