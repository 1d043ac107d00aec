/**
 * Where the official client's test files are: `FLEET_LEDGER_KURRENT_SUITE` (a folder holding the client repository's
 * `packages/test/src/streams`, `extra` and `persistentSubscription` folders as they are at the tag, see README.md), else
 * `test/kurrent-client-suite/upstream` when it exists. They are third-party code (Apache-2.0), ported unchanged.
 */
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const defaultFolder = fileURLToPath(new URL('../upstream', import.meta.url));

export interface SuiteLocation {
  /** The folder, when it exists. */
  dir: string | undefined;
  /** Why it is absent (the variable named, or the default folder). */
  reason: string;
}

export function suiteLocation(env: NodeJS.ProcessEnv = process.env): SuiteLocation {
  const given = env.FLEET_LEDGER_KURRENT_SUITE;
  if (given) return existsSync(given) ? { dir: resolve(given), reason: '' } : { dir: undefined, reason: `FLEET_LEDGER_KURRENT_SUITE=${given} does not exist` };
  return existsSync(defaultFolder)
    ? { dir: defaultFolder, reason: '' }
    : { dir: undefined, reason: 'FLEET_LEDGER_KURRENT_SUITE is not set and test/kurrent-client-suite/upstream is absent (the official client\'s test files, see test/kurrent-client-suite/README.md)' };
}
