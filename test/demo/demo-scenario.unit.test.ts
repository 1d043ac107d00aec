/**
 * `npm start -- --bmcs N` serves exactly N simulated BMCs: the demo's scenario is resized to the count asked for,
 * keeping every rack, PDU, ToR and CDU its script names.
 */
import { describe, expect, it } from 'vitest';
import { demoMinimumBmcs, demoScenario } from '../../src/demo/demo-scenario.js';
import { planFleet, SimError } from '../../src/sim/index.js';

const plan = (bmcs: number) => {
  const scenario = demoScenario(bmcs);
  return planFleet(scenario, scenario.fleet.mix.map((entry) => entry.firmware ?? [{ version: 'x', share: 1 }]));
};

describe('the demo scenario', () => {
  it.each([32, 50, 300, 301, 2000, 2048, 25_000])('plans exactly the %i BMCs asked for', (bmcs) => {
    expect(plan(bmcs).bmcs).toHaveLength(bmcs);
  });

  it('keeps every rack, PDU and CDU its script names at the smallest size', () => {
    const racks = new Set(plan(demoMinimumBmcs()).bmcs.map((bmc) => bmc.placement.rack));
    const pdus = new Set(plan(demoMinimumBmcs()).bmcs.map((bmc) => bmc.placement.pdu));
    const cdus = new Set(plan(demoMinimumBmcs()).bmcs.map((bmc) => bmc.placement.cdu));
    for (const rack of ['ams1-r003', 'ams1-r004', 'ams1-r008', 'fra2-r010']) expect(racks.has(rack), rack).toBe(true);
    expect(pdus.has('ams1-p002')).toBe(true);
    expect(cdus.has('fra2-cdu002')).toBe(true);
  });

  it('fills racks to 32 nodes, the shorter ones one node shorter', () => {
    const perRack = new Map<string, number>();
    for (const bmc of plan(2000).bmcs) perRack.set(bmc.placement.rack, (perRack.get(bmc.placement.rack) ?? 0) + 1);
    const sizes = [...perRack.values()];
    expect(Math.max(...sizes)).toBeLessThanOrEqual(32);
    expect(Math.max(...sizes) - Math.min(...sizes)).toBeLessThanOrEqual(1);
  });

  it('leaves out the script events aimed at BMCs a small fleet does not have', () => {
    const targets = demoScenario(300).events.flatMap((event) => (event.target as { bmc?: string[] }).bmc ?? []);
    expect(targets.every((id) => Number(id.slice(4)) < 300)).toBe(true);
    expect(demoScenario(2000).events.some((event) => ((event.target as { bmc?: string[] }).bmc ?? []).includes('bmc-00700'))).toBe(true);
  });

  it('refuses fewer BMCs than its script needs, naming the minimum', () => {
    expect(() => demoScenario(10)).toThrowError(SimError);
    expect(() => demoScenario(10)).toThrowError(/at least 32 BMCs/);
  });
});
