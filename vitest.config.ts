import { defineConfig } from 'vitest/config';

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
    maxWorkers: 2,
    reporters: ['default'],
    projects: [
      {
        extends: true,
        test: { name: 'unit', include: ['test/**/*.unit.test.ts'] },
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
