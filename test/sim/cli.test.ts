import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

// The command line from its sources (tsx): `test/cli/built-cli.test.ts` runs the compiled one.
const cli = ['--import', 'tsx', fileURLToPath(new URL('../../src/cli/main.ts', import.meta.url))];

describe('fleet-ledger sim', { timeout: 30_000 }, () => {
  it('runs in the foreground, prints its control URL and stops cleanly on SIGTERM', async () => {
    const child = spawn(process.execPath, [...cli, 'sim', '--bmcs', '3', '--mockup', 'hpe', '--latency-scale', '0', '--stats-every', '0'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const controlUrl = await new Promise<string>((resolve, reject) => {
      child.stdout.on('data', (chunk: Buffer) => {
        output += chunk.toString();
        const match = /control (http:\/\/\S+)/.exec(output);
        if (match?.[1]) resolve(match[1]);
      });
      child.once('exit', () => reject(new Error(`exited early: ${output}`)));
    });
    const fleet = (await (await fetch(`${controlUrl}/sim/fleet`)).json()) as { bmcs: Array<{ vendor: string }> };
    expect(fleet.bmcs.map((bmc) => bmc.vendor)).toEqual(['hpe', 'hpe', 'hpe']);
    const exit = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    child.kill('SIGTERM');
    expect(await exit).toBe(0);
    expect(output).toContain('fleet-ledger sim: stopped');
  }, 30_000);

  it('refuses a scenario with an invalid field and names it', async () => {
    const child = spawn(process.execPath, [...cli, 'sim', '--bmcs', 'many'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let errors = '';
    child.stderr.on('data', (chunk: Buffer) => (errors += chunk.toString()));
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    expect(code).toBe(2);
    expect(errors).toContain('--bmcs');
  }, 30_000);
});
