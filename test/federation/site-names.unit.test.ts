import { describe, expect, it } from 'vitest';
import { siteName, siteRebuildSchema, siteSchema, siteSlot, siteStream, siteSubscription } from '../../src/federation/site-names.js';

describe('site names', () => {
  it('accepts lower-case letters, digits and hyphens, and maps them to identifiers', () => {
    expect(siteName('ams1')).toBe('ams1');
    expect(siteSchema('site-1')).toBe('site_site_1');
    expect(siteSubscription('fra-2')).toBe('fleet_site_fra_2');
    expect(siteSlot('fra-2', 'a1b2c3d4')).toBe('fleet_a1b2c3d4_fra_2');
    expect(siteRebuildSchema('ams1')).toBe('rebuild_ams1');
    expect(siteStream('ams1')).toBe('site-ams1');
  });

  it.each(['', 'AMS1', 'ams_1', '-ams', 'ams 1', "ams'1", 'a'.repeat(41), 'ams1;drop'])('refuses %j (it becomes part of identifiers and literals)', (name) => {
    expect(() => siteName(name)).toThrow(/not a site name/);
  });

  it('keeps every identifier within PostgreSQL 63 bytes', () => {
    const longest = 'a'.repeat(40);
    for (const identifier of [siteSchema(longest), siteSubscription(longest), siteSlot(longest, 'a1b2c3d4'), siteRebuildSchema(longest)]) expect(identifier.length).toBeLessThanOrEqual(63);
  });
});
