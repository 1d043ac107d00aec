import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { loadScenario, parseScenario, startSimulator, type Simulator } from '../../src/sim/index.ts';
import { agent, answerWithin } from './sim-client.ts';

describe('topology and scheduled events', { timeout: 30_000 }, () => {
  let sim: Simulator | undefined;
  afterEach(async () => {
    await sim?.close();
  });

  it('a PDU failure darkens every node it feeds and no other', async () => {
    // Given two racks on PDU p-1, one rack on PDU p-2, and p-1 failing at 120 s for 10 minutes
    sim = await startSimulator({
      scenario: parseScenario({
        name: 'pdu',
        fleet: { mix: [{ fixture: 'supermicro' }, { fixture: 'nvidia_gh200' }] },
        sites: [
          {
            id: 'lab',
            racks: [
              { id: 'r1', nodes: 3, pdu: 'p-1', tor: 't-1', cdu: 'c-1' },
              { id: 'r2', nodes: 3, pdu: 'p-1', tor: 't-2', cdu: 'c-1' },
              { id: 'r3', nodes: 3, pdu: 'p-2', tor: 't-2', cdu: 'c-1' },
            ],
          },
        ],
        behaviour: { latencyScale: 0 },
        events: [{ at: '120s', fault: 'dark', target: { pdu: 'p-1' }, duration: '10m' }],
      }),
      clockFactor: 100,
    });
    const startedAt = sim.clock.now();
    const fed = sim.bmcs.filter((bmc) => bmc.pdu === 'p-1');
    const others = sim.bmcs.filter((bmc) => bmc.pdu !== 'p-1');
    expect(fed).toHaveLength(6);
    const before = await Promise.all(sim.bmcs.map((bmc) => answerWithin(bmc, '/redfish/v1/Chassis', 1000)));
    expect(before).toEqual(sim.bmcs.map(() => expect.objectContaining({ status: 200 })));

    // When 120 s pass
    await sim.clock.sleep(125_000 - (sim.clock.now() - startedAt));

    // Then every node of p-1 is dark together, and every other node answers
    expect(sim.stats()).toMatchObject({ dark: 6, eventsFired: 1, faultsActive: 1 });
    const fedAnswers = await Promise.all(fed.map((bmc) => answerWithin(bmc, '/redfish/v1/Chassis', 300)));
    expect(fedAnswers).toEqual(fed.map(() => 'timeout'));
    for (const bmc of others) expect(await answerWithin(bmc, '/redfish/v1/Chassis', 2000)).toMatchObject({ status: 200 });
  });

  it('a rack fault injected at run time darkens that rack until it ends', async () => {
    sim = await startSimulator({
      scenario: parseScenario({ name: 'racks', fleet: { mix: [{ fixture: 'nvidia_gbswitch' }] }, sites: [{ id: 's', racks: 2, nodesPerRack: 2 }], behaviour: { latencyScale: 0 } }),
      clockFactor: 100,
    });
    const response = await fetch(`${sim.controlUrl}/sim/faults`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ kind: 'dark', target: { rack: 's-r002' }, duration: '30s' }),
    });
    expect(response.status).toBe(201);
    const { fault } = (await response.json()) as { fault: { bmcs: string[] } };
    expect(fault.bmcs).toEqual(sim.bmcs.filter((bmc) => bmc.rack === 's-r002').map((bmc) => bmc.id));
    const darkOne = sim.bmcs.find((bmc) => bmc.rack === 's-r002')!;
    expect(await answerWithin(darkOne, '/redfish/v1', 300)).toBe('timeout');
    await sim.clock.sleep(31_000);
    expect(await answerWithin(darkOne, '/redfish/v1', 2000)).toMatchObject({ status: 200 });
    expect(sim.stats().dark).toBe(0);
  });

  it('random faults hit one BMC of their target at a time, at about the configured rate', async () => {
    sim = await startSimulator({
      scenario: parseScenario({
        name: 'random',
        fleet: { mix: [{ fixture: 'nvidia_dpu' }] },
        sites: [{ id: 's', racks: 2, nodesPerRack: 5 }],
        behaviour: { latencyScale: 0 },
        randomFaults: [{ fault: 'dark', target: { rack: 's-r001' }, every: '5s', duration: '20s' }],
      }),
      clockFactor: 100,
    });
    const rack = new Set(sim.bmcs.filter((bmc) => bmc.rack === 's-r001').map((bmc) => bmc.id));
    const hit = new Set<string>();
    for (let i = 0; i < 15; i++) {
      await sim.clock.sleep(10_000);
      for (const fault of sim.faults()) for (const id of fault.bmcs) hit.add(id);
      expect(sim.fleet().filter((bmc) => !rack.has(bmc.id)).every((bmc) => sim!.bmcStats(bmc.id)!.dark === false)).toBe(true);
    }
    // 150 s at one fault every 5 s on average: about 30
    expect(sim.stats().eventsFired).toBeGreaterThan(10);
    expect(sim.stats().eventsFired).toBeLessThan(60);
    expect([...hit].every((id) => rack.has(id))).toBe(true);
    expect(hit.size).toBeGreaterThan(1);
  });

  it('a scenario event that needs a duration and has none is rejected naming the field', () => {
    expect(() => parseScenario({ name: 'x', fleet: { bmcs: 1, mix: [{ fixture: 'dell' }] }, events: [{ at: 5, fault: 'dark', target: { all: true } }] })).toThrow(
      /events\.0\.duration: required for dark/,
    );
  });

  it('a fault naming a PDU that feeds nothing is refused with the field named', async () => {
    sim = await startSimulator({ bmcs: 2, mockups: ['dell'], behaviour: { latencyScale: 0 } });
    const response = await fetch(`${sim.controlUrl}/sim/faults`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ kind: 'dark', target: { pdu: 'p-404' }, duration: 10 }) });
    expect(response.status).toBe(404);
    expect(await response.json()).toMatchObject({ code: 'SIM_UNKNOWN_TARGET', data: { field: 'target.pdu' } });
    const bad = await fetch(`${sim.controlUrl}/sim/faults`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ kind: 'dark', target: { all: true }, duration: 'soon' }) });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { message: string }).message).toContain('duration: not a duration');
  });

  it('a web page cannot inject a fault: a text/plain POST (sent cross-origin without a preflight) is refused, nothing injected', async () => {
    sim = await startSimulator({ bmcs: 2, mockups: ['dell'], behaviour: { latencyScale: 0 } });
    const response = await fetch(`${sim.controlUrl}/sim/faults`, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: JSON.stringify({ kind: 'dark', target: { all: true }, duration: '1m' }) });
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ code: 'SIM_FAULT_INVALID', data: { field: 'content-type' } });
    expect(sim.faults()).toEqual([]);
  });

  it('a scenario with an invalid field is rejected naming that field', () => {
    expect(() => parseScenario({ name: 'x', fleet: { bmcs: 3, mix: [{ fixture: 'dell', share: -1 }] } })).toThrow(/fleet\.mix\.0\.share/);
    expect(() => parseScenario({ name: 'x', fleet: { bmcs: 3, mix: [{ fixture: 'dell' }] }, events: [{ at: '1s', fault: 'melt', target: { all: true } }] })).toThrow(
      /events\.0\.fault/,
    );
    expect(() => parseScenario({ name: 'x', fleet: { bmcs: 5, mix: [{ fixture: 'dell' }] }, sites: [{ id: 's', racks: 1, nodesPerRack: 4 }] })).toThrow(/fleet\.bmcs/);
  });

  it('the example scenarios are valid', () => {
    const examples = new URL('../../examples/', import.meta.url);
    for (const file of ['scenario-demo.yaml', 'scenario-pdu-failure.yaml']) {
      const scenario = loadScenario(new URL(file, examples).pathname);
      expect(scenario.events.length).toBeGreaterThan(0);
    }
  });
});

afterAll(async () => {
  await agent.close();
});
