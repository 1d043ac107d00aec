/**
 * Readings from every place a chassis gives them. The `Sensors` collection is read beside a legacy `Thermal` (an
 * HGX/DGX board keeps temperatures in `Thermal` and its PSU and board watts only in `Sensors`), the Sensor kept where
 * both give one reading; a reading given only by link (`{ "DataSourceUri": ... }`) is the linked Sensor's, each link
 * read once and a bounded number per read. Trees here are of our own making, in the shapes HGX-class BMCs serve.
 */
import { describe, expect, it } from 'vitest';
import { baseTree, collection, readTree, sensorsOf, type SyntheticTree } from './support/synthetic-tree.js';

const chassis = '/redfish/v1/Chassis/1';
const sensor = (id: string, name: string, type: string, reading: number | null, units: string) => ({ '@odata.id': `${chassis}/Sensors/${id}`, Id: id, Name: name, ReadingType: type, Reading: reading, ReadingUnits: units });

/** A chassis with a legacy Thermal (two temperatures) and a Sensors collection (`sensors`). */
function hgxTree(sensors: Array<ReturnType<typeof sensor>>): SyntheticTree {
  const tree = baseTree();
  Object.assign(tree[chassis]!, { Thermal: { '@odata.id': `${chassis}/Thermal` }, Sensors: { '@odata.id': `${chassis}/Sensors` } });
  tree[`${chassis}/Thermal`] = {
    '@odata.id': `${chassis}/Thermal`,
    Temperatures: [
      { '@odata.id': `${chassis}/Thermal#/Temperatures/0`, MemberId: '0', Name: 'CPU0 Temp', ReadingCelsius: 45 },
      { '@odata.id': `${chassis}/Thermal#/Temperatures/1`, MemberId: '1', Name: 'Inlet Temp', ReadingCelsius: 22 },
    ],
    Fans: [],
  };
  tree[`${chassis}/Sensors`] = collection(`${chassis}/Sensors`, sensors.map((entry) => entry['@odata.id']));
  for (const entry of sensors) tree[entry['@odata.id']] = entry;
  return tree;
}

describe('sensors from every place a chassis gives them', () => {
  it("a chassis with a legacy Thermal still has its Sensors read: the PSU watts of an HGX board are not missed", async () => {
    const sensors = sensorsOf(
      await readTree(
        hgxTree([
          sensor('PSU0_Power', 'PSU0 Power', 'Power', 1450, 'W'),
          sensor('PSU1_Power', 'PSU1 Power', 'Power', 1432.5, 'W'),
          sensor('GPU0_Temp', 'GPU0 Temp', 'Temperature', 38, 'Cel'),
        ]),
      ),
    );
    expect(sensors.other.map((reading) => [reading.name, reading.reading, reading.unit])).toEqual([
      ['PSU0 Power', 1450, 'W'],
      ['PSU1 Power', 1432.5, 'W'],
    ]);
    expect(sensors.temperatures.map((reading) => reading.name)).toEqual(['CPU0 Temp', 'Inlet Temp', 'GPU0 Temp']);
  });

  it('a reading in both places is counted once, with the Sensor’s value', async () => {
    const sensors = sensorsOf(await readTree(hgxTree([sensor('CPU0Temp', 'CPU0 Temp', 'Temperature', 47, 'Cel'), sensor('InletTemp', 'Inlet', 'Temperature', 23, 'Cel')])));
    // `CPU0 Temp` by name, `Inlet Temp` as the Sensor `Inlet` of type Temperature.
    expect(sensors.temperatures.map((reading) => [reading.name, reading.reading])).toEqual([
      ['CPU0 Temp', 47],
      ['Inlet', 23],
    ]);
  });

  it('a PSU output and a chassis power given only by DataSourceUri are the linked Sensors’ readings', async () => {
    const tree = hgxTree([sensor('PSU0_Output', 'PSU0 Output Power', 'Power', 1510, 'W'), sensor('Chassis_Power', 'Chassis Power', 'Power', 6020, 'W')]);
    Object.assign(tree[chassis]!, { PowerSubsystem: { '@odata.id': `${chassis}/PowerSubsystem` }, EnvironmentMetrics: { '@odata.id': `${chassis}/EnvironmentMetrics` } });
    tree[`${chassis}/PowerSubsystem`] = { '@odata.id': `${chassis}/PowerSubsystem`, PowerSupplies: { '@odata.id': `${chassis}/PowerSubsystem/PowerSupplies` } };
    tree[`${chassis}/PowerSubsystem/PowerSupplies`] = collection(`${chassis}/PowerSubsystem/PowerSupplies`, [`${chassis}/PowerSubsystem/PowerSupplies/PSU0`]);
    tree[`${chassis}/PowerSubsystem/PowerSupplies/PSU0`] = {
      '@odata.id': `${chassis}/PowerSubsystem/PowerSupplies/PSU0`,
      Id: 'PSU0',
      Name: 'PSU0',
      Status: { State: 'Enabled', Health: 'OK' },
      Metrics: { '@odata.id': `${chassis}/PowerSubsystem/PowerSupplies/PSU0/Metrics` },
    };
    tree[`${chassis}/PowerSubsystem/PowerSupplies/PSU0/Metrics`] = { '@odata.id': `${chassis}/PowerSubsystem/PowerSupplies/PSU0/Metrics`, OutputPowerWatts: { DataSourceUri: `${chassis}/Sensors/PSU0_Output` } };
    tree[`${chassis}/EnvironmentMetrics`] = { '@odata.id': `${chassis}/EnvironmentMetrics`, PowerWatts: { DataSourceUri: `${chassis}/Sensors/Chassis_Power`, Reading: null } };
    const sensors = sensorsOf(await readTree(tree));
    expect(sensors.powerSupplies).toEqual([{ name: 'PSU0', health: 'OK', state: 'Enabled', outputWatts: 1510 }]);
    expect(sensors.powerConsumedWatts).toBe(6020);
  });

  it('links are followed once each and at most 64 per read; a link off the BMC is never followed', async () => {
    const supplies = Array.from({ length: 70 }, (_, n) => `PSU${n}`);
    const tree = hgxTree([sensor('Shared_Output', 'Shared Output', 'Power', 700, 'W')]);
    Object.assign(tree[chassis]!, { PowerSubsystem: { '@odata.id': `${chassis}/PowerSubsystem` } });
    tree[`${chassis}/PowerSubsystem`] = { '@odata.id': `${chassis}/PowerSubsystem`, PowerSupplies: { '@odata.id': `${chassis}/PowerSubsystem/PowerSupplies` } };
    tree[`${chassis}/PowerSubsystem/PowerSupplies`] = collection(`${chassis}/PowerSubsystem/PowerSupplies`, supplies.map((id) => `${chassis}/PowerSubsystem/PowerSupplies/${id}`));
    for (const [n, id] of supplies.entries()) {
      const path = `${chassis}/PowerSubsystem/PowerSupplies/${id}`;
      tree[path] = { '@odata.id': path, Id: id, Name: id, Metrics: { '@odata.id': `${path}/Metrics` } };
      // Two share one Sensor; one points off the BMC; the rest each have their own (which 404: not in the tree).
      const source = n < 2 ? `${chassis}/Sensors/Shared_Output` : n === 2 ? 'https://elsewhere.example/redfish/v1/Sensors/X' : `${chassis}/Sensors/${id}_Output`;
      tree[`${path}/Metrics`] = { '@odata.id': `${path}/Metrics`, OutputPowerWatts: { DataSourceUri: source } };
    }
    const reading = await readTree(tree);
    const sensors = sensorsOf(reading);
    expect(sensors.powerSupplies.slice(0, 3).map((supply) => supply.outputWatts)).toEqual([700, 700, undefined]);
    // The shared Sensor was read with its collection: its two links cost no request of their own.
    expect(reading.fetched.filter((path) => path.endsWith('Shared_Output'))).toHaveLength(1);
    // 67 links of their own (PSU3 to PSU69): 64 followed, 3 left, each named as unread.
    const followed = reading.fetched.filter((path) => /\/Sensors\/PSU\d+_Output$/.test(path));
    expect(followed).toHaveLength(64);
    expect(new Set(followed).size).toBe(64);
    expect(sensors.unreadable?.filter((entry) => entry.code === 'BUDGET_EXHAUSTED')).toHaveLength(3);
    expect(reading.fetched.some((path) => path.includes('elsewhere'))).toBe(false);
  });
});
