/**
 * A `start` that fails after its embedded PostgreSQL is up (here: the simulated fleet's registration is refused)
 * says why in one clear line, exits non-zero, and stops the PostgreSQL it started: nothing keeps the port or the
 * data folder after it.
 */
import { spawn } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort } from '../../bench/support/free-port.js';

const main = fileURLToPath(new URL('../../src/cli/main.ts', import.meta.url));

/** Whether anything accepts connections on the port (the embedded PostgreSQL, while it runs). */
function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    socket.once('connect', () => (socket.destroy(), resolve(true)));
    socket.once('error', () => resolve(false));
  });
}

describe('a start that fails', { timeout: 180_000 }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'fl-failed-start-'));
  chmodSync(dir, 0o755); // as root, PostgreSQL runs as the postgres user, which must enter the folder
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('a start whose fleet registration fails stops its embedded PostgreSQL and prints a clear message, no stack trace', async () => {
    // A site id the simulator takes but the ledger's schema refuses (site ids start with a letter or digit).
    const scenario = join(dir, 'refused.yaml');
    writeFileSync(scenario, 'name: refused\nfleet:\n  mix:\n    - profile: dell\nsites:\n  - id: _lab\n    racks: 1\n    nodesPerRack: 4\n');
    const [apiPort, pgPort] = [await freePort(), await freePort()];
    const env: Record<string, string | undefined> = { ...process.env };
    delete env.DATABASE_URL;
    const child = spawn(process.execPath, ['--import', 'tsx', main, 'start', '--scenario', scenario, '--port', String(apiPort), '--pg-port', String(pgPort), '--data-dir', join(dir, 'data')], {
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
      env,
    });
    let stderr = '';
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    try {
      expect(output + stderr).toContain('ledger up');
      expect(await listening(pgPort)).toBe(false);
      expect(code).toBe(1);
      expect(stderr).toMatch(/fleet-ledger start: registering simulated node bmc-\d+ was refused: .*site/);
      expect(stderr).toContain('not started; everything it had started is stopped');
      expect(stderr).not.toMatch(/\n\s+at /);
    } finally {
      // Whatever the verdict, nothing of this test outlives it.
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        // already gone
      }
    }
  });
});
