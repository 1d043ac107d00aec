import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { assignShards, parseShardsPerSite, shardOf, siteOfShard } from '../../src/cluster/index.js';

const members = (...ids: string[]) => ids.map((processId) => ({ processId, pinned: null }));

describe('which process polls which shard', () => {
  it('every shard goes to exactly one live member, and loads differ by at most one', () => {
    fc.assert(
      fc.property(fc.uniqueArray(fc.stringMatching(/^[a-z]{1,6}$/), { minLength: 0, maxLength: 40 }), fc.integer({ min: 1, max: 7 }), (shards, count) => {
        const live = members(...Array.from({ length: count }, (_, i) => `p${i}`));
        const assignment = assignShards(shards, live, []);
        expect([...assignment.keys()].sort()).toEqual([...shards].sort());
        const loads = live.map((m) => [...assignment.values()].filter((owner) => owner === m.processId).length);
        expect(Math.max(...loads) - Math.min(...loads)).toBeLessThanOrEqual(1);
      }),
    );
  });

  it('a member joining takes only its share: shards stay with their live owners otherwise', () => {
    const shards = ['a', 'b', 'c', 'd', 'e', 'f'];
    const before = assignShards(shards, members('p1', 'p2'), []);
    const leases = shards.map((shard) => ({ shard, owner: before.get(shard)!, live: true }));
    const after = assignShards(shards, members('p1', 'p2', 'p3'), leases);
    const moved = shards.filter((shard) => after.get(shard) !== before.get(shard));
    expect(moved).toHaveLength(2);
    expect(moved.every((shard) => after.get(shard) === 'p3')).toBe(true);
  });

  it('a member that died loses its shards to the live ones, and a shard still leased by it is not kept with it', () => {
    const leases = [
      { shard: 'a', owner: 'dead', live: true },
      { shard: 'b', owner: 'p1', live: true },
    ];
    const assignment = assignShards(['a', 'b'], members('p1', 'p2'), leases);
    expect(assignment.get('b')).toBe('p1');
    expect(assignment.get('a')).toBe('p2');
  });

  it('pinned shards and sites go to the member that pinned them, and only those to it', () => {
    const assignment = assignShards(['ams1', 'fra1@0of2', 'fra1@1of2', 'par1'], [{ processId: 'pinner', pinned: ['fra1'] }, ...members('p1', 'p2')], []);
    expect(assignment.get('fra1@0of2')).toBe('pinner');
    expect(assignment.get('fra1@1of2')).toBe('pinner');
    expect(new Set([assignment.get('ams1'), assignment.get('par1')])).toEqual(new Set(['p1', 'p2']));
    // Only pinned members live: the unpinned shards wait for a member that may take them.
    expect(assignShards(['ams1', 'fra1'], [{ processId: 'pinner', pinned: ['fra1'] }], []).has('ams1')).toBe(false);
  });

  it('a node belongs to one hash range of its site, the same in every process', () => {
    const config = { shardsPerSite: { fra1: 4 } };
    const counts = new Map<string, number>();
    for (let i = 0; i < 4000; i += 1) {
      const shard = shardOf('fra1', `bmc-${i}`, config);
      expect(shardOf('fra1', `bmc-${i}`, config)).toBe(shard);
      expect(siteOfShard(shard)).toBe('fra1');
      counts.set(shard, (counts.get(shard) ?? 0) + 1);
    }
    expect([...counts.keys()].sort()).toEqual(['fra1@0of4', 'fra1@1of4', 'fra1@2of4', 'fra1@3of4']);
    for (const count of counts.values()) expect(count).toBeGreaterThan(850);
    expect(shardOf('ams1', 'bmc-1', config)).toBe('ams1');
  });

  it('--site-shards names what is wrong', () => {
    expect(parseShardsPerSite('fra1=4, ams1=2')).toEqual({ fra1: 4, ams1: 2 });
    expect(() => parseShardsPerSite('fra1=0')).toThrow(/'fra1=0' is not <site>=<shards>/);
    expect(() => parseShardsPerSite('fra1')).toThrow(/'fra1' is not/);
  });
});
