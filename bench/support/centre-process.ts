/**
 * `fleet-ledger centre` as a user runs it, in a process group of its own (as `ledger-process.ts` starts a ledger):
 * ready once `/healthz` answers.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { cliArguments } from './cli-entry.js';
import { freePort } from './free-port.js';

export interface CentreProcess {
  url: string;
  /** An operator's bearer token for its API (`Authorization` header): operators read the fleet's read models and may run the rebuild check. */
  headers: Record<string, string>;
  output: () => string;
  stop: (graceMs?: number) => Promise<number | null>;
  kill: () => void;
}

export async function startCentreProcess(args: string[], timeoutMs = 120_000): Promise<CentreProcess> {
  const port = await freePort();
  const token = `fl_${randomBytes(18).toString('base64url')}`;
  const env = { ...process.env, FLEET_LEDGER_TOKENS: `${token}=bench-operator:operator` };
  const child = spawn(process.execPath, [...cliArguments(), 'centre', '--port', String(port), ...args], { detached: true, stdio: ['ignore', 'pipe', 'pipe'], env });
  let output = '';
  const keep = (chunk: Buffer): void => {
    output += chunk.toString('utf8');
    if (output.length > 4_000_000) output = output.slice(0, 200_000) + output.slice(-2_000_000);
  };
  child.stdout.on('data', keep);
  child.stderr.on('data', keep);
  let exitCode: number | null | undefined;
  const exited = new Promise<number | null>((resolve) =>
    child.once('exit', (code) => {
      exitCode = code;
      resolve(code);
    }),
  );
  const signal = (name: NodeJS.Signals): void => {
    try {
      process.kill(-child.pid!, name);
    } catch {
      // already gone
    }
  };
  const url = `http://127.0.0.1:${port}`;
  const started: CentreProcess = {
    url,
    headers: { authorization: `Bearer ${token}` },
    output: () => output,
    async stop(graceMs = 60_000) {
      if (exitCode !== undefined) return exitCode;
      signal('SIGINT');
      const timer = setTimeout(() => signal('SIGKILL'), graceMs);
      const code = await exited;
      clearTimeout(timer);
      return code;
    },
    kill: () => signal('SIGKILL'),
  };
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (exitCode !== undefined) throw new Error(`fleet-ledger centre exited (${exitCode}):\n${output.slice(-3000)}`);
    if (Date.now() > deadline) {
      started.kill();
      throw new Error(`fleet-ledger centre did not answer within ${timeoutMs / 1000} s:\n${output.slice(-3000)}`);
    }
    const status = await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(5_000) }).then((r) => r.status, () => 0);
    if (status === 200) return started;
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}
