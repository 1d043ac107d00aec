/**
 * `captures`: an operator simulates many copies of their own BMC model from one Mockup-Creator capture. The
 * capture here is written to disk from a generated tree (the Mockup-Creator layout: `redfish/v1/.../index.json`),
 * so the test needs nothing outside the repository; the team's real captures are served too when
 * FLEET_LEDGER_FIXTURES names them.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { RedfishDriver } from '../../src/drivers/index.js';
import { bmcProfileByName, generateTree, SimError, startSimulator, type RedfishTree, type SimBmcInfo } from '../../src/sim/index.js';
import { fixturesRequirement } from '../support/fixtures-requirement.js';
import { writeMockupFolder } from '../support/profile-mockup.js';

/** A capture folder as Mockup Creator leaves it: the tree, and a README with the response times it measured. */
function writeCapture(tree: RedfishTree, dir: string): void {
  writeMockupFolder(tree, dir);
  writeFileSync(join(dir, 'README'), 'Average response time: 0.05\nMinimum response time: 0.01, /redfish/v1\nMaximum response time: 0.2, /redfish/v1/Systems\n');
}

async function readNode(bmc: SimBmcInfo): Promise<{ dialect: string; serial: string | undefined; model: string | undefined }> {
  const driver = new RedfishDriver({ baseUrl: bmc.baseUrl, username: bmc.username, password: bmc.password, maxConcurrency: 2, requestTimeoutMs: 10_000 });
  try {
    const observations = await driver.observe();
    const inventory = observations.find((o) => o.type === 'NodeInventoryObserved')!.data as { dialect: string; system: { serialNumber?: string; model?: string } };
    return { dialect: inventory.dialect, serial: inventory.system.serialNumber, model: inventory.system.model };
  } finally {
    await driver.close();
  }
}

const folders: string[] = [];
afterAll(() => {
  for (const folder of folders) rmSync(folder, { recursive: true, force: true });
});

describe('serving real Mockup-Creator captures instead of profiles', { timeout: 60_000 }, () => {
  it('a folder of captures is served by name, each BMC with its own identity', async () => {
    const root = mkdtempSync(join(tmpdir(), 'fleet-ledger-captures-'));
    folders.push(root);
    writeCapture(generateTree(bmcProfileByName('dell')!), join(root, 'r750-lab'));
    const sim = await startSimulator({ bmcs: 3, captures: root, behaviour: { latencyScale: 0 } });
    try {
      expect(sim.captures()).toEqual([expect.objectContaining({ fixture: 'r750-lab', source: 'capture', bmcs: 3 })]);
      const readings = await Promise.all(sim.bmcs.map(readNode));
      expect(readings.map((r) => r.dialect)).toEqual(['dell-idrac9', 'dell-idrac9', 'dell-idrac9']);
      expect(new Set(readings.map((r) => r.serial)).size).toBe(3);
    } finally {
      await sim.close();
    }
  });

  it('a capture folder given by path mixes with the built-in profiles', async () => {
    const root = mkdtempSync(join(tmpdir(), 'fleet-ledger-captures-'));
    folders.push(root);
    writeCapture(generateTree(bmcProfileByName('dell')!), root);
    const sim = await startSimulator({ bmcs: 4, mockups: [root, 'dell'], behaviour: { latencyScale: 0 } });
    try {
      expect(sim.captures().map((c) => c.source).sort()).toEqual(['capture', 'profile']);
    } finally {
      await sim.close();
    }
  });

  it('a stored page of a capture (`Collection?$skip=N` folder) is served for `?$skip=N`', async () => {
    const root = mkdtempSync(join(tmpdir(), 'fleet-ledger-captures-'));
    folders.push(root);
    const tree = generateTree(bmcProfileByName('dell')!);
    const inventory = '/redfish/v1/UpdateService/FirmwareInventory';
    const members = (tree.get(inventory) as { Members: unknown[] }).Members;
    tree.set(inventory, { ...(tree.get(inventory) as object), Members: members.slice(0, 10), 'Members@odata.nextLink': `${inventory}?$skip=10` });
    tree.set(`${inventory}?$skip=10`, { '@odata.id': inventory, Members: members.slice(10), 'Members@odata.count': members.length });
    writeCapture(tree, root);
    const sim = await startSimulator({ bmcs: 1, mockups: [root], behaviour: { latencyScale: 0 } });
    try {
      const bmc = sim.bmcs[0]!;
      const auth = { authorization: `Basic ${Buffer.from(`${bmc.username}:${bmc.password}`).toString('base64')}` };
      const page = (await (await fetch(`${bmc.baseUrl}${inventory}?$skip=10`, { headers: auth })).json()) as { Members: unknown[] };
      expect(page.Members).toHaveLength(members.length - 10);
      const firmware = (await (await import('../../src/drivers/index.js')).readRedfishNode(async (path) => (await fetch(`${bmc.baseUrl}${path}`, { headers: auth })).json()))
        .observations.find((o) => o.type === 'FirmwareInventoryObserved')!.data as { components: unknown[] };
      expect(firmware.components).toHaveLength(members.length);
    } finally {
      await sim.close();
    }
  });

  it('an unknown profile name is refused with the names that exist', async () => {
    const error = await startSimulator({ bmcs: 1, mockups: ['dell-r9999'] }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SimError);
    expect((error as SimError).code).toBe('SIM_SCENARIO_INVALID');
    expect((error as SimError).message).toMatch(/unknown vendor profile dell-r9999: use one of dell, /);
  });

  it('a captures folder without any capture is refused, naming the folder', async () => {
    const empty = mkdtempSync(join(tmpdir(), 'fleet-ledger-captures-'));
    folders.push(empty);
    const error = await startSimulator({ bmcs: 1, captures: empty }).catch((e: unknown) => e);
    expect((error as SimError).code).toBe('SIM_MOCKUP_INVALID');
    expect((error as SimError).message).toContain(empty);
  });

  const fixtures = fixturesRequirement();
  it.skipIf(!fixtures.runnable)(fixtures.title('the team captures are served as they were captured'), async () => {
    const sim = await startSimulator({ bmcs: 2, captures: join(fixtures.require(), 'redfish'), mockups: ['hpe'], behaviour: { latencyScale: 0 } });
    try {
      const reading = await readNode(sim.bmcs[0]!);
      expect(reading).toMatchObject({ dialect: 'hpe-ilo5', model: 'ProLiant DL385 Gen10 Plus v2' });
      expect(sim.captures()[0]).toMatchObject({ fixture: 'hpe', source: 'capture' });
    } finally {
      await sim.close();
    }
  });
});
