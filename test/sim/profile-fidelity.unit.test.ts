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
import { fingerprintTree, type TreeFingerprint } from './support/tree-fingerprint.js';
import { treeFetch, withImpliedCollections } from './support/tree-fetch.js';

/** What a capture of single resources (`redfish-partial/`) shows, and so what its profile is held to. */
const singleResourceFields = ['dialect', 'systemFields', 'systems', 'bmcFields', 'managers', 'biosVersion', 'sessionLimitHint', 'health', 'redfishVersion'] as const;
const shown = (fingerprint: TreeFingerprint, holds: 'full' | 'single-resources' | undefined): Partial<TreeFingerprint> =>
  holds === 'single-resources' ? Object.fromEntries(singleResourceFields.map((field) => [field, fingerprint[field]])) : fingerprint;

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
      // A capture of single resources has no collections: they are listed from its folders, as the mockup server does.
      const fromCapture = await fingerprintTree(withImpliedCollections(readMockupTree(captureDir)));
      const fromProfile = await fingerprintTree(generateTree(profile));
      expect(shown(fromProfile.fingerprint, profile.captureHolds)).toEqual(shown(fromCapture.fingerprint, profile.captureHolds));
    });
  });

  describe.skipIf(!fixtures.runnable)(fixtures.title('a capture of single resources: its Thermal and Power as the profile serves them'), () => {
    type Json = Record<string, unknown>;
    /** What a legacy Thermal or Power says, reduced to its layout: counts, states, fan units, whether watts are given. */
    const layout = (body: Json) => ({
      temperatures: ((body.Temperatures as Json[] | undefined) ?? []).map((t) => (t.Status as Json | undefined)?.State ?? 'none'),
      fans: ((body.Fans as Json[] | undefined) ?? []).map((f) => f.ReadingUnits ?? f.Units ?? 'none'),
      supplies: ((body.PowerSupplies as Json[] | undefined) ?? []).map((p) => (p.Status as Json | undefined)?.State ?? 'none'),
      consumedWatts: typeof ((body.PowerControl as Json[] | undefined)?.[0]?.PowerConsumedWatts ?? body.PowerConsumedWatts) === 'number',
    });
    it.each(held.filter((profile) => profile.captureHolds === 'single-resources').map((profile) => [profile.name, profile] as const))(
      '%s: the same temperatures (and which are Absent), fans and their units, supplies, and power reading',
      async (_name, profile) => {
        const capture = readMockupTree(join(fixtures.require(), profile.heldAgainst!));
        const generated = treeFetch(generateTree(profile));
        const held = [...capture.keys()].filter((path) => /^\/redfish\/v1\/Chassis\/[^/]+\/(Thermal|Power)$/.test(path));
        expect(held.length).toBeGreaterThan(0);
        for (const path of held) expect(layout((await generated(path)) as Json), path).toEqual(layout(capture.get(path) as Json));
      },
    );
  });

  describe.skipIf(!fixtures.runnable)(fixtures.title('each profile serves the system event logs its capture holds'), () => {
    it.each(held.filter((profile) => profile.captureHolds !== 'single-resources').map((profile) => [profile.name, profile] as const))(
      '%s: the same SEL logs, with entries where the capture has entries',
      async (_name, profile) => {
        const sel = async (tree: Parameters<typeof fingerprintTree>[0]) => {
          const { reading } = await fingerprintTree(tree);
          const data = reading.observations.find((o) => o.type === 'SelEntriesObserved')!.data as { logs: string[]; entries: Array<{ log: string }> };
          return data.logs.map((log) => ({ log, hasEntries: data.entries.some((entry) => entry.log === log) })).sort((a, b) => a.log.localeCompare(b.log));
        };
        const captureDir = join(fixtures.require(), profile.heldAgainst!);
        expect(await sel(generateTree(profile))).toEqual(await sel(readMockupTree(captureDir)));
      },
    );
  });
});
