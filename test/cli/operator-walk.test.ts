/**
 * The README's operator walk, as written, with the operator token alone: the demo is started as the README says
 * (`start --bmcs 32 --interval 5`, tokens printed at start), the walk's commands are read from the README's operator
 * block and run one by one as processes with only `FLEET_LEDGER_TOKEN=<operator token>`; each placeholder is filled
 * from what an earlier command of the walk printed (the alarm id from `alarms list`, the node from `nodes --rack`, the
 * latched BMC from `nodes --latched`) or from what `start` printed (the control URL). Every command must succeed.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliArguments } from '../../bench/support/cli-entry.js';
import { freePort } from '../../bench/support/free-port.js';

const root = fileURLToPath(new URL('../../', import.meta.url));

/** The commands of the README's operator block: continuation lines joined, comments and the `export` line dropped. */
function operatorWalk(readme: string): string[] {
  const start = readme.indexOf('**Operator** (the operator token alone)');
  if (start < 0) throw new Error('the README has no operator walk ("**Operator** (the operator token alone)")');
  const block = /```sh\n([\s\S]*?)```/.exec(readme.slice(start))![1]!;
  const lines = block.replace(/\\\n\s*/g, '').split('\n');
  return lines.map((line) => line.replace(/\s+#.*$/, '').trim()).filter((line) => line.startsWith('fleet-ledger '));
}

/** Splits a command line as a shell would for the walk's commands (double quotes, no escapes). */
function words(line: string): string[] {
  return [...line.matchAll(/"([^"]*)"|(\S+)/g)].map((match) => match[1] ?? match[2]!);
}

interface Ran {
  code: number;
  stdout: string;
  stderr: string;
}

describe('the README operator walk', { timeout: 600_000 }, () => {
  let dir: string;
  let child: ChildProcess;
  let output = '';
  let url: string;
  let operatorToken: string;
  let controlUrl: string;

  /** One command of the walk, with the operator token alone in its environment. */
  function fleetLedger(args: string[], timeoutMs = 60_000): Promise<Ran> {
    const env: Record<string, string | undefined> = { ...process.env, FLEET_LEDGER_URL: url, FLEET_LEDGER_TOKEN: operatorToken };
    for (const name of Object.keys(env)) if (/^FLEET_LEDGER_TOKENS/.test(name)) delete env[name];
    return new Promise((resolve) => {
      execFile(process.execPath, [...cliArguments(), ...args], { timeout: timeoutMs, env, cwd: dir }, (error, stdout, stderr) =>
        resolve({ code: error ? Number((error as { code?: number }).code ?? 1) : 0, stdout, stderr }),
      );
    });
  }

  async function until<T>(what: string, probe: () => Promise<T | undefined>, withinMs: number): Promise<T> {
    const deadline = Date.now() + withinMs;
    for (;;) {
      const found = await probe();
      if (found !== undefined) return found;
      if (child.exitCode !== null) throw new Error(`fleet-ledger start exited (${child.exitCode}) before ${what}:\n${output.slice(-2000)}`);
      if (Date.now() > deadline) throw new Error(`${what} did not happen within ${withinMs / 1000} s:\n${output.slice(-2000)}`);
      await new Promise((resolve) => setTimeout(resolve, 3_000));
    }
  }

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'fleet-ledger-walk-'));
    // As root, the embedded PostgreSQL runs as its own user, which must pass through this folder (README: The two commands).
    chmodSync(dir, 0o755);
    const port = await freePort();
    // The README's demo: an embedded PostgreSQL in its own folder, demo tokens printed at start.
    const env: Record<string, string | undefined> = { ...process.env, DATABASE_URL: '' };
    for (const name of Object.keys(env)) if (/^FLEET_LEDGER_TOKEN/.test(name)) delete env[name];
    child = spawn(process.execPath, [...cliArguments(), 'start', '--bmcs', '32', '--interval', '5', '--data-dir', join(dir, 'data'), '--port', String(port)], { detached: true, stdio: ['ignore', 'pipe', 'pipe'], env });
    child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    url = `http://127.0.0.1:${port}`;
    operatorToken = await until('the tokens printed at start', async () => /^\s+operator\s+\S+\s+(\S+)$/m.exec(output)?.[1], 180_000);
    controlUrl = await until('the simulator control URL logged at start', async () => /"control":"(http:\/\/[^"]+)"/.exec(output)?.[1], 60_000);
    // This morning a BMC locked the poller out, and reset (so the poller had to log in again): its logins latch.
    const fault = (body: Record<string, unknown>) => fetch(`${controlUrl}/sim/faults`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    expect((await fault({ fault: 'lockout', target: { bmc: 'bmc-00017' }, duration: '10m' })).status).toBeLessThan(300);
    expect((await fault({ fault: 'reset', target: { bmc: 'bmc-00017' }, duration: '5s' })).status).toBeLessThan(300);
  }, 300_000);

  afterAll(async () => {
    if (child?.pid && child.exitCode === null) {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      process.kill(-child.pid, 'SIGINT');
      const timer = setTimeout(() => process.kill(-child.pid!, 'SIGKILL'), 30_000);
      await exited;
      clearTimeout(timer);
    }
    rmSync(dir, { recursive: true, force: true });
  });

  it("the README's operator walk works with the operator token alone", async () => {
    const walk = operatorWalk(readFileSync(join(root, 'README.md'), 'utf8'));
    expect(walk.length).toBeGreaterThanOrEqual(8);
    const filled = new Map<string, string>([['<control URL>', controlUrl]]);
    const transcript: string[] = [];
    for (const line of walk) {
      // What the walk's earlier commands show the operator, waited for as an operator would (the PDU trips a minute in).
      if (line.includes('<alarm-id>') && !filled.has('<alarm-id>')) {
        filled.set('<alarm-id>', await until('a root cause on PDU ams1-p002 in alarms list', async () => {
          const listed = await fleetLedger(['alarms', 'list', '--json']);
          expect(listed.code, listed.stderr).toBe(0);
          const alarms = JSON.parse(listed.stdout) as Array<{ alarmId: string; kind: string; severity: string }>;
          // Critical first: the PDU's root cause is above any warning.
          const firstWarning = alarms.findIndex((alarm) => alarm.severity !== 'critical');
          const root = alarms.findIndex((alarm) => alarm.kind === 'root-cause' && alarm.alarmId.includes('pdu:ams1-p002'));
          if (root >= 0 && firstWarning >= 0) expect(root).toBeLessThan(firstWarning);
          return root >= 0 ? alarms[root]!.alarmId : undefined;
        }, 300_000));
      }
      if (line.includes('<node>') && !filled.has('<node>')) {
        const listed = await fleetLedger(['nodes', '--rack', 'ams1-r003', '--json']);
        expect(listed.code, listed.stderr).toBe(0);
        filled.set('<node>', (JSON.parse(listed.stdout) as Array<{ nodeId: string }>)[0]!.nodeId);
      }
      if (line.includes('<latched node>') && !filled.has('<latched node>')) {
        filled.set('<latched node>', await until('a BMC latched after it locked the poller out', async () => {
          const listed = await fleetLedger(['nodes', '--latched', '--json']);
          expect(listed.code, listed.stderr).toBe(0);
          return (JSON.parse(listed.stdout) as Array<{ nodeId: string }>)[0]?.nodeId;
        }, 120_000));
      }
      const concrete = words([...filled].reduce((text, [placeholder, value]) => text.split(placeholder).join(value), line)).slice(1);
      expect(concrete.join(' '), 'every placeholder of the walk is filled').not.toMatch(/<[^>]+>/);
      // `--watch` follows until interrupted: the walk looks at it for a while, as a person would.
      const ran = await fleetLedger(concrete, concrete.includes('--watch') ? 15_000 : 60_000);
      transcript.push(`$ fleet-ledger ${concrete.join(' ')}\n${ran.stdout}${ran.stderr}`);
      // What is watched is named on its screen (the rollout, the credential rotation).
      if (concrete.includes('--watch')) expect(ran.stdout, transcript.join('\n')).toContain(concrete[concrete.indexOf('status') + 1]!);
      else expect(ran.code, transcript.join('\n')).toBe(0);
      expect(ran.stderr, transcript.join('\n')).not.toMatch(/API_FORBIDDEN|API_UNAUTHORIZED|exit codes/);
    }
    // Asked again, the walk's intents change nothing and say so.
    const again = await fleetLedger(words(walk.find((line) => line.includes(' cordon '))!).slice(1).map((arg) => arg.replace('<node>', filled.get('<node>')!)));
    expect(again.stdout).toMatch(/already recorded before|nothing recorded/);
    const ackAgain = await fleetLedger(['alarms', 'ack', filled.get('<alarm-id>')!]);
    expect(ackAgain.stdout).toContain('already acknowledged');
  });
});
