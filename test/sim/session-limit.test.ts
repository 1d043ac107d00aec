import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseScenario, startSimulator, type Simulator } from '../../src/sim/index.ts';
import { agent, basic, call, get, login, messageIds } from './sim-client.ts';

describe('session limits', { timeout: 30_000 }, () => {
  let sim: Simulator;
  beforeAll(async () => {
    sim = await startSimulator({
      scenario: parseScenario({
        name: 'session-limits',
        fleet: {
          bmcs: 6,
          mix: [
            { fixture: 'dell', count: 2 },
            { fixture: 'hpe', count: 2 },
            { fixture: 'nvidia_gb200', count: 2 },
          ],
        },
        behaviour: { latencyScale: 0, overloadAfter: '1h' },
      }),
    });
  });
  afterAll(async () => {
    await sim.close();
  });

  it('a BMC rejects the session beyond its limit with its vendor\'s own error', async () => {
    const dell = sim.bmcs.find((bmc) => bmc.fixture === 'dell')!;
    for (let i = 0; i < dell.sessionLimit; i++) expect((await login(dell)).status).toBe(201);
    const beyond = await login(dell);
    expect(beyond.status).toBe(503);
    expect(messageIds(beyond.body)).toEqual(['IDRAC.2.1.RAC0218']);
    expect((beyond.body as { error: { code: string } }).error.code).toBe('Base.1.5.GeneralError');

    const hpe = sim.bmcs.find((bmc) => bmc.fixture === 'hpe')!;
    for (let i = 0; i < hpe.sessionLimit; i++) expect((await login(hpe)).status).toBe(201);
    const hpeBeyond = await login(hpe);
    expect(hpeBeyond.status).toBe(401);
    expect((hpeBeyond.body as { error: { code: string } }).error.code).toBe('iLO.0.10.ExtendedInfo');
    expect(messageIds(hpeBeyond.body)).toEqual(['Base.1.4.NoValidSession']);

    const openbmc = sim.bmcs.find((bmc) => bmc.fixture === 'nvidia_gb200')!;
    for (let i = 0; i < openbmc.sessionLimit; i++) expect((await login(openbmc)).status).toBe(201);
    const openbmcBeyond = await login(openbmc);
    expect(openbmcBeyond.status).toBe(503);
    expect(messageIds(openbmcBeyond.body)).toEqual(['Base.1.13.0.SessionLimitExceeded']);
    expect(sim.bmcStats(dell.id)).toMatchObject({ sessionsNow: dell.sessionLimit, sessionsPeak: dell.sessionLimit, rejections: 1 });
  });

  it('a deleted session frees its slot for the next login', async () => {
    const dell = sim.bmcs.filter((bmc) => bmc.fixture === 'dell')[1]!;
    const sessions = [];
    for (let i = 0; i < dell.sessionLimit; i++) sessions.push(await login(dell));
    expect((await login(dell)).status).toBe(503);
    const first = sessions[0]!;
    const token = first.headers['x-auth-token'] as string;
    const location = first.headers['location'] as string;
    expect((await call(`${dell.baseUrl}/redfish/v1/Systems`, { headers: { 'x-auth-token': token } })).status).toBe(200);
    expect((await call(`${dell.baseUrl}${location}`, { method: 'DELETE', headers: { 'x-auth-token': token } })).status).toBe(204);
    expect((await call(`${dell.baseUrl}/redfish/v1/Systems`, { headers: { 'x-auth-token': token } })).status).toBe(401);
    expect((await login(dell)).status).toBe(201);
  });

  it('an idle session expires after the idle timeout and frees its slot', async () => {
    const fast = await startSimulator({
      scenario: parseScenario({ name: 'idle', fleet: { bmcs: 1, mix: [{ fixture: 'hpe' }] }, behaviour: { latencyScale: 0, sessionIdleTimeout: '10m', overloadAfter: '1h' } }),
      clockFactor: 500,
    });
    try {
      const hpe = fast.bmcs[0]!;
      for (let i = 0; i < hpe.sessionLimit; i++) expect((await login(hpe)).status).toBe(201);
      expect((await login(hpe)).status).toBe(401);
      await fast.clock.sleep(601_000); // 10 minutes idle, on a clock 500 times faster
      expect((await login(hpe)).status).toBe(201);
    } finally {
      await fast.close();
    }
  });

  it('in-flight basic-auth requests count as sessions', async () => {
    const slow = await startSimulator({
      scenario: parseScenario({ name: 'basic', fleet: { bmcs: 1, mix: [{ fixture: 'supermicro' }] }, behaviour: { overloadAfter: '1h', latencyScale: 4 } }),
      clockFactor: 1,
    });
    try {
      const bmc = slow.bmcs[0]!;
      // Supermicro answers in about 250 ms (here four times that): all requests overlap, so only `sessionLimit` of them are served.
      const replies = await Promise.all(Array.from({ length: bmc.sessionLimit + 3 }, () => get(bmc, '/redfish/v1/Systems/1')));
      const statuses = replies.map((reply) => reply.status).sort();
      expect(statuses.filter((status) => status === 200)).toHaveLength(bmc.sessionLimit);
      expect(statuses.filter((status) => status === 503)).toHaveLength(3);
      expect(messageIds(replies.find((reply) => reply.status === 503)!.body)).toEqual(['Base.1.8.SessionLimitExceeded']);
      expect(slow.bmcStats(bmc.id)).toMatchObject({ sessionsPeak: bmc.sessionLimit, sessionsNow: 0, rejections: 3 });
    } finally {
      await slow.close();
    }
  });

  it('a request without credentials is refused, and the service root needs none', async () => {
    const bmc = sim.bmcs[5]!;
    expect((await call(`${bmc.baseUrl}/redfish/v1/Systems`)).status).toBe(401);
    expect((await call(`${bmc.baseUrl}/redfish/v1`)).status).toBe(200);
    expect((await call(`${bmc.baseUrl}/redfish/v1/Systems`, { headers: { authorization: basic(bmc) } })).status).toBe(200);
  });
});

afterAll(async () => {
  await agent.close();
});
