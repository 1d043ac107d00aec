/**
 * The tree generator: a pure function from a vendor profile to a Redfish tree that the drivers read as they read
 * a real controller. No sockets, no database: trees are read in memory.
 */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { bmcProfiles, generateTree, type BmcProfile } from '../../src/sim/index.js';
import { expandRepeated, stableUuid } from '../../src/sim/generate-tree.js';
import { fingerprintTree } from './support/tree-fingerprint.js';

/** Every `@odata.id` inside a body (fragments such as `Thermal#/Fans/0` name the resource before `#`). */
function linksIn(value: unknown, out: string[] = []): string[] {
  if (Array.isArray(value)) for (const item of value) linksIn(item, out);
  else if (value !== null && typeof value === 'object') {
    for (const [key, item] of Object.entries(value as Record<string, unknown>)) {
      if (key === '@odata.id' && typeof item === 'string') out.push(item);
      else linksIn(item, out);
    }
  }
  return out;
}

const canonical = (link: string): string => {
  const path = link.split('#')[0]!;
  return path.length > 1 ? path.replace(/\/+$/, '') : path;
};

describe('generateTree', () => {
  it.each(bmcProfiles.map((p) => [p.name, p] as const))('%s: every link in the tree leads to a resource of the tree', (_name, profile) => {
    const tree = generateTree(profile);
    const paths = new Set([...tree.keys()].map((path) => path.toLowerCase()));
    const dangling = [...tree.values()].flatMap((body) => linksIn(body)).map(canonical).filter((link) => !paths.has(link.toLowerCase()));
    expect([...new Set(dangling)]).toEqual([]);
  });

  it.each(bmcProfiles.map((p) => [p.name, p] as const))('%s: the same profile always yields the same tree', (_name, profile) => {
    expect(JSON.stringify([...generateTree(profile)])).toBe(JSON.stringify([...generateTree(profile)]));
  });

  it.each(bmcProfiles.map((p) => [p.name, p] as const))(
    '%s: is read by the dialect made for its vendor, with identity, firmware and the BMC version the profile states',
    async (_name, profile) => {
      const { fingerprint, reading } = await fingerprintTree(generateTree(profile));
      expect(fingerprint.dialect).not.toBe('generic');
      // A serial wherever the profile states one (the X10DFF's System has none, as its capture shows).
      const serialStated = profile.systems.some((system) => system.serialNumber) || profile.chassis.some((chassis) => chassis.serialNumber);
      expect(fingerprint.systemFields).toEqual(expect.arrayContaining(['manufacturer', 'model', ...(serialStated ? ['serialNumber'] : [])]));
      // Redfish 1.0 services (iDRAC 8, iLO 4, X10) have no UpdateService: no firmware inventory to list.
      if (!profile.updateService.absent) expect(fingerprint.firmwareIds.length).toBeGreaterThan(0);
      const inventory = reading.observations.find((o) => o.type === 'NodeInventoryObserved')!.data as { bmc: { firmwareVersion?: string } };
      expect(inventory.bmc.firmwareVersion).toContain(profile.bmcFirmware.version);
      expect(reading.observations.every((o) => (o.data as { unreadable?: unknown[] }).unreadable === undefined)).toBe(true);
    },
  );

  it('writes the BMC firmware version wherever the profile says {bmc}', () => {
    const dell = bmcProfiles.find((p) => p.name === 'dell')!;
    const changed: BmcProfile = { ...dell, bmcFirmware: { ...dell.bmcFirmware, version: '9.99.99.99' } };
    const tree = generateTree(changed);
    expect([...tree.keys()].some((path) => path.includes('Installed-25227-9.99.99.99__iDRAC.Embedded.1-1'))).toBe(true);
    expect(JSON.stringify([...tree.values()])).not.toContain('{bmc}');
  });

  it('leaves no {n} placeholder unexpanded in any profile', () => {
    for (const profile of bmcProfiles) expect(JSON.stringify([...generateTree(profile)]), profile.name).not.toContain('{n}');
  });
});

describe('expandRepeated', () => {
  it('numbers copies from `from` and replaces {n} in every string, nested ones included', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 40 }), fc.integer({ min: 0, max: 9 }), (count, from) => {
        const parts = expandRepeated([{ id: 'CPU.Socket.{n}', count, from, nested: { name: 'CPU {n} Temp' } }]);
        expect(parts).toHaveLength(count);
        parts.forEach((part, index) => {
          expect(part.id).toBe(`CPU.Socket.${from + index}`);
          expect(part.nested.name).toBe(`CPU ${from + index} Temp`);
          expect('count' in part || 'from' in part).toBe(false);
        });
      }),
    );
  });
});

describe('stableUuid', () => {
  it('is a well-formed version-4 UUID, the same for the same key and different for different keys', () => {
    fc.assert(
      fc.property(fc.string(), fc.string(), (a, b) => {
        expect(stableUuid(a)).toMatch(/^[0-9A-F]{8}-[0-9A-F]{4}-4[0-9A-F]{3}-[89AB][0-9A-F]{3}-[0-9A-F]{12}$/);
        expect(stableUuid(a)).toBe(stableUuid(a));
        if (a !== b) expect(stableUuid(a)).not.toBe(stableUuid(b));
      }),
    );
  });
});
