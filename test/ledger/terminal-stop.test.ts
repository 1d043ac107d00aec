/**
 * Ctrl-C in a terminal goes to the whole foreground process group. The embedded PostgreSQL runs in a group of its
 * own, so the signal reaches fleet-ledger only: it stops its parts in order (the poller's last outcomes flushed into
 * the ledger) and stops PostgreSQL last, leaving no postmaster behind.
 */
import { spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort } from '../../bench/support/free-port.js';

const main = fileURLToPath(new URL('../../src/cli/main.ts', import.meta.url));


describe('Ctrl-C in a terminal', { timeout: 180_000 }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'fl-terminal-stop-'));
  chmodSync(dir, 0o755); // as root, PostgreSQL runs as the postgres user, which must enter the folder
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('reaches fleet-ledger only: every part stops without an error, PostgreSQL last, and no postmaster is left', async () => {
    const port = await freePort();
    // detached: the child leads a process group, as a shell's foreground job does.
    const child = spawn(process.execPath, ['--unhandled-rejections=strict', '--import', 'tsx', main, 'start', '--bmcs', '32', '--interval', '5', '--port', String(port), '--data-dir', join(dir, 'data')], {
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: Object.fromEntries(Object.entries(process.env).filter(([name]) => name !== 'DATABASE_URL')),
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    let gone = false;
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => ((gone = true), resolve(code))));
    // Running, and the poller has outcomes to flush at the stop.
    const deadline = Date.now() + 120_000;
    while (!/"healthy":\d+/.test(output)) {
      if (gone || Date.now() > deadline) throw new Error(`no fleet report ${gone ? '(the process exited)' : 'within 120 s'}:\n${output.slice(-3000)}`);
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
    process.kill(-child.pid!, 'SIGINT'); // the whole group, as the terminal does
    expect(await exited).toBe(0);
    const problems = output.split('\n').filter((line) => /"level":(40|50|60)/.test(line) || /ECONNREFUSED|append transaction failed/.test(line));
    expect(problems).toEqual([]);
    expect(output).toContain('stopped cleanly');
    expect(existsSync(join(dir, 'data', 'pg', 'postmaster.pid'))).toBe(false);
  });
});
