/**
 * The simulator in a process of its own (`fleet-ledger sim ...`), for benchmarks that need it to have a core to
 * itself, and a small JSON client for its control API.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { request } from 'undici';

/** A BMC as the simulator's `/sim/fleet` lists it (the fields the benchmarks and tests use). */
export interface SimBmc {
  id: string;
  baseUrl: string;
  username: string;
  password: string;
  site: string;
  rack: string;
  sessionLimit: number;
  /** The simulated model (the profile's name). */
  fixture: string;
}

const cli = fileURLToPath(new URL('../../src/cli/main.ts', import.meta.url));

/** Starts `fleet-ledger sim` with `args`; resolves with the process and its control URL once it listens. */
export async function startSimProcess(args: string[]): Promise<{ child: ChildProcess; controlUrl: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', cli, 'sim', '--stats-every', '0', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  const controlUrl = await new Promise<string>((resolve, reject) => {
    let out = '';
    let err = '';
    const timer = setTimeout(() => reject(new Error(`simulator did not start: ${err}`)), 120_000);
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const match = /control (http:\/\/\S+)/.exec(out);
      if (match?.[1]) {
        clearTimeout(timer);
        resolve(match[1]);
      }
    });
    child.stderr!.on('data', (chunk: Buffer) => (err += chunk.toString()));
    child.on('exit', (code) => reject(new Error(`simulator exited with ${code}: ${err}`)));
  });
  return { child, controlUrl };
}

export async function simJson<T>(url: string, init?: { method: 'POST'; body: unknown }): Promise<T> {
  const answer = await request(url, init ? { method: 'POST', body: JSON.stringify(init.body), headers: { 'content-type': 'application/json' } } : {});
  const text = await answer.body.text();
  if (answer.statusCode >= 300) throw new Error(`${url}: ${answer.statusCode} ${text}`);
  return JSON.parse(text) as T;
}
