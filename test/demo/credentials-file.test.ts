/**
 * The credentials file an operator writes for `start --no-sim --targets`: each secret bound to its addresses, a
 * rotation lifting only the latches of the credential rotated, and a file caught half-written never dropping nodes.
 */
import { chmodSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { CredentialFileError, fileCredentials } from '../../src/demo/target-file.js';

const dirs: string[] = [];
function credentialFile(content: unknown): string {
  const dir = mkdtempSync(join(tmpdir(), 'fl-creds-'));
  dirs.push(dir);
  const path = join(dir, 'credentials.json');
  write(path, content, 1);
  return path;
}
/** Writes and moves the mtime forward, so a rewrite within the same millisecond is still seen. */
function write(path: string, content: unknown, second: number): void {
  writeFileSync(path, typeof content === 'string' ? content : JSON.stringify(content));
  chmodSync(path, 0o600);
  utimesSync(path, 1_700_000_000 + second, 1_700_000_000 + second);
}
afterEach(() => dirs.splice(0).forEach((dir) => rmSync(dir, { recursive: true, force: true })));

const a = { username: 'root', password: 'calvin', endpoints: ['10.20.0.0/16'] };
const b = { username: 'admin', password: 'hunter2', endpoints: ['bmc-*.ams1.example.com'] };

describe('the credentials file', () => {
  it('a credential without endpoints (the addresses it may be sent to) is refused at start, naming it, never its secret', () => {
    const path = credentialFile({ 'bmc-a': { username: 'root', password: 'calvin' } });
    expect(() => fileCredentials(path)).toThrow(CredentialFileError);
    expect(() => fileCredentials(path)).toThrow(/bmc-a\.endpoints/);
    expect(() => fileCredentials(path)).not.toThrow(/calvin/);
  });

  it("rotating one credential's password changes its version only: the others' lockout latches stay", () => {
    const path = credentialFile({ a, b });
    const credentials = fileCredentials(path);
    const before = { a: credentials.get('a')!.version, b: credentials.get('b')!.version };
    write(path, { a: { ...a, password: 'rotated' }, b }, 2);
    expect(credentials.get('a')!.version).not.toBe(before.a);
    expect(credentials.get('b')!.version).toBe(before.b);
    expect(credentials.get('a')).toMatchObject({ password: 'rotated', endpoints: ['10.20.0.0/16'] });
  });

  it('a file caught half-written keeps the last good credentials in force, and the next good write is taken', () => {
    const path = credentialFile({ a, b });
    const credentials = fileCredentials(path);
    write(path, JSON.stringify({ a, b }).slice(0, 30), 2);
    expect(credentials.get('a')).toMatchObject({ username: 'root', password: 'calvin' });
    expect(credentials.get('b')).toMatchObject({ username: 'admin' });
    write(path, { a }, 3);
    expect(credentials.get('b')).toBeUndefined();
  });

  it('an inherited name (toString, __proto__) is no credential', () => {
    const credentials = fileCredentials(credentialFile({ a }));
    expect(credentials.get('toString')).toBeUndefined();
    expect(credentials.get('__proto__')).toBeUndefined();
  });
});
