/**
 * The rule for tests that need the real hardware captures: they read them from FLEET_LEDGER_FIXTURES (the team's
 * third-party captures, never in the repository; `.ci/run` points the variable at them). Without it, a test is
 * skipped with the variable named in its title, except on CI (`CI=true`), where it runs and fails saying why.
 */
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';

export interface FixturesRequirement {
  /** The folder, when FLEET_LEDGER_FIXTURES names one that exists. */
  dir: string | undefined;
  /** False only off CI without the captures: the dependent tests are skipped. */
  runnable: boolean;
  /** The title with the skip reason appended when the captures are absent. */
  title(name: string): string;
  /** The captures folder; throws with the reason when it is absent (on CI, this is the failure). */
  require(): string;
}

export function fixturesRequirement(env: NodeJS.ProcessEnv = process.env): FixturesRequirement {
  const given = env.FLEET_LEDGER_FIXTURES;
  const dir = given && existsSync(given) ? resolve(given) : undefined;
  const reason = given
    ? `FLEET_LEDGER_FIXTURES=${given} does not exist`
    : 'FLEET_LEDGER_FIXTURES is not set (the real BMC captures; .ci/run points it at them)';
  return {
    dir,
    runnable: dir !== undefined || env.CI === 'true',
    title: (name) => (dir ? name : `${name} (skipped: ${reason})`),
    require: () => {
      if (!dir) throw new Error(`${reason}; tests that read real captures need it`);
      return dir;
    },
  };
}
