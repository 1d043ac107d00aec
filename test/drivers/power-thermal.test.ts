/**
 * Power and thermal from every place Redfish puts them. The `Sensors` collection is read beside the legacy resources;
 * the newer `PowerSubsystem` / `ThermalSubsystem` are read for whatever the legacy `Power` / `Thermal` leave empty (a legacy resource can exist
 * and list nothing while the supplies are in the new one: a DGX-class server then reported no PSU and no watts);
 * a fan given in percent stays a percentage. Written over DMTF's reference tree (the schema's own example of the
 * newer resources; the README of the captures says to take no values or quirks from it, only shapes) and iLO 4's
 * legacy fan shape (`CurrentReading`, `Units`) from its capture.
 */
import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { RedfishDriver, startMockupServer, type MockupServer } from '../../src/drivers/index.js';
import type { SensorsObservedData } from '../../events/driver-observations.js';
import { fixturePath, fixtures } from './support/fixtures.js';

const chassis = '/redfish/v1/Chassis/1U';
const servers: MockupServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

async function sensorsOf(transform: (path: string, body: Record<string, unknown>) => unknown): Promise<SensorsObservedData> {
  const server = await startMockupServer({ folder: fixturePath('redfish-reference', 'dmtf_public_rackmount1'), acceptAnyCredentials: true, transform: (path, body) => transform(path, body as Record<string, unknown>) });
  servers.push(server);
  const driver = new RedfishDriver({ baseUrl: server.url, username: 'root', password: 'x', maxConcurrency: 4 });
  const observations = await driver.observe();
  await driver.close();
  return observations.find((o) => o.type === 'SensorsObserved')!.data as SensorsObservedData;
}

describe.skipIf(!fixtures.runnable)(fixtures.title('power and thermal from legacy and newer resources'), () => {
  it('legacy Power and Thermal that list something are reported with the Sensors collection beside them (the subsystems are not read twice)', async () => {
    const sensors = await sensorsOf((_path, body) => body);
    expect(sensors.powerSupplies).toHaveLength(1);
    expect(sensors.fans).toHaveLength(2);
    // Thermal's three, and the one Sensor of ReadingType Temperature (the reference tree types no other).
    expect(sensors.temperatures.map((temperature) => temperature.name)).toEqual(['CPU1 Temp', 'CPU2 Temp', 'Chassis Intake Temp', 'Battery #1 Temperature']);
    expect(sensors.other.some((reading) => reading.name === 'Power reading for the Chassis' && reading.reading === 374)).toBe(true);
  });

  it('an empty legacy Power leaves the supplies to PowerSubsystem: each PSU with its output, the consumption from EnvironmentMetrics', async () => {
    const sensors = await sensorsOf((path, body) => (path === `${chassis}/Power` ? { ...body, PowerSupplies: [], PowerControl: [] } : body));
    expect(sensors.powerSupplies.map((supply) => supply.name)).toEqual(['Power Supply Bay 1', 'Power Supply Bay 2']);
    expect(sensors.powerSupplies[0]).toMatchObject({ health: 'Warning', model: 'RKS-440DC', firmwareVersion: '1.00', outputWatts: 937.4 });
    expect(sensors.powerConsumedWatts).toBe(374);
  });

  it('an empty legacy Thermal leaves fans to ThermalSubsystem (RPM where given, else percent) and temperatures to the Sensors collection', async () => {
    const sensors = await sensorsOf((path, body) => (path === `${chassis}/Thermal` ? { ...body, Fans: [], Temperatures: [] } : body));
    expect(sensors.fans.map((fan) => [fan.name, fan.reading, fan.unit])).toEqual([
      ['Fan Bay 1', 2200, 'RPM'],
      ['Fan Bay 2', 2400, 'RPM'],
      ['Fan for CPU 1', 45, '%'],
      ['Fan for CPU 2', 1490, 'RPM'],
    ]);
    expect(sensors.temperatures.length).toBeGreaterThan(0);
    expect(sensors.temperatures.every((temperature) => temperature.unit === 'Cel')).toBe(true);
  });

  it("a fan in iLO 4's legacy shape (CurrentReading, Units: Percent) is a percentage, not a null RPM", async () => {
    const ilo4 = JSON.parse(readFileSync(fixturePath('redfish-partial', 'hpe_ilo4_bl460c_gen9', 'redfish', 'v1', 'Chassis', '1', 'Thermal', 'index.json'), 'utf8')) as { Fans: unknown[] };
    const sensors = await sensorsOf((path, body) => (path === `${chassis}/Thermal` ? { ...body, Fans: ilo4.Fans } : body));
    expect(sensors.fans[0]).toMatchObject({ name: 'Fan 1', reading: 81, unit: '%' });
    expect(sensors.fans.every((fan) => fan.reading !== null)).toBe(true);
  });
});
