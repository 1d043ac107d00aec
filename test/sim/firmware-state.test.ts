import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { keepSimulatorState, simulatorStateFileName } from '../../src/demo/index.js';
import { RedfishDriver, type RedfishDriverOptions } from '../../src/drivers/index.js';
import { SimError, startSimulator, type Simulator } from '../../src/sim/index.js';

/**
 * The demo's simulated BMCs keep their firmware across a restart: a node updated before it reports the new version
 * after, and a task running at the restart is still there and ends when it would have. The clock runs 20 times
 * faster than the wall clock; the update takes 30 simulated seconds.
 */
const options = { bmcs: 3, seed: 4040, clockFactor: 20, behaviour: { latencyScale: 0.02, firmwareUpdateMs: 30_000, resetDarkMs: 10_000, darkMode: 'refuse' as const } };
const folder = mkdtempSync(join(tmpdir(), 'fleet-ledger-sim-state-'));
const logged: string[] = [];
const log = (message: string): void => void logged.push(message);
const started: Simulator[] = [];

async function start(): Promise<Simulator> {
  const sim = await startSimulator(options);
  started.push(sim);
  return sim;
}

function driverFor(sim: Simulator, index: number): RedfishDriver {
  const bmc = sim.bmcs[index]!;
  return new RedfishDriver({ baseUrl: bmc.baseUrl, username: bmc.username, password: bmc.password, authMode: 'basic', requestTimeoutMs: 2_000 } as RedfishDriverOptions);
}

const until = async (what: () => Promise<boolean> | boolean, ms: number): Promise<void> => {
  const end = Date.now() + ms;
  while (!(await what())) {
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
};

afterAll(async () => {
  for (const sim of started) await sim.close();
  rmSync(folder, { recursive: true, force: true });
});

describe('the simulated fleet across a demo restart', () => {
  it('an updated BMC still reports its new version, and a task running at the restart is found and ends when it would have', async () => {
    const first = await start();
    const image = `${first.controlUrl}/sim/images/bmc/9.90.10.01.bin`;
    const keeper = keepSimulatorState(first, folder, log, 100);
    // BMC 0 updated to the end (the controller resets itself to activate, then reports 9.90.10.01).
    const updated = driverFor(first, 0);
    await updated.submitFirmwareUpdate({ imageUri: image, component: 'BMC', applyTime: 'Immediate', method: 'SimpleUpdate', intentKey: 'k0' });
    await until(() => first.fleet()[0]!.firmware === '9.90.10.01', 10_000);
    // BMC 1's update is running when the demo stops.
    const running = driverFor(first, 1);
    const { taskMonitor } = await running.submitFirmwareUpdate({ imageUri: image, component: 'BMC', applyTime: 'Immediate', method: 'SimpleUpdate', intentKey: 'k1' });
    const before = await running.readUpdateTask(taskMonitor);
    expect(before).toMatchObject({ taskState: expect.stringMatching(/New|Running/) });
    await Promise.all([updated.close(), running.close()]);
    keeper.stop();
    await first.close();
    started.splice(started.indexOf(first), 1);

    const second = await start();
    const again = keepSimulatorState(second, folder, log, 100);
    expect(again.restored).toBe(3);
    expect(second.fleet()[0]!.firmware).toBe('9.90.10.01');
    expect(second.fleet()[2]!.firmware).toBe(first.bmcs[2]!.firmware);
    const resumed = driverFor(second, 1);
    // Found, not 404. (A clock 20 times the wall clock's saved a time ahead of the new simulator's clock: the task
    // may read New for a moment again.)
    expect(await resumed.readUpdateTask(taskMonitor)).toMatchObject({ taskState: expect.stringMatching(/New|Running/) });
    await until(() => second.fleet()[1]!.firmware === '9.90.10.01', 10_000);
    await resumed.close();
    again.stop();
    expect(logged).toEqual([]);
  }, 40_000);

  it('a saved state that is not one is refused by name (SIM_STATE_INVALID), and the demo starts from the profiles with a warning', async () => {
    const sim = await start();
    let refused: unknown;
    try {
      sim.restoreFirmwareState({ format: 'fleet-ledger-sim-firmware/1', bmcs: [{ id: 'bmc-00001', firmware: 7 }] });
    } catch (error) {
      refused = error;
    }
    expect(refused).toBeInstanceOf(SimError);
    expect((refused as SimError).code).toBe('SIM_STATE_INVALID');
    expect((refused as SimError).message).toMatch(/bmcs\.0\.firmware/);

    const damaged = mkdtempSync(join(tmpdir(), 'fleet-ledger-sim-state-'));
    writeFileSync(join(damaged, simulatorStateFileName), '{"format": "fleet-ledger-sim-fi');
    const warnings: string[] = [];
    const keeper = keepSimulatorState(sim, damaged, (message) => void warnings.push(message));
    expect(keeper.restored).toBe(0);
    expect(warnings).toEqual(['simulator state not restored: the simulated BMCs start from their profiles']);
    keeper.stop();
    rmSync(damaged, { recursive: true, force: true });
  });
});
