import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemTools } from '../support/system-tool.js';
import { HealthObserved, NodeInventoryObserved, PowerStateObserved, SensorsObserved, type DriverObservation } from '../../events/driver-observations.js';
import { DriverError, IpmiDriver, parseDcmiPowerReading, parseSdr, summarizeSensors } from '../../src/drivers/index.js';
import { fixtures, readFixture } from './support/fixtures.js';
import { startIpmiSim, type IpmiSim } from './support/ipmi-sim.js';

describe.skipIf(!fixtures.runnable)(fixtures.title('ipmitool output parsers on the captured outputs'), () => {
  it('reads `sdr` (3 columns): readings with units, discrete 0x00 states, and "Not Readable"', () => {
    const { sensors, unrecognized } = parseSdr(readFixture('ipmi', 'mockData_0_line238.txt'));
    expect(sensors).toHaveLength(133);
    expect(unrecognized).toEqual([]);
    expect(sensors[0]).toMatchObject({ name: 'Ambient Temp', reading: 20, unit: 'Cel', status: 'ok', health: 'OK' });
    expect(sensors.find((s) => s.name === 'Avg Power')).toMatchObject({ reading: 210, unit: 'W' });
    expect(sensors.find((s) => s.name === 'Planar 12V')).toMatchObject({ reading: 12.04, unit: 'V' });
    expect(sensors.find((s) => s.name === 'Fan 1A Tach')).toMatchObject({ reading: 2610, unit: 'RPM' });
    expect(sensors.find((s) => s.name === 'Fan 1')).toMatchObject({ reading: null, unit: 'discrete', state: '0x00' });
    expect(sensors.find((s) => s.name === 'DASD Backplane 3')).toMatchObject({ reading: null, status: 'ns' });
    expect(sensors.find((s) => s.name === 'DASD Backplane 3')?.health).toBeUndefined();
    const summary = summarizeSensors(sensors);
    expect(summary.temperatures.map((t) => t.name)).toEqual(['Ambient Temp']);
    expect(summary.fans).toHaveLength(6);
    // Per-PSU fault sensors (PS 1 Fan Fault, PS1 12V OV Fault, ...) are not power supplies.
    expect(summary.powerSupplies.map((p) => p.name)).toEqual(['Power Supply 1', 'Power Supply 2']);
  });

  it('reads `sdr elist` (5 columns): sensor id, entity, and analog readings with a discrete suffix', () => {
    const { sensors } = parseSdr(readFixture('ipmi', 'mockData_1_line562.txt'));
    expect(sensors).toHaveLength(7);
    expect(sensors.find((s) => s.name === 'SEL')).toMatchObject({ sensorId: '72h', status: 'ns', reading: null });
    expect(sensors.find((s) => s.name === 'Inlet Temp')).toMatchObject({ sensorId: '04h', entity: '7.1', reading: 25, unit: 'Cel' });
    expect(sensors.find((s) => s.name === 'Current 1')).toMatchObject({ reading: 7.2, unit: 'A', entity: '10.1' });
    expect(sensors.find((s) => s.name === 'Power Supply 1')).toMatchObject({ reading: 110, unit: 'W', state: 'Presence detected' });
    expect(sensors.find((s) => s.name === 'USB Cable Pres')).toMatchObject({ reading: null, unit: 'discrete', state: 'Connected' });
    expect(summarizeSensors(sensors).powerSupplies).toEqual([{ name: 'Power Supply 1', health: 'OK', state: 'Presence detected', outputWatts: 110 }]);
  });

  it('keeps ipmitool error lines interleaved with data as unrecognized, in both layouts', () => {
    const v1 = parseSdr(readFixture('ipmi', 'v1Data_0_line589.txt'));
    expect(v1.sensors).toHaveLength(9);
    expect(v1.unrecognized).toHaveLength(3);
    expect(v1.unrecognized[0]).toEqual({ path: 'sdr/line/8', value: 'Unable to send command: Invalid argument' });
    const v2 = parseSdr(readFixture('ipmi', 'v2Data_0_line603.txt'));
    expect(v2.sensors).toHaveLength(7);
    expect(v2.unrecognized).toHaveLength(2);
  });

  it('reads `dcmi power reading`', () => {
    expect(parseDcmiPowerReading(readFixture('ipmi', 'output_0_line837.txt'))).toEqual({
      instantaneousWatts: 167,
      minimumWatts: 124,
      maximumWatts: 422,
      averageWatts: 156,
      samplingPeriodSeconds: 699043,
      state: 'activated',
    });
  });
});

const ipmiTools = systemTools(['ipmi_sim', 'ipmitool'], 'apt-get install openipmi ipmitool');

describe.skipIf(!ipmiTools.runnable)(ipmiTools.title('the IPMI driver against a real ipmi_sim over RMCP+ on loopback'), () => {
  let sim: IpmiSim;
  let observations: DriverObservation[];

  beforeAll(async () => {
    ipmiTools.require();
    sim = await startIpmiSim({
      sensors: [
        { number: 1, name: 'Inlet Temp', type: 0x01, unit: 1, m: 1, raw: 24 },
        { number: 2, name: 'FAN1', type: 0x04, unit: 18, m: 50, raw: 96 },
        { number: 3, name: 'Sys Power', type: 0x0b, unit: 6, m: 2, raw: 90 },
      ],
      fru: { manufacturer: 'FleetCorp', product: 'FL-1000', partNumber: 'P-42', serial: 'SN0001' },
    });
    // ipmi_sim offers RMCP+ cipher suite 3 (HMAC-SHA1/AES), not ipmitool's default 17.
    const driver = new IpmiDriver({ host: '127.0.0.1', port: sim.port, username: sim.username, password: sim.password, cipherSuite: 3, commandTimeoutMs: 10_000 });
    observations = await driver.observe();
  });
  afterAll(async () => {
    await sim?.stop();
  });

  it('identifies the system from FRU and the BMC from mc info', () => {
    const inventory = observations.find((o) => o.type === 'NodeInventoryObserved')!;
    expect(NodeInventoryObserved.schema.safeParse(inventory.data).success).toBe(true);
    expect(inventory.data).toMatchObject({
      source: 'ipmi',
      system: { manufacturer: 'FleetCorp', model: 'FL-1000', serialNumber: 'SN0001', sku: 'P-42' },
      bmc: { manufacturer: 'MontaVista Software, Inc.', firmwareVersion: '9.08' },
    });
    // IPMI cannot count CPUs or GPUs: the counts are absent, not zero.
    expect(inventory.type === 'NodeInventoryObserved' && inventory.data.gpus).toBeUndefined();
  });

  it('reads power state, sensors with units, and health', () => {
    const power = observations.find((o) => o.type === 'PowerStateObserved')!;
    expect(PowerStateObserved.schema.safeParse(power.data).success).toBe(true);
    expect(power.type === 'PowerStateObserved' && power.data.powerState).toBe('Off');
    const sensors = observations.find((o) => o.type === 'SensorsObserved')!;
    expect(SensorsObserved.schema.safeParse(sensors.data).success).toBe(true);
    expect(sensors.data).toMatchObject({
      temperatures: [{ name: 'Inlet Temp', reading: 24, unit: 'Cel', health: 'OK' }],
      fans: [{ name: 'FAN1', reading: 4800, unit: 'RPM', health: 'OK' }],
      other: [{ name: 'Sys Power', reading: 180, unit: 'W', health: 'OK' }],
    });
    const health = observations.find((o) => o.type === 'HealthObserved')!;
    expect(HealthObserved.schema.safeParse(health.data).success).toBe(true);
    expect(health.type === 'HealthObserved' && health.data.health).toBe('OK');
  });

  it('records DCMI, which ipmi_sim lacks, as unreadable instead of failing the read', () => {
    expect(observations[0]!.data.unreadable).toEqual([{ path: 'dcmi power reading', code: 'DRIVER_COMMAND_FAILED' }]);
  });

  it('wrong credentials are a typed, non-retryable error', async () => {
    const driver = new IpmiDriver({ host: '127.0.0.1', port: sim.port, username: sim.username, password: 'wrong', cipherSuite: 3, commandTimeoutMs: 10_000 });
    const error = (await driver.observe().catch((e: unknown) => e)) as DriverError;
    expect(error).toBeInstanceOf(DriverError);
    expect(error.code).toBe('DRIVER_AUTH');
    expect(error.retryable).toBe(false);
  });

  it('a missing ipmitool binary is DRIVER_TOOL_MISSING', async () => {
    const driver = new IpmiDriver({ host: '127.0.0.1', port: sim.port, username: 'x', password: 'y', ipmitool: 'ipmitool-not-installed' });
    await expect(driver.observe()).rejects.toMatchObject({ code: 'DRIVER_TOOL_MISSING', retryable: false });
  });
});
