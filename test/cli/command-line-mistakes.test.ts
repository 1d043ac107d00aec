/**
 * What the command line answers to the mistakes people make: a verb left out where the help names a default, a flag
 * mistyped, a file that is not there (or not readable, or a folder). Each answer names the thing that was wrong, in
 * one line, for every command; run as users run it (the compiled build when it is fresh, see `bench/support/cli-entry.ts`).
 */
import { execFile } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliArguments } from '../../bench/support/cli-entry.js';
import { commandNames } from '../../src/cli/command-list.js';
import { openApiHarness, registration, tokens, type ApiHarness } from '../api/support/api-harness.js';

interface Ran {
  code: number;
  stdout: string;
  stderr: string;
}

function cli(args: string[], options: { env?: Record<string, string>; cwd?: string; uid?: number } = {}): Promise<Ran> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [...cliArguments(), ...args],
      { timeout: 60_000, cwd: options.cwd, env: { ...process.env, FLEET_LEDGER_URL: 'http://127.0.0.1:9', ...options.env }, ...(options.uid !== undefined ? { uid: options.uid, gid: options.uid } : {}) },
      (error, stdout, stderr) => resolve({ code: error ? Number((error as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

/** Runs `work` over `items`, `width` at a time (the machine has two cores; twenty node processes at once time out). */
async function inBatches<T, R>(items: readonly T[], width: number, work: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = [];
  for (let i = 0; i < items.length; i += width) results.push(...(await Promise.all(items.slice(i, i + width).map(work))));
  return results;
}

describe('the command line answers mistakes by naming them', { timeout: 180_000 }, () => {
  let folder: string;

  beforeAll(() => {
    folder = mkdtempSync(join(tmpdir(), 'fleet-ledger-cli-'));
    chmodSync(folder, 0o755);
    mkdirSync(join(folder, 'a-folder'));
    writeFileSync(join(folder, 'a-file'), 'not a key\n');
    writeFileSync(join(folder, 'export.audit'), '{}\n');
  });
  afterAll(() => rmSync(folder, { recursive: true, force: true }));

  it('an unknown flag is named with the valid flags of its command, for every command', async () => {
    const answers = await inBatches(commandNames, 3, async (name) => ({ name, ran: await cli([name, '--no-such-flag']) }));
    for (const { name, ran } of answers) {
      expect(ran.code, `${name}: ${ran.stderr}`).toBe(2);
      const first = ran.stderr.split('\n')[0]!;
      expect(first, name).toMatch(/^(fleet-ledger )?[a-z ]+: unknown option --no-such-flag; valid options: (--[a-z-]+( VALUE)?( \(-h\))?, )+--[a-z-]+/);
      expect(first, name).toContain('--help (-h)');
      expect(ran.stderr, name).not.toContain('To specify a positional argument');
    }
    // A near miss is pointed at; a value left out or given to a switch is said so.
    expect((await cli(['nodes', 'list', '--sitee', 'ams1'])).stderr).toMatch(/^nodes: unknown option --sitee \(did you mean --site\?\); valid options: /);
    expect((await cli(['alarms', 'list', '--kind'])).stderr).toMatch(/^alarms: option --kind needs a value; valid options: /);
    expect((await cli(['alarms', 'list', '--json=yes'])).stderr).toMatch(/^alarms: option --json takes no value; valid options: /);
    expect((await cli(['witness', 'stray'])).stderr).toMatch(/^fleet-ledger witness: unexpected argument 'stray': this command takes options only; valid options: /);
  });

  it('a file that cannot be used is named as such (not found, is a directory, not readable), for every file-taking option', async () => {
    const at = (name: string) => join(folder, name);
    const cases: Array<{ args: string[]; says: RegExp }> = [
      { args: ['audit', 'verify', at('export.audit'), '--key', at('missing.pub')], says: /--key \S+missing\.pub: key file not found \(ENOENT\)/ },
      { args: ['audit', 'verify', at('export.audit'), '--key', at('a-folder')], says: /--key \S+a-folder: is a directory, not a file \(EISDIR\)/ },
      { args: ['audit', 'verify', at('export.audit'), '--key', at('a-file')], says: /--key \S+a-file: the file does not hold a verifier key/ },
      { args: ['audit', 'verify', at('missing.audit'), '--key', at('missing.pub')], says: /FILE \S+missing\.audit: export file not found \(ENOENT\)/ },
      { args: ['audit', 'verify', at('export.audit'), '--key', 'log+0a1b2c3d+AQID', '--since', at('missing.checkpoint')], says: /--key: not a valid verifier key|--since \S+: kept checkpoint not found/ },
      { args: ['audit', 'export', '--out', at('a-folder')], says: /--out \S+a-folder: is a directory, not a file \(EISDIR\)/ },
      { args: ['audit', 'export', '--out', at('no-folder/fleet.audit')], says: /--out \S+: its folder \S+no-folder not found \(ENOENT\)/ },
      { args: ['start', '--scenario', at('missing.yaml')], says: /--scenario \S+missing\.yaml: scenario file not found \(ENOENT\)/ },
      { args: ['start', '--captures', at('a-file')], says: /--captures \S+a-file: is a file, not a directory \(ENOTDIR\)/ },
      { args: ['start', '--targets', at('a-folder')], says: /--targets \S+a-folder: is a directory, not a file \(EISDIR\)/ },
      { args: ['start', '--kurrent-tls-cert', at('missing.pem'), '--kurrent-tls-key', at('a-file')], says: /--kurrent-tls-cert \S+missing\.pem: PEM certificate file not found/ },
      { args: ['start', '--data-dir', at('a-file')], says: /--data-dir \S+a-file: is a file, not a directory/ },
      { args: ['sim', '--scenario', at('missing.yaml')], says: /--scenario \S+missing\.yaml: scenario file not found/ },
      { args: ['sim', '--bmcs', '2', '--captures', at('missing')], says: /--captures \S+missing: captures folder not found/ },
      { args: ['witness', '--log-key', at('missing.pub'), '--state', at('state'), '--url', 'http://127.0.0.1:9'], says: /--log-key \S+missing\.pub: key file not found \(ENOENT\)/ },
      { args: ['witness', '--log-key', 'x', '--state', at('state'), '--from-dir', at('missing')], says: /--from-dir \S+missing: published folder not found/ },
      { args: ['inspect', '--mockup', at('missing')], says: /--mockup \S+missing: Mockup-Creator capture folder not found/ },
      { args: ['agent', '--kernel-log', at('missing.log')], says: /--kernel-log \S+missing\.log: kernel log file not found/ },
      { args: ['ebom', 'import', at('a-folder'), '--as', 'alice'], says: /FILE \S+a-folder: is a directory, not a file \(EISDIR\)/ },
      { args: ['nodes', 'import-ebom', at('missing.csv')], says: /FILE \S+missing\.csv: EBOM file not found \(ENOENT\)/ },
      { args: ['rebuild', '--all', '--data-dir', at('a-file')], says: /--data-dir \S+a-file: is a file, not a directory/ },
    ];
    const answers = await inBatches(cases, 3, async (c) => ({ ...c, ran: await cli(c.args) }));
    for (const { args, says, ran } of answers) {
      expect(ran.code, `${args.join(' ')}: ${ran.stderr}`).toBe(2);
      expect(ran.stderr, args.join(' ')).toMatch(says);
      // One line: never a stack, never the same complaint per checkpoint.
      expect(ran.stderr.trim().split('\n'), args.join(' ')).toHaveLength(1);
    }
  });

  it.runIf(process.getuid?.() === 0)('a file the caller may not read is "permission denied", not "not found" (run as nobody)', async () => {
    const secret = join(folder, 'secret.audit');
    writeFileSync(secret, '{}\n', { mode: 0o600 });
    const ran = await cli(['audit', 'verify', secret, '--key', 'log+0a1b2c3d+AQID'], { uid: 65534, cwd: folder });
    expect(ran.stderr).toMatch(/FILE \S+secret\.audit: export file not readable: permission denied \(EACCES\)/);
    expect(ran.code).toBe(2);
  });

  describe('with a ledger to talk to', () => {
    let h: ApiHarness;
    let url: string;
    beforeAll(async () => {
      h = await openApiHarness();
      for (const nodeId of ['dc1-r01-n01', 'dc1-r01-n02']) await h.app.inject({ method: 'POST', url: '/v1/nodes', headers: { authorization: `Bearer ${tokens.operator}` }, payload: registration(nodeId, 'r01') });
      await h.caughtUp();
      url = await h.app.listen({ port: 0, host: '127.0.0.1' });
    });
    afterAll(async () => h?.close());

    it('fleet-ledger nodes with nothing after it lists the nodes, as its help says', async () => {
      const ran = await cli(['nodes'], { env: { FLEET_LEDGER_URL: url, FLEET_LEDGER_TOKEN: tokens.operator } });
      expect(ran.code, ran.stderr).toBe(0);
      expect(ran.stdout.split('\n')[0]).toMatch(/^nodeId\s+site\s+rack\s+state/);
      expect(ran.stdout).toContain('dc1-r01-n01');
      expect(ran.stdout).toContain('dc1-r01-n02');
      expect(ran.stdout).not.toContain('usage:');
    });
  });
});
