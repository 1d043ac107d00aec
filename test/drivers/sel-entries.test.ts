/**
 * System event log (SEL) entries: read from every `LogServices` whose log is a SEL, recorded as one
 * `SelEntriesObserved`, and appended only for the entries the previous read of the node did not hold. Tested on the
 * real captures that hold SEL logs (Dell, Supermicro X13, GB200, Intel, AMI) and, where no capture shows a case
 * (entries listed only by link, paged logs, a log read partly), on trees written from the Redfish `LogService` and
 * `LogEntry` schemas, as each test says.
 */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { changedObservations, readRedfishNode, RedfishDriver } from '../../src/drivers/index.js';
import { readMockupTree, startSimulator, type RedfishTree } from '../../src/sim/index.js';
import type { DriverObservation, SelEntriesObservedData, SelEntry } from '../../events/driver-observations.js';
import { driverObservationEvents } from '../../events/driver-observations.js';
import { treeFetch } from '../sim/support/tree-fetch.js';
import { fixturePath, fixtures } from './support/fixtures.js';

const selOf = (observations: DriverObservation[]): SelEntriesObservedData =>
  observations.find((o) => o.type === 'SelEntriesObserved')!.data as SelEntriesObservedData;

const capture = (name: string): RedfishTree => readMockupTree(fixturePath(...name.split('/')));

/** Per SEL log the capture holds, its entry count (read by hand from the capture files). */
const expected: Record<string, Record<string, number>> = {
  'redfish/dell': { '/redfish/v1/Managers/iDRAC.Embedded.1/LogServices/Sel': 5, '/redfish/v1/Managers/iDRAC.Embedded.1/LogServices/FaultList': 0 },
  'redfish/supermicro': { '/redfish/v1/Systems/1/LogServices/Log1': 82 },
  // No LogEntryType: the log is a SEL by its id.
  'redfish/nvidia_gb200': { '/redfish/v1/Systems/System_0/LogServices/SEL': 10 },
  'redfish-more/intel_s2600bpb': { '/redfish/v1/Systems/QSBP74100021/LogServices/SEL': 10 },
  'redfish-more/gigabyte_ami': { '/redfish/v1/Systems/Self/LogServices/BIOS': 10, '/redfish/v1/Managers/Self/LogServices/SEL': 10, '/redfish/v1/Chassis/Self/LogServices/Logs': 0 },
  // iLO keeps its IML and IEL (no SEL type, other names); the Cray EX BMC an EventLog: neither is a SEL.
  'redfish/hpe': {},
  'redfish-more/hpe_cray_ex4252': {},
};

describe.skipIf(!fixtures.runnable)(fixtures.title('SEL entries on real captures'), () => {
  it.each(Object.keys(expected))('%s: every SEL log and its entries, and no other log', async (name) => {
    const sel = selOf((await readRedfishNode(treeFetch(capture(name)))).observations);
    expect(Object.fromEntries(sel.logs.map((log) => [log, sel.entries.filter((entry) => entry.log === log).length]))).toEqual(expected[name]);
    expect(sel.unreadable).toBeUndefined();
    expect(new Set(sel.entries.map((entry) => entry.key)).size).toBe(sel.entries.length);
    expect(() => driverObservationEvents.find((e) => e.type === 'SelEntriesObserved')!.schema.parse(sel)).not.toThrow();
  });

  it('an entry keeps what the BMC said of it: id, time as written, severity, sensor and message', async () => {
    const sel = selOf((await readRedfishNode(treeFetch(capture('redfish-more/intel_s2600bpb')))).observations);
    expect(sel.entries[0]).toEqual({
      key: expect.stringMatching(/^[0-9a-f]{16}$/),
      log: '/redfish/v1/Systems/QSBP74100021/LogServices/SEL',
      id: '1',
      created: '2020-08-12T19:07:18+00:00',
      severity: 'OK',
      entryType: 'SEL',
      entryCode: 'Assert',
      sensorType: 'Session Audit',
      sensorNumber: 215,
      messageId: 'Bad User PWD',
      message: 'Invalid Username or Password - User ID 0x3',
    });
    // Dell's SensorType is null: left out, not recorded as something not understood.
    const dell = selOf((await readRedfishNode(treeFetch(capture('redfish/dell')))).observations);
    expect(dell.entries[0]).not.toHaveProperty('sensorType');
    expect(dell.unrecognized).toEqual([]);
  });

  it('the same entries read twice are appended once; a new entry is appended alone', async () => {
    const tree = capture('redfish/dell');
    const first = changedObservations('n1', (await readRedfishNode(treeFetch(tree))).observations, new Map());
    expect(selOf(first.changed).entries).toHaveLength(5);
    const again = changedObservations('n1', (await readRedfishNode(treeFetch(tree))).observations, first.hashes);
    expect(again.changed.find((o) => o.type === 'SelEntriesObserved')).toBeUndefined();

    // The BMC logs one more event (iDRAC lists the newest first).
    const entriesPath = '/redfish/v1/Managers/iDRAC.Embedded.1/LogServices/Sel/Entries';
    const grown = new Map(tree);
    const collection = structuredClone(tree.get(entriesPath)) as { Members: Array<Record<string, unknown>> };
    const newest = { ...collection.Members[0]!, '@odata.id': `${entriesPath}/1025`, Id: '1025', Created: '2024-06-11T00:20:00-05:00', MessageId: 'PSU0003', Message: 'Power supply 1 is lost.' };
    collection.Members.unshift(newest);
    grown.set(entriesPath, collection);
    const third = changedObservations('n1', (await readRedfishNode(treeFetch(grown))).observations, again.hashes);
    expect(selOf(third.changed).entries.map((entry) => entry.id)).toEqual(['1025']);
  });

  it('the driver does not read the logs when the SEL is not asked for', async () => {
    const asked: string[] = [];
    const fetch = treeFetch(capture('redfish/dell'));
    const reading = await readRedfishNode((path) => (asked.push(path), fetch(path)), { readSel: false });
    expect(reading.observations.map((o) => o.type)).not.toContain('SelEntriesObserved');
    expect(asked.filter((path) => path.includes('LogServices'))).toEqual([]);
  });
});

/** A minimal tree written from the Redfish schema (no capture shows these cases): one System with one SEL. */
function schemaTree(entries: { expanded: boolean; pageSize?: number; count: number; logEntryType?: string | null; id?: string }): RedfishTree {
  const tree: RedfishTree = new Map();
  const log = `/redfish/v1/Systems/1/LogServices/${entries.id ?? 'EventLog'}`;
  tree.set('/redfish/v1', { '@odata.id': '/redfish/v1', RedfishVersion: '1.15.0', Systems: { '@odata.id': '/redfish/v1/Systems' } });
  tree.set('/redfish/v1/Systems', { Members: [{ '@odata.id': '/redfish/v1/Systems/1' }] });
  tree.set('/redfish/v1/Systems/1', { '@odata.id': '/redfish/v1/Systems/1', Id: '1', Manufacturer: 'Contoso', Model: 'X', SerialNumber: 'S1', LogServices: { '@odata.id': '/redfish/v1/Systems/1/LogServices' } });
  tree.set('/redfish/v1/Systems/1/LogServices', { Members: [{ '@odata.id': log }] });
  tree.set(log, { '@odata.id': log, Id: entries.id ?? 'EventLog', ...(entries.logEntryType === null ? {} : { LogEntryType: entries.logEntryType ?? 'SEL' }), Entries: { '@odata.id': `${log}/Entries` } });
  const all = Array.from({ length: entries.count }, (_, i) => ({
    '@odata.id': `${log}/Entries/${i + 1}`,
    Id: String(i + 1),
    EntryType: 'SEL',
    Created: `2026-01-01T00:00:${String(i).padStart(2, '0')}Z`,
    Severity: 'Warning',
    MessageId: 'Platform.1.0.Event',
    Message: `event ${i + 1}`,
  }));
  for (const entry of all) tree.set(entry['@odata.id'], entry);
  const pageSize = entries.pageSize ?? all.length;
  for (let skip = 0; skip < Math.max(all.length, 1); skip += pageSize) {
    const page = all.slice(skip, skip + pageSize).map((entry) => (entries.expanded ? entry : { '@odata.id': entry['@odata.id'] }));
    const key = skip === 0 ? `${log}/Entries` : `${log}/Entries?$skip=${skip}`;
    tree.set(key, { Members: page, ...(skip + pageSize < all.length ? { 'Members@odata.nextLink': `${log}/Entries?$skip=${skip + pageSize}` } : {}) });
  }
  return tree;
}

describe('SEL entries by the Redfish schema (no capture shows these)', () => {
  it('entries listed only by link are read one by one; pages are followed', async () => {
    const sel = selOf((await readRedfishNode(treeFetch(schemaTree({ expanded: false, pageSize: 4, count: 10 })))).observations);
    expect(sel.entries.map((entry) => entry.id)).toEqual(['1', '2', '3', '4', '5', '6', '7', '8', '9', '10']);
    expect(sel.entries[9]).toMatchObject({ message: 'event 10', severity: 'Warning', created: '2026-01-01T00:00:09Z' });
  });

  it('at most maxSelEntriesPerLog entries are read from one log', async () => {
    const sel = selOf((await readRedfishNode(treeFetch(schemaTree({ expanded: true, pageSize: 4, count: 10 })), { maxSelEntriesPerLog: 6 })).observations);
    expect(sel.entries).toHaveLength(6);
  });

  it('a log is a SEL by its LogEntryType, or by its id when it gives none; an event log is not', async () => {
    const logsOf = async (tree: RedfishTree) => selOf((await readRedfishNode(treeFetch(tree))).observations).logs;
    expect(await logsOf(schemaTree({ expanded: true, count: 1, logEntryType: 'SEL' }))).toHaveLength(1);
    expect(await logsOf(schemaTree({ expanded: true, count: 1, logEntryType: 'Event' }))).toHaveLength(0);
    expect(await logsOf(schemaTree({ expanded: true, count: 1, logEntryType: null, id: 'SEL' }))).toHaveLength(1);
    expect(await logsOf(schemaTree({ expanded: true, count: 1, logEntryType: null, id: 'Journal' }))).toHaveLength(0);
  });
});

describe('the Redfish driver and the event logs', () => {
  it('reads the logs only when SelEntriesObserved is asked for (or nothing is filtered): a poll lane costs no SEL', { timeout: 30_000 }, async () => {
    const sim = await startSimulator({ bmcs: 1, mockups: ['dell'], behaviour: { latencyScale: 0 } });
    try {
      const bmc = sim.bmcs[0]!;
      const requestsFor = async (only?: Array<'HealthObserved' | 'SelEntriesObserved'>) => {
        const driver = new RedfishDriver({ baseUrl: bmc.baseUrl, username: bmc.username, password: bmc.password });
        const before = sim.bmcStats(bmc.id)!.requests;
        const observations = await driver.observe(only ? { only } : {});
        await driver.close();
        return { requests: sim.bmcStats(bmc.id)!.requests - before, types: observations.map((o) => o.type) };
      };
      const health = await requestsFor(['HealthObserved']);
      const withSel = await requestsFor(['HealthObserved', 'SelEntriesObserved']);
      expect(health.types).toEqual(['HealthObserved']);
      expect(withSel.types).toEqual(['HealthObserved', 'SelEntriesObserved']);
      // The iDRAC profile has three log services (Sel, FaultList, Lclog), each with its Entries: reading them costs more
      // (the LogServices collection, which gives the services expanded, then the Entries of the SEL-type ones).
      expect(withSel.requests - health.requests).toBeGreaterThanOrEqual(3);
      expect((await requestsFor()).types).toContain('SelEntriesObserved');
    } finally {
      await sim.close();
    }
  });
});

describe('SEL change detection', () => {
  const observation = (keys: number[], unreadable = false): DriverObservation => ({
    type: 'SelEntriesObserved',
    data: {
      source: 'redfish',
      dialect: 'generic',
      unrecognized: [],
      ...(unreadable ? { unreadable: [{ path: '/redfish/v1/Systems/1/LogServices/SEL/Entries', code: 'DRIVER_TIMEOUT' }] } : {}),
      logs: ['/redfish/v1/Systems/1/LogServices/SEL'],
      entries: keys.map((key): SelEntry => ({ key: `k${key}`, log: '/redfish/v1/Systems/1/LogServices/SEL', id: String(key) })),
    },
  });

  it('for any history of a wrapping log read now and then, every entry is appended exactly once', () => {
    // The log holds the newest `capacity` entries of a growing sequence (it wraps when full: the oldest leave for
    // good); each read, after `grown` more events, sees what the log holds at that moment.
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 8 }), fc.array(fc.nat(5), { minLength: 1, maxLength: 20 }), (capacity, steps) => {
        let newest = 0;
        let hashes = new Map<string, string>();
        const appended: string[] = [];
        const everRead = new Set<string>();
        for (const grown of steps) {
          newest += grown;
          const window = Array.from({ length: Math.min(capacity, newest) }, (_, i) => newest - i);
          for (const key of window) everRead.add(`k${key}`);
          const result = changedObservations('n1', [observation(window)], hashes);
          hashes = result.hashes;
          for (const o of result.changed) appended.push(...(o.data as SelEntriesObservedData).entries.map((entry) => entry.key));
        }
        expect(new Set(appended).size).toBe(appended.length);
        expect(new Set(appended)).toEqual(everRead);
      }),
    );
  });

  it('what is kept per node stays bounded by what the logs hold, even while another log keeps failing', () => {
    const twoLogs = (window: number[]): DriverObservation => {
      const one = observation(window);
      const data = one.data as SelEntriesObservedData;
      return { type: 'SelEntriesObserved', data: { ...data, logs: [...data.logs, '/redfish/v1/Managers/1/LogServices/SEL'], unreadable: [{ path: '/redfish/v1/Managers/1/LogServices/SEL/Entries', code: 'DRIVER_TIMEOUT' }] } };
    };
    let hashes = new Map<string, string>();
    for (let newest = 1; newest <= 200; newest++) {
      hashes = changedObservations('n1', [twoLogs(Array.from({ length: Math.min(5, newest) }, (_, i) => newest - i))], hashes).hashes;
    }
    expect(hashes.get('SelEntriesObserved')!.match(/\bk\d+\b/g)).toHaveLength(5);
  });

  it('entries are not news again after a read that could not reach their log', () => {
    const first = changedObservations('n1', [observation([1, 2, 3])], new Map());
    const failed = changedObservations('n1', [observation([], true)], first.hashes);
    expect(failed.changed).toEqual([]);
    const back = changedObservations('n1', [observation([1, 2, 3, 4])], failed.hashes);
    expect((back.changed[0]!.data as SelEntriesObservedData).entries.map((entry) => entry.key)).toEqual(['k4']);
  });
});
