/**
 * Where the shared hardware captures live: `$FLEET_LEDGER_FIXTURES` when set, otherwise `<repo>/../shared/fixtures`
 * found relative to this source file (never an absolute path of one machine).
 */
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export function fixturesDir(): string {
  const fromEnv = process.env['FLEET_LEDGER_FIXTURES'];
  if (fromEnv) return resolve(fromEnv);
  const repo = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
  return join(repo, '..', 'shared', 'fixtures');
}

/** The Mockup-Creator folder of a named capture (`dell`, `hpe`, ...) or the given path when it is one. */
export function mockupDir(nameOrPath: string): string {
  if (nameOrPath.includes('/') || nameOrPath.startsWith('.')) return resolve(nameOrPath);
  return join(fixturesDir(), 'redfish', nameOrPath);
}
