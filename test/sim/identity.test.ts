import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseScenario, startSimulator, type Simulator } from '../../src/sim/index.ts';
import { agent, get } from './sim-client.ts';

type Json = Record<string, unknown>;

describe('identity', { timeout: 30_000 }, () => {
  let sim: Simulator;
  beforeAll(async () => {
    sim = await startSimulator({
      scenario: parseScenario({
        name: 'identity',
        // Two mix entries of the same capture: still one shared tree.
        fleet: { bmcs: 40, mix: [{ fixture: 'dell', share: 1 }, { fixture: 'dell', share: 1 }, { fixture: 'hpe', share: 2 }] },
        behaviour: { latencyScale: 0 },
      }),
    });
  });
  afterAll(async () => {
    await sim.close();
    await agent.close();
  });

  it('identity is substituted per BMC and the capture tree is shared', async () => {
    const dells = sim.bmcs.filter((bmc) => bmc.fixture === 'dell');
    expect(dells).toHaveLength(20);
    const seen = { serial: new Set<string>(), uuid: new Set<string>(), mac: new Set<string>(), host: new Set<string>() };
    for (const bmc of dells) {
      const system = (await get(bmc, '/redfish/v1/Systems/System.Embedded.1')).body as Json;
      const manager = (await get(bmc, '/redfish/v1/Managers/iDRAC.Embedded.1/EthernetInterfaces/NIC.1')).body as Json;
      seen.serial.add(String((system['Oem'] as { Dell: { DellSystem: Json } } | undefined)?.Dell?.DellSystem?.['ChassisServiceTag'] ?? system['SKU']));
      seen.uuid.add(String(system['UUID']));
      seen.mac.add(String(manager['MACAddress'] ?? manager['PermanentMACAddress']));
      seen.host.add(String(manager['HostName']));
      // The shape stays the capture's: same members, same model
      expect(system['Model']).toBe('PowerEdge R750');
      expect(String(system['UUID'])).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    }
    for (const values of Object.values(seen)) expect(values.size).toBe(20);
    expect(seen.uuid.has('4c4c4544-0037-5110-804b-c8c04f4d3233')).toBe(false);
    // The host name embeds the service tag, and follows it
    for (const host of seen.host) expect(host).toMatch(/^idrac-[0-9A-Z]{7}$/);

    // One tree per profile, however many BMCs and mix entries use it
    expect(sim.captures().map(({ fixture, bmcs }) => ({ fixture, bmcs }))).toEqual([
      { fixture: 'dell', bmcs: 20 },
      { fixture: 'hpe', bmcs: 20 },
    ]);
  });

  it('links, pages and firmware ids are served consistently for each BMC', async () => {
    const dell = sim.bmcs.find((bmc) => bmc.fixture === 'dell' && bmc.firmware !== '6.00.30.00')!;
    const inventory = (await get(dell, '/redfish/v1/UpdateService/FirmwareInventory')).body as { Members: Array<{ '@odata.id': string }> };
    const idrac = inventory.Members.map((member) => member['@odata.id']).find((id) => id.includes('iDRAC.Embedded.1-1'))!;
    expect(idrac).toContain(`-${dell.firmware}__`);
    const member = (await get(dell, idrac)).body as Json;
    expect(member['Version']).toBe(dell.firmware);
    const hpe = sim.bmcs.find((bmc) => bmc.fixture === 'hpe')!;
    // iLO links with a trailing slash and in lower case (`/redfish/v1/systems/1/bios`)
    expect((await get(hpe, '/redfish/v1/Systems/1/')).status).toBe(200);
    expect((await get(hpe, '/redfish/v1/systems/1')).status).toBe(200);
  });

  it('a GET carries a weak ETag and a matching If-None-Match is answered 304', async () => {
    const bmc = sim.bmcs[25]!;
    const first = await get(bmc, '/redfish/v1/Systems');
    const etag = first.headers['etag'] as string;
    expect(etag).toMatch(/^W\/"[0-9a-f]+"$/);
    const again = await get(bmc, '/redfish/v1/Systems', { 'if-none-match': etag });
    expect(again.status).toBe(304);
    expect(again.headers['etag']).toBe(etag);
    expect((await get(bmc, '/redfish/v1/Systems', { 'if-none-match': 'W/"stale"' })).status).toBe(200);
    // Another BMC's copy of the same resource is another body, with another tag
    const other = await get(sim.bmcs[26]!, '/redfish/v1/Systems/1');
    const mine = await get(bmc, '/redfish/v1/Systems/1');
    expect(other.headers['etag']).not.toBe(mine.headers['etag']);
    expect(sim.stats().notModified).toBe(1);
  });

  it('the fleet list gives base URL, fake credentials, fixture and feeds of every BMC', async () => {
    const response = await fetch(`${sim.controlUrl}/sim/fleet`);
    const fleet = (await response.json()) as { bmcs: Json[] };
    expect(fleet.bmcs).toHaveLength(40);
    expect(Object.keys(fleet.bmcs[0]!).sort()).toEqual(
      ['baseUrl', 'cdu', 'firmware', 'firmwareStale', 'fixture', 'id', 'model', 'password', 'pdu', 'rack', 'recorded', 'sessionLimit', 'site', 'tor', 'username', 'vendor'].sort(),
    );
    expect(new Set(fleet.bmcs.map((bmc) => bmc['baseUrl'])).size).toBe(40);
  });
});
