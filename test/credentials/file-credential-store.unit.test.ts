/**
 * The file credential store: versions staged beside the operator's file, durably and idempotently; the default and
 * any version answered; many references retired in one operation; a store in another process sees it all.
 */
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { FileCredentialStore, credentialDigest, generateBmcPassword, plainVersionOf, writeOperatorCredentials } from '../../src/credentials/index.js';

const dirs: string[] = [];
afterEach(() => dirs.splice(0).forEach((dir) => rmSync(dir, { recursive: true, force: true })));

function fileWith(refs: number): string {
  const dir = mkdtempSync(join(tmpdir(), 'fl-store-'));
  dirs.push(dir);
  const path = join(dir, 'credentials.json');
  writeOperatorCredentials(path, Object.fromEntries(Array.from({ length: refs }, (_, i) => [`sim:n${i}`, { username: 'root', password: `old-${i}`, endpoints: ['10.0.0.0/8'] }])));
  return path;
}

describe('the file credential store', () => {
  it('stages a version per reference in one synced write, idempotently: staged again, the same secret', async () => {
    const path = fileWith(3);
    const store = new FileCredentialStore(path, { recheckMs: 0 });
    let n = 0;
    const first = await store.stage([{ credentialRef: 'sim:n0', version: 'rot-1' }, { credentialRef: 'sim:n1', version: 'rot-1' }], () => `new-${n++}-Aa1!xyzw`);
    const again = await new FileCredentialStore(path, { recheckMs: 0 }).stage([{ credentialRef: 'sim:n0', version: 'rot-1' }], () => 'a-different-secret');
    expect(again[0]!.digest).toBe(first[0]!.digest);
    expect(store.getVersion('sim:n0', 'rot-1')?.password).toBe('new-0-Aa1!xyzw');
    expect(statSync(`${path}.versions`).mode & 0o077).toBe(0);
    // The operator's file is never written; the default stays the operator's entry until a retirement.
    expect(JSON.parse(readFileSync(path, 'utf8'))['sim:n0'].password).toBe('old-0');
    expect(store.get('sim:n0')?.version).toBe(plainVersionOf('root', 'old-0'));
    expect(first[0]!.digest).toBe(credentialDigest('sim:n0', 'rot-1', 'root', 'new-0-Aa1!xyzw'));
  });

  it('retires any number of references in one operation: the kept version is the default, the others are gone', async () => {
    const path = fileWith(500);
    const store = new FileCredentialStore(path, { recheckMs: 0 });
    const refs = Array.from({ length: 500 }, (_, i) => `sim:n${i}`);
    await store.stage(refs.map((credentialRef) => ({ credentialRef, version: 'rot-1' })), () => generateBmcPassword());
    const { versionsRetired } = await store.retire(refs.slice(0, 499).map((credentialRef) => ({ credentialRef, keep: 'rot-1' })));
    expect(versionsRetired).toBe(499);
    const other = new FileCredentialStore(path, { recheckMs: 0 });
    expect(other.get('sim:n0')?.version).toBe('rot-1');
    expect(other.getVersion('sim:n0', plainVersionOf('root', 'old-0'))).toBeUndefined();
    // The reference kept back keeps both.
    expect(other.get('sim:n499')?.version).toBe(plainVersionOf('root', 'old-499'));
    expect(other.getVersion('sim:n499', 'rot-1')).toBeDefined();
    expect(readFileSync(`${path}.versions`, 'utf8')).not.toContain('old-0');
  });

  it('a generated password meets every simulated vendor policy: 16 characters of four kinds, no space, colon or quote', () => {
    for (let i = 0; i < 200; i++) {
      const password = generateBmcPassword();
      expect(password).toHaveLength(16);
      expect(password).toMatch(/[A-Z]/);
      expect(password).toMatch(/[a-z]/);
      expect(password).toMatch(/[0-9]/);
      expect(password).toMatch(/[-_.!]/);
      expect(password).not.toMatch(/[\s:"']/);
    }
  });
});
