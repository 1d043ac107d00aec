/**
 * Collections read expanded (`$expand=.`) where the service root announces it: every member in the collection's own
 * answer, one request instead of one per member. The rule: expansion changes how many requests a read costs, never
 * what it observes; a BMC that announces it and then refuses it is read in full all the same.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expandQueryOf, RedfishDriver } from '../../src/drivers/index.js';
import { startMockupServer, type MockupFault, type MockupServer } from '../../src/drivers/mockup/mockup-server.js';
import { bmcProfiles, startSimulator, type Simulator, type SimBmcInfo } from '../../src/sim/index.js';
import type { DriverObservation } from '../../events/index.js';
import { fixturePath, fixtures, readFixture } from './support/fixtures.js';

/** What an observation says, without when it was made or how long the read took. */
function comparable(observations: DriverObservation[]): unknown {
  return observations
    .map((observation) => {
      const { latencyMs: _latency, ...data } = observation.data as Record<string, unknown>;
      return { type: observation.type, data };
    })
    .sort((a, b) => (a.type < b.type ? -1 : a.type > b.type ? 1 : 0));
}

describe('reading collections expanded', { timeout: 120_000 }, () => {
  let sim: Simulator;
  beforeAll(async () => {
    // Every profile, those a default fleet leaves out (older generations) too.
    const names = bmcProfiles.map((profile) => profile.name);
    sim = await startSimulator({ bmcs: names.length, mockups: names, seed: 5, behaviour: { latencyScale: 0 } });
  });
  afterAll(async () => sim?.close());

  /** One full read of `bmc`, and the requests the simulator served for it. */
  async function read(bmc: SimBmcInfo, expand: boolean): Promise<{ observations: DriverObservation[]; requests: number }> {
    const before = sim.stats().requests;
    const driver = new RedfishDriver({ baseUrl: bmc.baseUrl, username: bmc.username, password: bmc.password, maxConcurrency: 2, requestTimeoutMs: 10_000, expand });
    try {
      const observations = await driver.observe({ only: ['NodeInventoryObserved', 'FirmwareInventoryObserved', 'HealthObserved', 'PowerStateObserved', 'SensorsObserved'] });
      return { observations, requests: sim.stats().requests - before };
    } finally {
      await driver.close();
    }
  }

  it('observes the same inventory, firmware, health and sensors expanded as member by member, on every simulated model', async () => {
    const fewer: string[] = [];
    for (const bmc of sim.bmcs) {
      const plain = await read(bmc, false);
      const expanded = await read(bmc, true);
      expect(comparable(expanded.observations), bmc.fixture).toEqual(comparable(plain.observations));
      expect(expanded.requests, bmc.fixture).toBeLessThanOrEqual(plain.requests);
      if (expanded.requests < plain.requests) fewer.push(bmc.fixture);
    }
    // Every model whose root announces `$expand` with `NoLinks` is read in fewer requests; the others as before.
    const announcing = await Promise.all(
      sim.bmcs.map(async (bmc) => {
        const root = (await (await fetch(`${bmc.baseUrl}/redfish/v1`)).json()) as Record<string, unknown>;
        return expandQueryOf(root) ? bmc.fixture : undefined;
      }),
    );
    expect(fewer.sort()).toEqual(announcing.filter((name): name is string => name !== undefined).sort());
    expect(fewer.length).toBeGreaterThanOrEqual(8);
  });

  it('reads a GB200 tray, which announces $expand, in under half the requests (511 and 181 without its SEL when written)', async () => {
    const bmc = sim.bmcs.find((candidate) => candidate.fixture === 'nvidia_gb200')!;
    const plain = await read(bmc, false);
    const expanded = await read(bmc, true);
    expect(expanded.requests * 2).toBeLessThan(plain.requests);
  });
});

describe.skipIf(!fixtures.runnable)(fixtures.title('a BMC that announces $expand and does not answer it'), { timeout: 60_000 }, () => {
  // The Dell capture's root announces `ExpandQuery` with `NoLinks`. Its expanded requests are answered as BMCs refuse
  // them: the mockup server's 404 (it has no expanded answers), iDRAC 8's unlicensed answer (a 400 whose body is the
  // error document followed by the resource, as captured), and 501 Not Implemented.
  let server: MockupServer;
  const asked: string[] = [];
  let refusal: MockupFault | undefined;
  beforeAll(async () => {
    server = await startMockupServer({
      folder: fixturePath('redfish', 'dell'),
      fault: ({ path }) => {
        asked.push(path);
        return path.includes('$expand') ? refusal : undefined;
      },
    });
  });
  afterAll(async () => server?.close());

  const readWith = async (expand: boolean): Promise<DriverObservation[]> => {
    const driver = new RedfishDriver({ baseUrl: server.url, username: 'root', password: 'calvin', maxConcurrency: 1, requestTimeoutMs: 10_000, expand });
    try {
      return await driver.observe({ only: ['NodeInventoryObserved', 'FirmwareInventoryObserved'] });
    } finally {
      await driver.close();
    }
  };
  const licence = (): MockupFault => ({ kind: 'raw', status: 400, text: (JSON.parse(readFixture('redfish-errors-more', 'dell-idrac8-expand-license-error-concatenated-with-resource.json')) as { raw_text: string }).raw_text });
  const refusals: Record<string, () => MockupFault | undefined> = {
    '404 (no expanded answer)': () => undefined,
    "400, iDRAC 8's unlicensed answer": licence,
    '501 Not Implemented': () => ({ kind: 'status', status: 501 }),
  };

  it.each(Object.keys(refusals))('%s: read member by member after the first refusal, observing what a plain read observes', async (name) => {
    refusal = undefined;
    const plain = await readWith(false);
    refusal = refusals[name]!();
    asked.length = 0;
    const expanded = await readWith(true);
    expect(comparable(expanded)).toEqual(comparable(plain));
    // Asked expanded only for the four collections read at once from the root (Systems, Managers, Chassis, and the
    // firmware inventory, read alongside them): once the first refusal is in, never again within the read
    // (processors, memory and the rest).
    expect(asked.filter((path) => path.includes('$expand')).length).toBeLessThanOrEqual(4);
    expect(asked.filter((path) => path.includes('$expand') && !/\/(Systems|Managers|Chassis|UpdateService\/FirmwareInventory)\?/.test(path))).toEqual([]);
    const inventory = expanded.find((observation) => observation.type === 'FirmwareInventoryObserved')!.data as { components: unknown[] };
    expect(inventory.components.length).toBeGreaterThan(10);
  });
});
