/**
 * Each vendor profile is held against the real capture it was written from: the generated tree and the capture,
 * read by the same Redfish driver, must give the same dialect, the same identity fields, the same firmware
 * component ids, the same sensor layout and the same component counts. A profile that drifts from its capture
 * fails here. The captures are third-party data outside the repository, reached through FLEET_LEDGER_FIXTURES.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { bmcProfiles, generateTree, readMockupTree } from '../../src/sim/index.js';
import { fixturesRequirement } from '../support/fixtures-requirement.js';
import { fingerprintTree } from './support/tree-fingerprint.js';

const fixtures = fixturesRequirement();
const held = bmcProfiles.filter((profile) => profile.heldAgainst !== undefined);

describe('vendor profiles against their captures', () => {
  it('every built-in profile names the capture it is held against', () => {
    expect(held.map((profile) => profile.name)).toEqual(bmcProfiles.map((profile) => profile.name));
  });

  describe.skipIf(!fixtures.runnable)(fixtures.title('each profile reads like its capture'), () => {
    it.each(held.map((profile) => [profile.name, profile] as const))('%s: same dialect, identity fields, firmware ids and sensor layout', async (_name, profile) => {
      const captureDir = join(fixtures.require(), profile.heldAgainst!);
      expect(existsSync(captureDir), `${profile.heldAgainst} under FLEET_LEDGER_FIXTURES`).toBe(true);
      const fromCapture = await fingerprintTree(readMockupTree(captureDir));
      const fromProfile = await fingerprintTree(generateTree(profile));
      expect(fromProfile.fingerprint).toEqual(fromCapture.fingerprint);
    });
  });
});
