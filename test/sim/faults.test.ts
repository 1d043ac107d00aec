import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { parseScenario, startSimulator, type ScenarioInput, type Simulator } from '../../src/sim/index.ts';
import { agent, answerWithin, basic, call, get, login } from './sim-client.ts';

type Json = Record<string, unknown>;

function scenario(fixture: string, behaviour: ScenarioInput['behaviour'] = {}, bmcs = 2): ReturnType<typeof parseScenario> {
  return parseScenario({ name: 'faults', fleet: { bmcs, mix: [{ fixture }] }, behaviour: { latencyScale: 0, ...behaviour } });
}

describe('faults', { timeout: 30_000 }, () => {
  let sim: Simulator | undefined;
  afterEach(async () => {
    await sim?.close();
    sim = undefined;
  });

  it('repeated bad logins lock the account out, even for the right password, until the lockout ends', async () => {
    sim = await startSimulator({ scenario: scenario('dell', { lockoutThreshold: 3, lockoutDuration: '1m' }), clockFactor: 100 });
    const bmc = sim.bmcs[0]!;
    for (let i = 0; i < 3; i++) expect((await login(bmc, 'wrong')).status).toBe(401);
    expect((await login(bmc)).status).toBe(401);
    expect((await get(bmc, '/redfish/v1/Systems')).status).toBe(401);
    expect(sim.bmcStats(bmc.id)).toMatchObject({ lockedOut: true, lockouts: 1 });
    await sim.clock.sleep(61_000);
    expect((await login(bmc)).status).toBe(201);
  });

  it('a rotated password persists across a reset', async () => {
    sim = await startSimulator({ scenario: scenario('supermicro', { resetDark: '10s' }), clockFactor: 100 });
    const bmc = sim.bmcs[0]!;
    sim.injectFault({ kind: 'rotate-password', target: { bmc: bmc.id }, password: 'n3w-s1m-pass' });
    expect((await get(bmc, '/redfish/v1/Systems')).status).toBe(401);
    sim.injectFault({ kind: 'reset', target: { bmc: bmc.id } });
    expect(await answerWithin(bmc, '/redfish/v1/Systems', 50)).toBe('timeout');
    await sim.clock.sleep(11_000);
    expect((await get(bmc, '/redfish/v1/Systems')).status).toBe(401);
    expect((await call(`${bmc.baseUrl}/redfish/v1/Systems`, { headers: { authorization: basic(bmc, 'n3w-s1m-pass') } })).status).toBe(200);
    expect(sim.fleet()[0]!.password).toBe('n3w-s1m-pass');
  });

  it('a flapping BMC alternates between dark and answering', async () => {
    sim = await startSimulator({ scenario: scenario('nvidia_dpu'), clockFactor: 50 });
    const bmc = sim.bmcs[0]!;
    const started = sim.clock.now();
    const at = async (seconds: number): Promise<void> => sim!.clock.sleep(started + seconds * 1000 - sim!.clock.now());
    sim.injectFault({ kind: 'flap', target: { bmc: bmc.id }, down: '60s', up: '60s', duration: '10m' });
    expect(await answerWithin(bmc, '/redfish/v1', 100)).toBe('timeout'); // dark from 0 s to 60 s
    await at(85); // answering from 60 s to 120 s
    expect(await answerWithin(bmc, '/redfish/v1', 400)).toMatchObject({ status: 200 });
    await at(145); // dark again from 120 s to 180 s
    expect(await answerWithin(bmc, '/redfish/v1', 100)).toBe('timeout');
    expect(sim.faults()).toHaveLength(1);
    expect(sim.clearFault(sim.faults()[0]!.id)).toBe(true);
    expect(await answerWithin(bmc, '/redfish/v1', 1000)).toMatchObject({ status: 200 });
  });

  it('a slow BMC answers as much slower as the fault says', async () => {
    sim = await startSimulator({ scenario: scenario('nvidia_gbswitch', { latencyScale: 1 }), clockFactor: 1 });
    const bmc = sim.bmcs[0]!;
    const timed = async (): Promise<number> => {
      const started = performance.now();
      expect((await get(bmc, '/redfish/v1/Chassis')).status).toBe(200);
      return performance.now() - started;
    };
    await timed();
    const normal = await timed(); // about 45 ms (the capture's average), jittered
    sim.injectFault({ kind: 'slow', target: { bmc: bmc.id }, factor: 20, duration: '1m' });
    const slow = await timed();
    expect(normal).toBeLessThan(200);
    expect(slow).toBeGreaterThan(300);
  });

  it('a firmware update runs as a task and changes the firmware inventory when it completes', async () => {
    // The reboot's dark window is 5 minutes of simulated time (3 s real at this clock factor): wide enough that a
    // loaded machine's late timers still land inside it.
    sim = await startSimulator({ scenario: scenario('dell', { firmwareUpdateDuration: '2m', resetDark: '5m' }), clockFactor: 100 });
    const bmc = sim.bmcs.find((candidate) => candidate.firmware !== '7.10.30.00') ?? sim.bmcs[0]!;
    const catalogue = sim.firmwareCatalogue()[0]!;
    const target = catalogue.revisions.find((revision) => revision.version === '7.10.30.00')!;
    const started = await call(`${bmc.baseUrl}/redfish/v1/UpdateService/Actions/UpdateService.SimpleUpdate`, {
      method: 'POST',
      headers: { authorization: basic(bmc) },
      json: { ImageURI: target.imageUri, TransferProtocol: 'HTTP' },
    });
    expect(started.status).toBe(202);
    const taskUrl = `${bmc.baseUrl}${started.headers['location'] as string}`;
    expect(['New', 'Running']).toContain((started.body as Json)['TaskState']);

    await sim.clock.sleep(60_000);
    const halfway = (await call(taskUrl, { headers: { authorization: basic(bmc) } })).body as Json;
    expect(halfway['TaskState']).toBe('Running');
    expect(halfway['PercentComplete']).toBeGreaterThanOrEqual(40);

    // At 2 minutes the update completes and the BMC reboots into the new firmware (dark for 5 minutes)
    await sim.clock.sleep(62_000);
    expect(await answerWithin(bmc, '/redfish/v1', 50)).toBe('timeout');
    await sim.clock.sleep(300_000);
    const done = (await call(taskUrl, { headers: { authorization: basic(bmc) } })).body as Json;
    expect(done).toMatchObject({ TaskState: 'Completed', TaskStatus: 'OK', PercentComplete: 100 });
    const manager = (await get(bmc, '/redfish/v1/Managers/iDRAC.Embedded.1')).body as Json;
    expect(manager['FirmwareVersion']).toBe('7.10.30.00');
    const inventory = (await get(bmc, '/redfish/v1/UpdateService/FirmwareInventory')).body as { Members: Array<{ '@odata.id': string }> };
    expect(inventory.Members.some((member) => member['@odata.id'].includes('-7.10.30.00__iDRAC.Embedded.1-1'))).toBe(true);
    expect(sim.fleet().find((candidate) => candidate.id === bmc.id)!.firmware).toBe('7.10.30.00');
  });

  it('a firmware update of another component is staged until a system reset, then changes that component\'s version', async () => {
    sim = await startSimulator({ scenario: scenario('dell', { firmwareUpdateDuration: '1m' }), clockFactor: 100 });
    const bmc = sim.bmcs[0]!;
    const bios = '/redfish/v1/UpdateService/FirmwareInventory/Installed-159-1.8.2__BIOS.Setup.1-1';
    expect(((await get(bmc, bios)).body as Json)['Version']).toBe('1.8.2');
    const started = await call(`${bmc.baseUrl}/redfish/v1/UpdateService/Actions/UpdateService.SimpleUpdate`, {
      method: 'POST',
      headers: { authorization: basic(bmc) },
      json: { ImageURI: 'http://firmware.example/BIOS_R750_1.13.2.EXE', Targets: [bios] },
    });
    expect(started.status).toBe(202);
    await sim.clock.sleep(61_000);
    const staged = (await call(`${bmc.baseUrl}${started.headers['location'] as string}`, { headers: { authorization: basic(bmc) } })).body as { TaskState: string; Messages: Array<{ MessageId: string }> };
    expect(staged.TaskState).toBe('Completed');
    expect(staged.Messages.map((message) => message.MessageId)).toContain('Update.1.0.AwaitToActivate');
    expect(((await get(bmc, bios)).body as Json)['Version']).toBe('1.8.2');
    const reset = await call(`${bmc.baseUrl}/redfish/v1/Systems/System.Embedded.1/Actions/ComputerSystem.Reset`, { method: 'POST', headers: { authorization: basic(bmc) }, json: { ResetType: 'ForceRestart' } });
    expect(reset.status).toBe(204);
    await sim.clock.sleep(60_000);
    expect(((await get(bmc, bios)).body as Json)['Version']).toBe('1.13.2');
    expect(sim.bmcStats(bmc.id)).toMatchObject({ resets: 0, firmware: bmc.firmware });
  });

  it('a firmware update on a BMC given a firmware-failure fault ends in Exception and changes nothing', async () => {
    sim = await startSimulator({ scenario: scenario('hpe', { firmwareUpdateDuration: '1m' }), clockFactor: 100 });
    const bmc = sim.bmcs[0]!;
    const before = bmc.firmware;
    sim.injectFault({ kind: 'firmware-failure', target: { bmc: bmc.id } });
    const started = await call(`${bmc.baseUrl}/redfish/v1/UpdateService/Actions/UpdateService.SimpleUpdate`, {
      method: 'POST',
      headers: { authorization: basic(bmc) },
      json: { ImageURI: 'http://firmware.example/ilo5_304.bin' },
    });
    expect(started.status).toBe(202);
    await sim.clock.sleep(61_000);
    const task = (await call(`${bmc.baseUrl}${started.headers['location'] as string}`, { headers: { authorization: basic(bmc) } })).body as Json;
    expect(task).toMatchObject({ TaskState: 'Exception', TaskStatus: 'Critical' });
    expect(((await get(bmc, '/redfish/v1/UpdateService/FirmwareInventory/1')).body as Json)['Version']).toBe(`${before} Sep 04 2022`);
    expect(sim.stats()).toMatchObject({ updates: 1, updatesFailed: 1 });
  });

  it('a dark BMC in refuse mode drops the connection at once', async () => {
    sim = await startSimulator({ scenario: scenario('dell', { darkMode: 'refuse' }), clockFactor: 100 });
    const bmc = sim.bmcs[0]!;
    sim.injectFault({ kind: 'dark', target: { all: true }, duration: '1m' });
    const started = performance.now();
    await expect(get(bmc, '/redfish/v1', {}, 5000)).rejects.toMatchObject({ code: expect.stringMatching(/UND_ERR_SOCKET|ECONNRESET/) });
    expect(performance.now() - started).toBeLessThan(2000);
  });
});

afterAll(async () => {
  await agent.close();
});
