import { afterAll, describe, expect, it } from 'vitest';
import { parseScenario, startSimulator } from '../../src/sim/index.ts';
import { agent, get } from './sim-client.ts';

type Collection = { Members: Array<{ '@odata.id': string }> };

describe('addressing', { timeout: 30_000 }, () => {
  it('in path-prefix mode each BMC has its own base URL and its links lead back to it', async () => {
    const sim = await startSimulator({
      scenario: parseScenario({ name: 'prefix', fleet: { bmcs: 3, mix: [{ fixture: 'hpe' }] }, behaviour: { latencyScale: 0 } }),
      addressing: 'path-prefix',
    });
    try {
      expect(sim.addressing).toBe('path-prefix');
      const bmc = sim.bmcs[2]!;
      expect(bmc.baseUrl).toBe(`${sim.controlUrl}/bmc/${bmc.id}`);
      const systems = (await get(bmc, '/redfish/v1/Systems')).body as Collection;
      const link = systems.Members[0]!['@odata.id'];
      expect(link).toBe(`/bmc/${bmc.id}/redfish/v1/Systems/1`);
      // A client resolving @odata.id against the base URL's origin lands on the same BMC
      const followed = await get({ ...bmc, baseUrl: new URL(bmc.baseUrl).origin }, link);
      expect(followed.status).toBe(200);
      expect(followed.body).toMatchObject({ UUID: ((await get(bmc, '/redfish/v1/Systems/1')).body as { UUID: string }).UUID });
    } finally {
      await sim.close();
    }
  });

  it('in wildcard mode each BMC answers on its own loopback address through one listener', async () => {
    const sim = await startSimulator({
      scenario: parseScenario({ name: 'wildcard', fleet: { bmcs: 300, mix: [{ fixture: 'nvidia_gbswitch' }] }, behaviour: { latencyScale: 0 } }),
      addressing: 'wildcard',
    });
    try {
      const last = sim.bmcs[299]!;
      expect(last.baseUrl).toMatch(/^http:\/\/127\.1\.1\.46:\d+$/); // 300th BMC: 127.1.(299 / 254).(299 % 254 + 1)
      const a = await get(sim.bmcs[0]!, '/redfish/v1/Managers/BMC_0');
      const b = await get(last, '/redfish/v1/Managers/BMC_0');
      expect(a.status).toBe(200);
      expect((a.body as { UUID: string }).UUID).not.toBe((b.body as { UUID: string }).UUID);
      expect(sim.bmcStats(last.id)!.requests).toBe(1);
    } finally {
      await sim.close();
    }
  });
});

afterAll(async () => {
  await agent.close();
});
