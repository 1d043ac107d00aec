import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { parseScenario, startSimulator, type Simulator } from '../../src/sim/index.ts';
import { agent, answerWithin, call, login, messageIds } from './sim-client.ts';

describe('overload', { timeout: 30_000 }, () => {
  let sim: Simulator | undefined;
  afterEach(async () => {
    await sim?.close();
  });

  it('a BMC held over its limit resets and goes dark', async () => {
    // Given a Dell BMC that resets after 60 s over its limit and stays dark for 3 minutes, on a clock 100 times faster
    sim = await startSimulator({
      scenario: parseScenario({
        name: 'overload',
        fleet: { bmcs: 2, mix: [{ fixture: 'dell' }] },
        behaviour: { latencyScale: 0, overloadAfter: '60s', resetDark: '3m' },
      }),
      clockFactor: 100,
    });
    const [bmc, neighbour] = sim.bmcs as [typeof sim.bmcs[0], typeof sim.bmcs[0]];
    const sessions = [];
    for (let i = 0; i < bmc.sessionLimit; i++) sessions.push(await login(bmc));
    const oldToken = sessions[0]!.headers['x-auth-token'] as string;

    // When clients keep asking for more sessions than it serves
    const first = await login(bmc);
    expect(first.status).toBe(503);
    expect(messageIds(first.body)).toEqual(['IDRAC.2.1.RAC0218']);
    await sim.clock.sleep(30_000);
    expect((await login(bmc)).status).toBe(503); // over its limit for 30 s: still answering
    await sim.clock.sleep(31_000);

    // Then after 60 s it stops answering, its neighbour does not
    expect(await answerWithin(bmc, '/redfish/v1/Systems', 300)).toBe('timeout');
    expect(sim.stats()).toMatchObject({ resets: 1, dark: 1 });
    expect((await answerWithin(neighbour, '/redfish/v1/Systems', 2000)) as { status: number }).toMatchObject({ status: 200 });

    // And when it comes back every session it had is gone and a new login succeeds
    await sim.clock.sleep(180_000);
    expect((await call(`${bmc.baseUrl}/redfish/v1/Systems`, { headers: { 'x-auth-token': oldToken } })).status).toBe(401);
    expect((await login(bmc)).status).toBe(201);
    expect(sim.bmcStats(bmc.id)).toMatchObject({ resets: 1, dark: false, sessionsNow: 1 });
  });

  it('a BMC kept exactly at its limit without rejections never resets', async () => {
    sim = await startSimulator({
      scenario: parseScenario({ name: 'at-limit', fleet: { bmcs: 1, mix: [{ fixture: 'hpe' }] }, behaviour: { latencyScale: 0, overloadAfter: '5s' } }),
      clockFactor: 100,
    });
    const bmc = sim.bmcs[0]!;
    const tokens: string[] = [];
    for (let i = 0; i < bmc.sessionLimit; i++) tokens.push((await login(bmc)).headers['x-auth-token'] as string);
    for (let round = 0; round < 5; round++) {
      await sim.clock.sleep(2_000);
      for (const token of tokens) {
        expect((await call(`${bmc.baseUrl}/redfish/v1/Systems/1`, { headers: { 'x-auth-token': token } })).status).toBe(200);
      }
    }
    expect(sim.stats()).toMatchObject({ resets: 0, rejections: 0 });
  });
});

afterAll(async () => {
  await agent.close();
});
