import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';
import { BaseSequencer, type TestSpecification } from 'vitest/node';
import { suiteLocation } from './test/kurrent-client-suite/harness/suite-location.js';

/**
 * The longest files start first (a longest-first schedule over the two workers): started last, the rollout kill test
 * alone kept the suite running three minutes after everything else had ended. Seconds on a 2-core CI machine.
 */
const longestFirst = ['operator-walk.test.ts', 'three-processes.test.ts', 'rollout-kill.test.ts', 'rotation-kill.test.ts', 'crash-safety.test.ts', 'scale.test.ts', 'ledger-outage.test.ts', 'start-outage.test.ts', 'rollout-across-processes.test.ts', 'mixed-fleet.test.ts'];

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

const here = (path: string): string => fileURLToPath(new URL(path, import.meta.url));
const packageDir = (name: string): string => dirname(createRequire(import.meta.url).resolve(`${name}/package.json`));

/**
 * The official KurrentDB client's own tests (third-party files, ported unchanged into `test/kurrent-client-suite/upstream`: its README),
 * run as they are against the KurrentDB face, when their folder is here. Jest's globals come from `jest-compat.ts`,
 * `@test-utils` is our harness, and the client they import is ours (they may live outside this repository).
 */
const kurrentSuite = suiteLocation();
const kurrentSuiteProject = (name: string, include: string[]) => ({
  extends: true as const,
  resolve: {
    alias: [
      { find: /^@test-utils$/, replacement: here('./test/kurrent-client-suite/harness/index.ts') },
      { find: /^@eventstore\/db-client$/, replacement: packageDir('@eventstore/db-client') },
      { find: /^@eventstore\/db-client\/(.*)$/, replacement: `${packageDir('@eventstore/db-client')}/$1` },
      { find: /^uuid$/, replacement: packageDir('uuid') },
    ],
  },
  test: {
    name,
    dir: kurrentSuite.dir!,
    include,
    globals: true,
    // The files share their worker's modules (the client and the harness load once per worker, not once per file);
    // each file starts its own node over its own database.
    isolate: false,
    setupFiles: [here('./test/kurrent-client-suite/harness/jest-compat.ts')],
    globalSetup: [here('./test/support/global-setup.ts')],
    // No test of the suite may hold the run: one that has not ended after this fails (and is counted a hang).
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
});
/** The streams and extra files; the persistent subscription files apart (their tests wait 5 s here and there by design). */
const kurrentSuiteProjects = kurrentSuite.dir
  ? [
      kurrentSuiteProject('kurrent-client-suite', ['streams/**/*.test.ts', 'extra/**/*.test.ts']),
      kurrentSuiteProject('kurrent-client-suite-persistent', ['persistentSubscription/**/*.test.ts']),
    ]
  : [];

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
    // Three files at a time on two cores: the longest files mostly wait (intervals, outages, a demo's minute, Patroni
    // failovers, a site's cut), so a third worker fills those waits. Measured on the 2-core machine: 2 workers 688.5 s
    // and 3 workers 487.5 s on 179 files; 3 workers 731.7 s on the 233 files after the sites, rotation, failover and
    // KurrentDB suites (with other runs beside it). Four workers started the kill tests together and two of them failed.
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
          exclude: ['test/**/*.unit.test.ts', 'test/**/*.heavy.test.ts', '**/node_modules/**', 'test/kurrent-client-suite/upstream/**'],
          globalSetup: ['test/support/global-setup.ts'],
        },
      },
      ...kurrentSuiteProjects,
      // Longer variants kept out of `npm test` for its 10-minute budget (each file says why and what the suite keeps):
      // `npm run test:heavy` runs them.
      ...(process.env.FLEET_LEDGER_HEAVY_TESTS ? [{ extends: true as const, test: { name: 'heavy', include: ['test/**/*.heavy.test.ts'], globalSetup: ['test/support/global-setup.ts'] } }] : []),
    ],
  },
});
