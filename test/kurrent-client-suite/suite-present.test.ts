/**
 * The official KurrentDB client's tests are third-party files kept beside the repository (README.md here): with them
 * present, `vitest.config.ts` runs them as the `kurrent-client-suite` project. Without them this test says so: skipped
 * with the reason in its title, except on CI (`CI=true`), where the suite is required and this fails naming what to set.
 */
import { describe, expect, it } from 'vitest';
import { suiteLocation } from './harness/suite-location.js';

const location = suiteLocation();
const runnable = location.dir !== undefined || process.env.CI === 'true';

describe('the official KurrentDB client suite', () => {
  it.skipIf(!runnable)(location.dir ? 'is present, and runs as the kurrent-client-suite project' : `is present (skipped: ${location.reason})`, () => {
    expect(location.dir, location.reason).toBeDefined();
  });
});
