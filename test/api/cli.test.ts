import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import * as alarms from '../../src/cli/commands/alarms.js';
import * as events from '../../src/cli/commands/events.js';
import * as nodes from '../../src/cli/commands/nodes.js';
import * as query from '../../src/cli/commands/query.js';
import { openApiHarness, tokens, type ApiHarness } from './support/api-harness.js';

const main = fileURLToPath(new URL('../../src/cli/main.ts', import.meta.url));

/** Runs a command in-process and captures what it prints. */
async function cli(command: { run: (argv: string[]) => Promise<number> }, argv: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const out = vi.spyOn(process.stdout, 'write').mockImplementation((chunk: any) => ((stdout += String(chunk)), true));
  const err = vi.spyOn(process.stderr, 'write').mockImplementation((chunk: any) => ((stderr += String(chunk)), true));
  try {
    return { code: await command.run(argv), stdout, stderr };
  } finally {
    out.mockRestore();
    err.mockRestore();
  }
}

describe('the command line over the API', () => {
  let h: ApiHarness;
  let url: string;
  const as = (role: keyof typeof tokens) => ['--url', url, '--token', tokens[role]];

  beforeAll(async () => {
    h = await openApiHarness();
    url = await h.app.listen({ port: 0, host: '127.0.0.1' });
  });
  afterAll(async () => h?.close());

  it('an operator registers and cordons a node; --json prints the API answer', async () => {
    const registered = await cli(nodes, ['register', 'dc1-r01-n01', '--site', 'dc1', '--rack', 'r01', '--bmc', 'https://10.0.0.1', '--credential-ref', 'bmc-default', ...as('operator')]);
    expect(registered).toMatchObject({ code: 0, stdout: expect.stringContaining('registered dc1-r01-n01: recorded at position 1') });
    const cordoned = await cli(nodes, ['cordon', 'dc1-r01-n01', '--reason', 'drain', '--json', '--idempotency-key', 'k1', ...as('operator')]);
    expect(cordoned.code).toBe(0);
    expect(JSON.parse(cordoned.stdout)).toMatchObject({ position: 2, stream: 'node-dc1-r01-n01', streamVersion: 2 });
    const again = await cli(nodes, ['cordon', 'dc1-r01-n01', '--reason', 'drain', '--json', '--idempotency-key', 'k1', ...as('operator')]);
    expect(JSON.parse(again.stdout)).toMatchObject({ position: 2, idempotentReplay: true });
  });

  it('exit codes: 2 for usage, 3 for a refused token or role, 1 for an error answer', async () => {
    expect((await cli(nodes, ['cordon', 'dc1-r01-n01', ...as('operator')])).code).toBe(2); // --reason missing
    expect((await cli(nodes, ['frobnicate', ...as('operator')])).code).toBe(2);
    expect((await cli(nodes, ['cordon', 'dc1-r01-n01', '--bogus', ...as('operator')])).code).toBe(2);
    const forbidden = await cli(nodes, ['cordon', 'dc1-r01-n01', '--reason', 'x', ...as('analyst')]);
    expect(forbidden.code).toBe(3);
    expect(forbidden.stderr).toContain('API_FORBIDDEN');
    expect((await cli(query, ['liveness', '--url', url, '--token', 'wrong-token-wrong-token'])).code).toBe(3);
    const missing = await cli(nodes, ['cordon', 'ghost', '--reason', 'x', ...as('operator')]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('API_NOT_FOUND');
  });

  it('queries print tables for people and JSON with --json', async () => {
    await h.caughtUp();
    const listed = await cli(nodes, ['list', ...as('analyst')]);
    expect(listed.code).toBe(0);
    expect(listed.stdout).toMatch(/^nodeId\s+site\s+rack\s+state/);
    expect(listed.stdout).toContain('dc1-r01-n01');
    const summary = await cli(query, ['liveness', '--json', ...as('analyst')]);
    expect(JSON.parse(summary.stdout)).toEqual({ states: { 'never-contacted': 1 } });
    const shown = await cli(nodes, ['show', 'dc1-r01-n01', ...as('analyst')]);
    expect(shown.stdout).toContain('liveness   never-contacted');
    expect((await cli(query, ['drift', ...as('analyst')])).stdout).toBe('(none)\n');
    expect((await cli(alarms, ['list', ...as('analyst')])).code).toBe(0);
  });

  it('an EBOM file is imported through the API, and a bad one is refused with exit 1', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'fleet-ledger-cli-'));
    const good = join(dir, 'ebom.csv');
    writeFileSync(good, 'nodeId,site,rack,manufacturer,model,serial\ndc1-r01-n01,dc1,r01,HPE,DL380,CZ1\n');
    const imported = await cli(nodes, ['import-ebom', good, ...as('operator')]);
    expect(imported).toMatchObject({ code: 0, stdout: expect.stringContaining('1 rows imported') });
    const bad = join(dir, 'bad.csv');
    writeFileSync(bad, 'nodeId,site,rack,manufacturer,model,serial\ndc1-r01-n02,dc1,r01,HPE,DL380,\n');
    const refused = await cli(nodes, ['import-ebom', bad, ...as('operator')]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('line 2');
  });

  it('auditors list the log, read a stream, verify the chain and tail the live feed', async () => {
    const listed = await cli(events, ['list', '--types', 'NodeCordoned', ...as('auditor')]);
    expect(listed.stdout).toMatch(/NodeCordoned\s+operator:alice/);
    const stream = await cli(events, ['stream', 'node-dc1-r01-n01', '--json', ...as('auditor')]);
    expect(JSON.parse(stream.stdout).items.map((e: any) => e.type)).toEqual(['NodeRegistered', 'NodeCordoned', 'NodeDeclared']);
    const verified = await cli(events, ['verify', ...as('auditor')]);
    expect(verified).toMatchObject({ code: 0, stdout: expect.stringContaining('chain intact') });
    const tail = await cli(events, ['tail', '--from', '1', '--count', '2', ...as('auditor')]);
    expect(tail.code).toBe(0);
    expect(tail.stdout.trim().split('\n')).toHaveLength(2);
  });

  it('the commands are reachable from fleet-ledger, with FLEET_LEDGER_URL and FLEET_LEDGER_TOKEN', async () => {
    // Asynchronous: the API answering it lives in this process.
    const child = spawn(process.execPath, ['--import', 'tsx', main, 'query', 'liveness'], { env: { ...process.env, FLEET_LEDGER_URL: url, FLEET_LEDGER_TOKEN: tokens.auditor } });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    const status = await new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    expect(status).toBe(3);
    expect(stderr).toContain('API_FORBIDDEN');
  });
});
