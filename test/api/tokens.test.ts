import { spawnSync } from 'node:child_process';
import { mkdtempSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApi, generateDemoTokens, parseTokensEnv, readTokensFile, serveApi, tokensFromEnvironment } from '../../src/api/index.js';
import { freePort } from '../../bench/support/free-port.js';
import { openApiHarness, tokens, tokenTable, type ApiHarness } from './support/api-harness.js';

describe('bearer tokens', () => {
  it('FLEET_LEDGER_TOKENS maps token=principal:role pairs; a malformed entry is refused', () => {
    const table = parseTokensEnv('aaaaaaaaaaaaaaaa1=alice:operator, bbbbbbbbbbbbbbbb2=bob:analyst');
    expect(table.resolve('aaaaaaaaaaaaaaaa1')).toEqual({ id: 'alice', role: 'operator' });
    expect(table.resolve('bbbbbbbbbbbbbbbb2')).toEqual({ id: 'bob', role: 'analyst' });
    expect(table.resolve('nope')).toBeNull();
    expect(() => parseTokensEnv('aaaaaaaaaaaaaaaa1=alice:wizard')).toThrow(/unknown role 'wizard'/);
    expect(() => parseTokensEnv('short=alice:operator')).toThrow(/16 characters/);
    expect(() => parseTokensEnv('no-principal-here-at-all')).toThrow(/token=principal:role/);
  });

  it('FLEET_LEDGER_TOKENS_FILE is read as JSON and takes precedence', () => {
    const dir = mkdtempSync(join(tmpdir(), 'fleet-ledger-tokens-'));
    const file = join(dir, 'tokens.json');
    writeFileSync(file, JSON.stringify({ tokens: [{ token: 'cccccccccccccccc3', principal: 'carol', role: 'auditor' }] }));
    expect(readTokensFile(file).resolve('cccccccccccccccc3')).toEqual({ id: 'carol', role: 'auditor' });
    const table = tokensFromEnvironment({ FLEET_LEDGER_TOKENS_FILE: file, FLEET_LEDGER_TOKENS: 'aaaaaaaaaaaaaaaa1=alice:operator' });
    expect(table?.resolve('aaaaaaaaaaaaaaaa1')).toBeNull();
    expect(tokensFromEnvironment({})).toBeNull();
    writeFileSync(file, JSON.stringify({ tokens: [{ token: 'cccccccccccccccc3', principal: 'carol', role: 'root' }] }));
    expect(() => readTokensFile(file)).toThrow(/tokens\.0\.role/);
  });

  it('demo tokens are random, one per role, stored with mode 0600 and reused on the next start', () => {
    const dir = mkdtempSync(join(tmpdir(), 'fleet-ledger-demo-'));
    const first = generateDemoTokens(dir);
    expect(first.tokens.map((t) => t.role).sort()).toEqual(['admin', 'agent', 'analyst', 'auditor', 'operator']);
    expect(statSync(first.path!).mode & 0o777).toBe(0o600);
    const second = generateDemoTokens(dir);
    expect(second.tokens).toEqual(first.tokens);
    expect(generateDemoTokens().tokens[0]!.token).not.toBe(first.tokens[0]!.token);
  });
});

describe('serving', () => {
  let h: ApiHarness;
  beforeAll(async () => {
    h = await openApiHarness();
  });
  afterAll(async () => h?.close());

  it('tokens never reach the log, whether in the header or in ?token=', async () => {
    let logged = '';
    const sink = new Writable({ write(chunk, _encoding, done) { logged += chunk.toString(); done(); } });
    const app = await buildApi({ store: h.store, runner: h.runner, tokens: tokenTable, logger: pino({ level: 'debug' }, sink) });
    await app.inject({ method: 'GET', url: '/v1/liveness/nodes', headers: { authorization: `Bearer ${tokens.analyst}` } });
    await app.inject({ method: 'GET', url: `/v1/liveness/nodes?token=${tokens.analyst}` });
    await app.inject({ method: 'GET', url: '/v1/liveness/nodes', headers: { authorization: 'Bearer some-unknown-token-value' } });
    await app.close();
    expect(logged).toContain('/v1/liveness/nodes?token=***');
    expect(logged).not.toContain(tokens.analyst);
    expect(logged).not.toContain('some-unknown-token-value');
  });

  it('serveApi binds 127.0.0.1, prints demo tokens once it listens, and stores them in the data folder', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'fleet-ledger-serve-'));
    let printed = '';
    const previous = { file: process.env.FLEET_LEDGER_TOKENS_FILE, env: process.env.FLEET_LEDGER_TOKENS };
    delete process.env.FLEET_LEDGER_TOKENS_FILE;
    delete process.env.FLEET_LEDGER_TOKENS;
    try {
      const port = await freePort();
      // A token shown is a token that works at once: when the listing is printed, the port already accepts connections
      // (checked from another process while this one is held in the print, so the check sees the kernel's state).
      let acceptedWhenPrinted: boolean | null = null;
      const served = await serveApi({
        store: h.store, runner: h.runner, port, dataDir,
        print: (text) => {
          acceptedWhenPrinted = spawnSync(process.execPath, ['-e', `require('node:net').connect(${port}, '127.0.0.1').on('connect', () => process.exit(0)).on('error', () => process.exit(1))`]).status === 0;
          printed += text;
        },
      });
      try {
        expect(served.url).toBe(`http://127.0.0.1:${port}`);
        expect(acceptedWhenPrinted, 'the API accepted connections when its tokens were printed').toBe(true);
        const admin = generateDemoTokens(dataDir).tokens.find((t) => t.role === 'admin')!;
        expect(printed).toContain(admin.token);
        const response = await fetch(`${served.url}/v1/liveness/summary`, { headers: { authorization: `Bearer ${admin.token}` } });
        expect(response.status).toBe(200);
      } finally {
        await served.close();
      }
    } finally {
      if (previous.file !== undefined) process.env.FLEET_LEDGER_TOKENS_FILE = previous.file;
      if (previous.env !== undefined) process.env.FLEET_LEDGER_TOKENS = previous.env;
    }
  });
});
