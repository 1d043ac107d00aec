/**
 * `fleet-ledger start` as a user runs it: a process of its own (the compiled build when it is current,
 * `cli-entry.ts`), in a process group of its own so a stop reaches it and nothing else, its output kept for the
 * figures that are only logged (the integrity alarm). `stop()` is a clean stop (SIGINT, as Ctrl-C); `kill()` ends the
 * group at once, for the cleanup of a run that failed.
 */
import { spawn } from 'node:child_process';
import { cliArguments } from './cli-entry.js';
import { freePort } from './free-port.js';

export interface LedgerProcess {
  url: string;
  port: number;
  pid: number;
  output: () => string;
  alive: () => boolean;
  /** SIGINT to the group; SIGKILL after `graceMs`. Resolves with the exit code (null when killed). */
  stop: (graceMs?: number) => Promise<number | null>;
  kill: () => void;
}

export interface StartOptions {
  args: string[];
  env: Record<string, string>;
  /** `ready`: until `/readyz` is 200; `answering`: until it answers at all (a tampered copy is never ready). */
  until: 'ready' | 'answering';
  timeoutMs: number;
  /** Called with the process as soon as it is spawned, so a caller's cleanup knows it even if the start fails. */
  onSpawn?: (started: LedgerProcess) => void;
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Starts `fleet-ledger start` on a free port. A port found free can be taken by another process before the ledger
 * listens on it (tests run side by side): a start refused for that alone is tried again on another port, twice at most.
 */
export async function startLedgerProcess(options: StartOptions): Promise<LedgerProcess> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await startOnce(options, await freePort());
    } catch (error) {
      if (attempt >= 3 || !(error instanceof Error) || !/port \d+ is already in use/.test(error.message)) throw error;
    }
  }
}

async function startOnce(options: StartOptions, port: number): Promise<LedgerProcess> {
  const child = spawn(process.execPath, [...cliArguments(), 'start', '--port', String(port), ...options.args], {
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, ...options.env },
  });
  let output = '';
  const keep = (chunk: Buffer): void => {
    output += chunk.toString('utf8');
    // The start's output is read for a few lines only: keep the head (tokens, addresses) and a long tail.
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
  const pid = child.pid!;
  const signal = (name: NodeJS.Signals): void => {
    try {
      process.kill(-pid, name);
    } catch {
      // already gone
    }
  };
  const url = `http://127.0.0.1:${port}`;
  const started: LedgerProcess = {
    url,
    port,
    pid,
    output: () => output,
    alive: () => exitCode === undefined,
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
  options.onSpawn?.(started);
  const deadline = Date.now() + options.timeoutMs;
  for (;;) {
    if (exitCode !== undefined) throw new Error(`fleet-ledger start exited (${exitCode}) before answering:\n${output.slice(-3000)}`);
    if (Date.now() > deadline) throw new Error(`fleet-ledger start did not ${options.until === 'ready' ? 'turn ready' : 'answer'} within ${options.timeoutMs / 1000} s:\n${output.slice(-3000)}`);
    const status = await fetch(`${url}/readyz`, { signal: AbortSignal.timeout(5_000) }).then((r) => r.status, () => 0);
    if (options.until === 'ready' ? status === 200 : status !== 0) return started;
    await sleep(500);
  }
}
