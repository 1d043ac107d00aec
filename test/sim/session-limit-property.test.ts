import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseScenario, startSimulator, type Simulator } from '../../src/sim/index.ts';
import { agent, call, get, login } from './sim-client.ts';

describe('session limit, for all bursts', { timeout: 30_000 }, () => {
  let sim: Simulator;
  beforeAll(async () => {
    sim = await startSimulator({
      scenario: parseScenario({
        name: 'property',
        fleet: { bmcs: 4, mix: [{ fixture: 'dell', sessionLimit: 3 }, { fixture: 'nvidia_gbswitch', sessionLimit: 5 }] },
        behaviour: { overloadAfter: '1h', latencyScale: 0.5 },
      }),
      clockFactor: 1,
    });
  });
  afterAll(async () => {
    await sim.close();
    await agent.close();
  });

  it('a BMC never serves more sessions than its limit, and turns away only what is beyond it', async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 0, max: 3 }), fc.integer({ min: 0, max: 6 }), fc.integer({ min: 0, max: 6 }), async (which, logins, gets) => {
        const bmc = sim.bmcs[which]!;
        const rejectedBefore = sim.bmcStats(bmc.id)!.rejections;
        const replies = await Promise.all([
          ...Array.from({ length: logins }, () => login(bmc)),
          ...Array.from({ length: gets }, () => get(bmc, '/redfish/v1/Chassis')),
        ]);
        const served = replies.filter((reply) => reply.status === 200 || reply.status === 201);
        const rejected = replies.filter((reply) => reply.status === 503);
        const stats = sim.bmcStats(bmc.id)!;
        // Close what was opened, so the next burst starts from an idle BMC.
        await Promise.all(
          replies
            .filter((reply) => reply.status === 201)
            .map((reply) => call(`${bmc.baseUrl}${reply.headers['location'] as string}`, { method: 'DELETE', headers: { 'x-auth-token': reply.headers['x-auth-token'] as string } })),
        );
        expect(served.length + rejected.length).toBe(logins + gets);
        expect(stats.sessionsPeak).toBeLessThanOrEqual(bmc.sessionLimit);
        expect(served.length).toBeGreaterThanOrEqual(Math.min(logins + gets, 1));
        if (logins + gets <= bmc.sessionLimit) expect(rejected).toHaveLength(0);
        // Logins stay open, so at most `limit` of the burst's logins succeed.
        expect(replies.slice(0, logins).filter((reply) => reply.status === 201).length).toBeLessThanOrEqual(bmc.sessionLimit);
        expect(stats.rejections - rejectedBefore).toBe(rejected.length);
      }),
      { numRuns: 25 },
    );
  }, 60_000);
});
