import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DriverError, RedfishDriver } from '../../src/drivers/index.js';
import { startSimulator, type Simulator, type SimBmcInfo } from '../../src/sim/index.js';

/**
 * Firmware update through the Redfish driver against the simulator: each Redfish outcome reaches the caller as a
 * typed answer (a task handle, a task reading, `vanished`, `DRIVER_UPDATE_BUSY`), and only the version read back
 * after activation shows the update.
 */
describe('firmware update over Redfish', () => {
  let sim: Simulator;
  const driverFor = (bmc: SimBmcInfo) => new RedfishDriver({ baseUrl: bmc.baseUrl, username: bmc.username, password: bmc.password, authMode: 'basic', requestTimeoutMs: 3_000 });
  const of = (profile: string) => sim.bmcs.find((bmc) => bmc.fixture === profile)!;
  const until = async <T>(read: () => Promise<T>, done: (value: T) => boolean, ms = 15_000): Promise<T> => {
    const end = Date.now() + ms;
    for (;;) {
      try {
        const value = await read();
        if (done(value) || Date.now() > end) return value;
      } catch (error) {
        if (!(error instanceof DriverError) || Date.now() > end) throw error;
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  };

  beforeAll(async () => {
    sim = await startSimulator({ bmcs: 16, seed: 3, behaviour: { latencyScale: 0.01, firmwareUpdateMs: 600, resetDarkMs: 400, darkMode: 'refuse' } });
  });
  afterAll(async () => sim?.close());

  it('SimpleUpdate of the BMC firmware: a task to poll, then the controller resets itself and reports the new version', async () => {
    const driver = driverFor(of('dell'));
    const submitted = await driver.submitFirmwareUpdate({ imageUri: `${sim.controlUrl}/sim/images/bmc-7.99.99.99.bin`, component: 'BMC', applyTime: 'Immediate', method: 'SimpleUpdate', intentKey: 't:1' });
    expect(submitted).toMatchObject({ method: 'SimpleUpdate', httpStatus: 202 });
    expect(submitted.taskMonitor).toMatch(/\/redfish\/v1\/TaskService\/Tasks\//);
    const task = await until(() => driver.readUpdateTask(submitted.taskMonitor), (reading) => reading !== 'vanished' && reading.taskState === 'Completed');
    expect(task).toMatchObject({ taskState: 'Completed', taskStatus: 'OK' });
    expect(await until(() => driver.readFirmwareVersion('BMC'), (version) => version === '7.99.99.99')).toBe('7.99.99.99');
    await driver.close();
  });

  it('a second update while one runs is refused as DRIVER_UPDATE_BUSY (retryable)', async () => {
    const driver = driverFor(of('hpe'));
    await driver.submitFirmwareUpdate({ imageUri: `${sim.controlUrl}/sim/images/ilo-3.10.bin`, component: 'BMC', applyTime: 'Immediate', method: 'SimpleUpdate', intentKey: 't:2' });
    const error = await driver.submitFirmwareUpdate({ imageUri: `${sim.controlUrl}/sim/images/ilo-3.11.bin`, component: 'BMC', applyTime: 'Immediate', method: 'SimpleUpdate', intentKey: 't:3' }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(DriverError);
    expect((error as DriverError).code).toBe('DRIVER_UPDATE_BUSY');
    expect((error as DriverError).retryable).toBe(true);
    await driver.close();
  });

  it('a BMC without SimpleUpdate (GB200) is updated by a multipart push of the image', async () => {
    const driver = driverFor(of('nvidia_gb200'));
    const submitted = await driver.submitFirmwareUpdate({ imageUri: `${sim.controlUrl}/sim/images/gb200-bmc-25.06.1.bin`, component: 'BMC', applyTime: 'Immediate', method: 'SimpleUpdate', intentKey: 't:4' });
    expect(submitted.method).toBe('MultipartHttpPush');
    expect(await until(() => driver.readFirmwareVersion('BMC'), (version) => version === '25.06.1')).toBe('25.06.1');
    await driver.close();
  });

  it('a host component is staged until a system reset activates it (AwaitToActivate)', async () => {
    const driver = driverFor(sim.bmcs.filter((bmc) => bmc.fixture === 'dell')[1]!);
    const before = await driver.readFirmwareVersion('BIOS');
    const submitted = await driver.submitFirmwareUpdate({ imageUri: `${sim.controlUrl}/sim/images/bios-1.9.4.bin`, component: 'BIOS', applyTime: 'OnReset', method: 'SimpleUpdate', intentKey: 't:5' });
    const task = await until(() => driver.readUpdateTask(submitted.taskMonitor), (reading) => reading !== 'vanished' && reading.taskState === 'Completed');
    expect(task !== 'vanished' && task.messages.join(' ')).toContain('AwaitToActivate');
    expect(await driver.readFirmwareVersion('BIOS')).toBe(before);
    expect(await driver.activateFirmware('BIOS')).toMatchObject({ resetType: 'ForceRestart' });
    expect(await until(() => driver.readFirmwareVersion('BIOS'), (version) => version === '1.9.4')).toBe('1.9.4');
    await driver.close();
  });

  it('a task purged before it is read answers vanished, and the intent key of every request is counted by the BMCs', async () => {
    const bmc = sim.bmcs.filter((candidate) => candidate.fixture === 'supermicro')[0]!;
    sim.injectFault({ fault: 'update-fault', mode: 'purge-task', target: { bmc: bmc.id } });
    const driver = driverFor(bmc);
    const submitted = await driver.submitFirmwareUpdate({ imageUri: `${sim.controlUrl}/sim/images/smc-02.10.20.bin`, component: 'BMC', applyTime: 'Immediate', method: 'SimpleUpdate', intentKey: 't:6' });
    expect(await until(() => driver.readUpdateTask(submitted.taskMonitor), (reading) => reading === 'vanished')).toBe('vanished');
    expect(await driver.findUpdateTask(`${sim.controlUrl}/sim/images/smc-02.10.20.bin`, Date.now() - 60_000)).toBeNull();
    const stats = sim.updateStats();
    expect(stats).toMatchObject({ accepted: 5, keyed: 5, unkeyed: 0, refusedBusy: 1, purgedEarly: 1 });
    expect(stats.duplicateSubmissions).toBe(0);
    await driver.close();
  });
});
