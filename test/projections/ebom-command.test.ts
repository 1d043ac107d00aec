import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EventStore } from '../../src/ledger/index.js';
import { backends, freshDatabase } from '../support/backends.js';

// The command line from its sources (tsx): `test/cli/built-cli.test.ts` runs the compiled one.
const main = ['--import', 'tsx', fileURLToPath(new URL('../../src/cli/main.ts', import.meta.url))];
const example = fileURLToPath(new URL('../../examples/ebom.csv', import.meta.url));

function cli(args: string[], databaseUrl: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [...main, ...args], { env: { ...process.env, DATABASE_URL: databaseUrl, USER: 'carol' }, timeout: 60_000 }, (error, stdout, stderr) => {
      resolve({ code: error ? Number((error as { code?: number }).code ?? 1) : 0, stdout, stderr });
    });
  });
}

// The command line against the server backend only: the embedded one is the same SQL (the library tests cover
// both), and each spawn costs a process start on a shared CPU.
const server = backends().find((b) => b.name === 'server')!;

describe.skipIf(!server.adminUrl)('fleet-ledger ebom import and rebuild', () => {
  let database: { url: string; drop: () => Promise<void> };
  let folder: string;
  beforeAll(async () => {
    database = await freshDatabase(server.adminUrl!);
    folder = await mkdtemp(join(tmpdir(), 'ebom-command-'));
  });
  afterAll(async () => {
    await database?.drop();
    if (folder) await rm(folder, { recursive: true, force: true });
  });

  it('a bad row fails the command with its line, and a good file is imported by $USER', async () => {
    const bad = join(folder, 'bad.csv');
    await writeFile(bad, 'nodeId,site,rack,manufacturer,model,serial\nok1,dc1,r1,HPE,DL380,S1\n"bad id",dc1,r1,HPE,DL380,S2\n');
    const refused = await cli(['ebom', 'import', bad], database.url);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('line 3 nodeId: node ids use letters, digits and . _ : - only');

    const imported = await cli(['ebom', 'import', example, '--json'], database.url);
    expect(imported.code).toBe(0);
    expect(JSON.parse(imported.stdout)).toMatchObject({ ok: true, rows: 4 });
    const store = await EventStore.open({ connectionString: database.url, migrate: false });
    try {
      const events = await store.readAll();
      expect(events).toHaveLength(5);
      for (const event of events) expect(event.actor).toEqual({ kind: 'operator', id: 'carol' });
    } finally {
      await store.close();
    }
  });

  it('rebuild replays a projection from zero with a progress bar on stderr, and refuses an unknown name', async () => {
    const rebuilt = await cli(['rebuild', 'drift'], database.url);
    expect(rebuilt.code).toBe(0);
    expect(rebuilt.stdout).toMatch(/^drift: rebuilt to position 5 \(4 events in [\d.]+ s\)$/m);
    expect(rebuilt.stderr).toContain('100%');
    expect((await cli(['rebuild', 'no-such-projection'], database.url)).code).toBe(2);
  });

  it('rebuild takes the page size and the rows held in memory from its flags (a small machine gets the same tables), and refuses a size that is not a whole number', async () => {
    const db = new pg.Client({ connectionString: database.url });
    await db.connect();
    const tables = async (): Promise<unknown> => [
      (await db.query(`SELECT * FROM drift_nodes ORDER BY node_id`)).rows,
      (await db.query(`SELECT * FROM inventory_nodes ORDER BY node_id`)).rows,
    ];
    try {
      const whole = await cli(['rebuild', '--all'], database.url);
      expect(whole.code).toBe(0);
      const before = await tables();
      const small = await cli(['rebuild', '--all', '--page-events', '1', '--page-mb', '1', '--max-held-rows', '0'], database.url);
      expect(small.code).toBe(0);
      expect(small.stdout).toMatch(/^drift: rebuilt to position 5 \(4 events in [\d.]+ s\)$/m);
      expect(await tables()).toEqual(before);
      // One progress line per projection and page: pages of one event show more of them than one page of all.
      const updates = (stderr: string): number => stderr.split('\r').length;
      expect(updates(small.stderr)).toBeGreaterThan(updates(whole.stderr));
      for (const [flag, value] of [['--page-events', '0'], ['--page-mb', '1.5'], ['--max-held-rows', '-1'], ['--page-events', 'many']]) {
        const refused = await cli(['rebuild', '--all', `${flag}=${value}`], database.url);
        expect(refused.code).toBe(2);
        expect(refused.stderr).toContain(`${flag} must be a whole number`);
      }
    } finally {
      await db.end();
    }
  });
});
