import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemTools } from '../support/system-tool.js';
import { createSocket } from 'node:dgram';
import { NetworkDeviceObserved, type NetworkDeviceObservedData } from '../../events/driver-observations.js';
import { DriverError, SnmpDriver } from '../../src/drivers/index.js';
import { startSnmpd, type Snmpd } from './support/snmpd.js';

const snmpTools = systemTools(['snmpd'], 'apt-get install snmpd');

describe.skipIf(!snmpTools.runnable)(snmpTools.title('the SNMP driver against a real snmpd on loopback'), () => {
  let snmpd: Snmpd;
  let data: NetworkDeviceObservedData;

  beforeAll(async () => {
    snmpTools.require();
    snmpd = await startSnmpd({
      sysName: 'pdu-r07-a',
      sysLocation: 'dc1 row 3 rack 07',
      sysContact: 'fleet-ops@example.com',
      sysDescr: 'APC Web/SNMP Management Card (MB:v4.1.0 PF:v6.8.2 PN:apc_hw05_aos_682.bin AF1:v6.8.2)',
      sysObjectId: '.1.3.6.1.4.1.318.1.3.4.5',
      outlets: [
        { index: 1, name: 'r07-n01 PSU1', state: 1 },
        { index: 2, name: 'r07-n02 PSU1', state: 2 },
        { index: 3, name: 'r07-n03 PSU1', state: 1 },
      ],
    });
    const driver = new SnmpDriver({ host: '127.0.0.1', port: snmpd.port, community: snmpd.community, timeoutMs: 2000 });
    const [observation] = await driver.observe();
    data = observation!.data as NetworkDeviceObservedData;
  });
  afterAll(async () => {
    await snmpd?.stop();
  });

  it('reads system identity and picks the APC dialect from sysObjectID', () => {
    expect(NetworkDeviceObserved.schema.safeParse(data).success).toBe(true);
    expect(data).toMatchObject({
      source: 'snmp',
      dialect: 'apc-rpdu',
      sysName: 'pdu-r07-a',
      sysLocation: 'dc1 row 3 rack 07',
      sysContact: 'fleet-ops@example.com',
      sysObjectId: '1.3.6.1.4.1.318.1.3.4.5',
    });
    expect(data.sysDescr).toMatch(/^APC Web\/SNMP Management Card/);
    expect(data.uptimeSeconds).toBeGreaterThanOrEqual(0);
  });

  it('reads outlet states from the PowerNet-MIB outlet table', () => {
    expect(data.outlets).toEqual([
      { index: 1, name: 'r07-n01 PSU1', state: 'on' },
      { index: 2, name: 'r07-n02 PSU1', state: 'off' },
      { index: 3, name: 'r07-n03 PSU1', state: 'on' },
    ]);
  });

  it('reads interface states from IF-MIB (the host loopback is up)', () => {
    expect(data.interfaces.length).toBeGreaterThan(0);
    expect(data.interfaces.find((entry) => entry.name === 'lo')).toMatchObject({ adminStatus: 'up', operStatus: 'up' });
    expect(data.unrecognized).toEqual([]);
  });

  it('a wrong community (no answer) is DRIVER_TIMEOUT, retryable', async () => {
    const driver = new SnmpDriver({ host: '127.0.0.1', port: snmpd.port, community: 'wrong', timeoutMs: 300, retries: 0 });
    const error = (await driver.observe().catch((e: unknown) => e)) as DriverError;
    expect(error).toBeInstanceOf(DriverError);
    expect(error.code).toBe('DRIVER_TIMEOUT');
    expect(error.retryable).toBe(true);
  });

  it('ping() is one GET of sysUpTime.0: the agent\'s uptime in seconds', async () => {
    const driver = new SnmpDriver({ host: '127.0.0.1', port: snmpd.port, community: snmpd.community, timeoutMs: 2000 });
    expect(await driver.ping()).toBeGreaterThanOrEqual(0);
  });

  it('the deadline bounds a whole call: a silent agent with long request timeouts fails with DRIVER_TIMEOUT when it passes', async () => {
    const silent = createSocket('udp4');
    await new Promise<void>((resolve) => silent.bind(0, '127.0.0.1', () => resolve()));
    const driver = new SnmpDriver({ host: '127.0.0.1', port: silent.address().port, community: 'public', timeoutMs: 10_000, retries: 3, deadline: AbortSignal.timeout(200) });
    const started = Date.now();
    await expect(driver.observe()).rejects.toMatchObject({ code: 'DRIVER_TIMEOUT' });
    expect(Date.now() - started).toBeLessThan(5_000);
    const expired = new SnmpDriver({ host: '127.0.0.1', port: silent.address().port, community: 'public', deadline: AbortSignal.abort() });
    await expect(expired.ping()).rejects.toMatchObject({ code: 'DRIVER_TIMEOUT' });
    await new Promise<void>((resolve) => silent.close(() => resolve()));
  });

  it('a silent port is DRIVER_TIMEOUT too', async () => {
    const silent = createSocket('udp4');
    await new Promise<void>((resolve) => silent.bind(0, '127.0.0.1', () => resolve()));
    const driver = new SnmpDriver({ host: '127.0.0.1', port: silent.address().port, community: 'public', timeoutMs: 200, retries: 0 });
    await expect(driver.observe()).rejects.toMatchObject({ code: 'DRIVER_TIMEOUT' });
    await new Promise<void>((resolve) => silent.close(() => resolve()));
  });
});
