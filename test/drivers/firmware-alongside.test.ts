/**
 * The firmware inventory is read alongside the rest of a read. Its collection is the slowest answer of a read on many
 * models (minutes on HGX boards), and nothing but the versions taken from it waits on it: a read takes about as long
 * as its slowest answer, not as long as that answer plus everything else.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DriverError, readRedfishNode } from '../../src/drivers/index.js';
import { bmcProfiles, startSimulator, type Simulator, type SimBmcInfo } from '../../src/sim/index.js';

const firmwareCollection = /\/UpdateService\/(FirmwareInventory|SoftwareInventory)\/?(\?|$)/;
const underFirmware = /\/UpdateService\/(FirmwareInventory|SoftwareInventory)(\/|\?|$)/;

describe('the firmware inventory read alongside the rest', { timeout: 120_000 }, () => {
  let sim: Simulator;
  beforeAll(async () => {
    const names = bmcProfiles.map((profile) => profile.name);
    sim = await startSimulator({ bmcs: names.length, mockups: names, seed: 5, behaviour: { latencyScale: 0 } });
  });
  afterAll(async () => sim?.close());

  /**
   * One full read of `bmc` whose firmware collection answers only once nothing else has been in flight for 50 ms (the
   * slowest answer of the read, however fast the rest is; at once if not `slow`), and the other requests asked after
   * that answer.
   */
  async function readWithSlowFirmware(bmc: SimBmcInfo, expand: boolean, slow = true): Promise<{ askedAfter: string[]; components: number }> {
    const auth = { authorization: `Basic ${Buffer.from(`${bmc.username}:${bmc.password}`).toString('base64')}` };
    let othersInFlight = 0;
    let firmwareAnswered = false;
    const askedAfter: string[] = [];
    const get = async (path: string): Promise<unknown> => {
      const response = await fetch(`${bmc.baseUrl}${path}`, { headers: auth });
      if (!response.ok) throw new DriverError('DRIVER_NOT_FOUND', `${path} answered ${response.status}`, { url: path });
      return response.json();
    };
    const reading = await readRedfishNode(
      async (path) => {
        if (firmwareCollection.test(path)) {
          const body = await get(path);
          for (let idle = 0; slow && idle < 5; ) {
            await new Promise((resolve) => setTimeout(resolve, 10));
            idle = othersInFlight === 0 ? idle + 1 : 0;
          }
          firmwareAnswered = true;
          return body;
        }
        if (firmwareAnswered && !underFirmware.test(path)) askedAfter.push(path);
        othersInFlight += 1;
        try {
          return await get(path);
        } finally {
          othersInFlight -= 1;
        }
      },
      { expand },
    );
    const firmware = reading.observations.find((observation) => observation.type === 'FirmwareInventoryObserved')!.data as { components: unknown[] };
    return { askedAfter, components: firmware.components.length };
  }

  it('asks for everything else of the read before the firmware collection answers, on every simulated model, both ways', async () => {
    for (const bmc of sim.bmcs) {
      for (const expand of [false, true]) {
        const { askedAfter, components } = await readWithSlowFirmware(bmc, expand);
        expect(askedAfter, `${bmc.fixture}${expand ? ', expanded' : ''}`).toEqual([]);
        // The same firmware inventory as a read whose firmware collection answers at once.
        expect(components, bmc.fixture).toBe(await readWithSlowFirmware(bmc, expand, false).then((read) => read.components));
      }
    }
  });
});
