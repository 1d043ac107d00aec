import { defineConfig } from 'vitest/config';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * The longest files start first (a longest-first schedule over the two workers): started last, the rollout kill test
 * alone kept the suite running three minutes after everything else had ended. Seconds on a 2-core CI machine.
 */
const longestFirst = ['operator-walk.test.ts', 'three-processes.test.ts', 'rollout-kill.test.ts', 'crash-safety.test.ts', 'scale.test.ts', 'patroni-ledger.test.ts', 'ledger-outage.test.ts', 'start-outage.test.ts', 'rollout-across-processes.test.ts', 'mixed-fleet.test.ts'];

class LongestFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const rank = (file: TestSpecification): number => {
      const index = longestFirst.findIndex((name) => file.moduleId.endsWith(`/${name}`));
      return index < 0 ? longestFirst.length : index;
    };
    return [...sorted].sort((a, b) => rank(a) - rank(b));
  }
}

/**
 * Two levels. `unit`: pure functions (evolve, decide, parsers, planners, the tree generator, error catalogues),
 * files named `*.unit.test.ts`; no database, no sockets, no child processes; `npm run test:unit` runs them alone in
 * seconds. `integration`: everything else (`*.test.ts`), against the embedded PostgreSQL (started once per run by
 * the global setup), the machine's PostgreSQL service, the simulator over real HTTP, ipmi_sim, snmpd and Chromium.
 * `npm test` runs both.
 */
export default defineConfig({
  test: {
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: 'forks',
    // Three files at a time on two cores: the longest files mostly wait (intervals, outages, a demo's minute), so a third
    // worker fills those waits. Measured on the 2-core machine, same commit: 2 workers 688.5 s, 3 workers 487.5 s, all
    // 179 files passing in both.
    maxWorkers: 3,
    sequence: { sequencer: LongestFirstSequencer },
    reporters: ['default'],
    projects: [
      {
        extends: true,
        // Pure files share their workers' module cache (no isolation): nothing they import holds state, and importing
        // every module again per file was most of their time (40 unit files: 40.1 s isolated, 15.5 s shared).
        test: { name: 'unit', include: ['test/**/*.unit.test.ts'], isolate: false },
      },
      {
        extends: true,
        test: {
          name: 'integration',
          include: ['test/**/*.test.ts'],
          exclude: ['test/**/*.unit.test.ts', '**/node_modules/**'],
          globalSetup: ['test/support/global-setup.ts'],
        },
      },
    ],
  },
});
