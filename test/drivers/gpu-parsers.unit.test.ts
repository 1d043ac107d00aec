import { describe, expect, it } from 'vitest';
import { readdirSync } from 'node:fs';
import { GpuTelemetryObserved, GpuXidObserved } from '../../events/driver-observations.js';
import { describeXid, DriverError, gpuQueryFields, parseNvidiaSmiCsv, parseNvidiaSmiQuery, parseNvidiaSmiXml, parseXidLog } from '../../src/drivers/index.js';
import { captureSection, fixturePath, readFixture, fixtures } from './support/fixtures.js';

const captures = fixtures.dir === undefined ? [] : readdirSync(fixturePath('gpu', 'nvidia-smi')).filter((name) => name.endsWith('.txt')).sort();

function csvSection(file: string, occurrence: number): string {
  const text = readFixture('gpu', 'nvidia-smi', file);
  const command = text.split('\n').find((line) => line.startsWith('# $ nvidia-smi --query-gpu=timestamp'))!.slice(4);
  return captureSection(text, command, occurrence);
}

/** Read from each capture's CSV by hand: name, driver, temperature.gpu and the active clocks_event_reasons (idle, load). */
const expectedCsv: Record<string, { name: string; driver: string; temperatures: [number, number]; idleReasons: string[] }> = {
  'linux-x86_64__nvidia-h100-80gb-hbm3__590.48.01.txt': { name: 'NVIDIA H100 80GB HBM3', driver: '590.48.01', temperatures: [41, 59], idleReasons: ['gpu_idle'] },
  'linux-x86_64__nvidia-h100-mig__590.48.01.txt': { name: 'NVIDIA H100 80GB HBM3', driver: '590.48.01', temperatures: [42, 53], idleReasons: ['gpu_idle'] },
  'linux-x86_64__nvidia-h200__590.48.01.txt': { name: 'NVIDIA H200', driver: '590.48.01', temperatures: [28, 52], idleReasons: ['gpu_idle'] },
  'linux-x86_64__nvidia-l40s__595.80.txt': { name: 'NVIDIA L40S', driver: '595.80', temperatures: [63, 54], idleReasons: [] },
};

describe.skipIf(!fixtures.runnable)(fixtures.title('nvidia-smi --query-gpu --format=csv'), () => {
  it('has an expectation for every capture', () => {
    expect(Object.keys(expectedCsv).sort()).toEqual(captures);
  });

  it.each(captures)('%s: identity, ECC, remapped rows and throttle reasons, [N/A] as absent', (file) => {
    const want = expectedCsv[file]!;
    for (const [occurrence, temperature] of want.temperatures.entries()) {
      const data = parseNvidiaSmiCsv(csvSection(file, occurrence));
      expect(GpuTelemetryObserved.schema.safeParse(data).success).toBe(true);
      expect(data.driverVersion).toBe(want.driver);
      expect(data.gpus).toHaveLength(1);
      const gpu = data.gpus[0]!;
      expect(gpu.name).toBe(want.name);
      expect(gpu.temperatureC).toBe(temperature);
      expect(gpu.ecc).toEqual({ correctedVolatile: 0, uncorrectedVolatile: 0, correctedAggregate: 0, uncorrectedAggregate: 0 });
      // retired_pages.* are [N/A] on these GPUs (row remapping replaced page retirement).
      expect(gpu.retiredPages.singleBit).toBeUndefined();
      expect(gpu.throttleReasons).toEqual(occurrence === 0 ? want.idleReasons : []);
      expect(data.unrecognized).toEqual([]);
    }
  });

  it('reads the pre-535 clocks_throttle_reasons spelling the same as clocks_event_reasons', () => {
    const file = captures[0]!;
    const current = parseNvidiaSmiCsv(csvSection(file, 0));
    const legacy = parseNvidiaSmiCsv(csvSection(file, 0).replaceAll('clocks_event_reasons', 'clocks_throttle_reasons'));
    expect(legacy).toEqual(current);
    expect(legacy.gpus[0]!.throttleReasons).toEqual(['gpu_idle']);
  });

  it('keeps a value it cannot read as unrecognized', () => {
    const data = parseNvidiaSmiCsv('index, name, remapped_rows.correctable, clocks_event_reasons.sw_power_cap\n0, GPU X, lots, Maybe\n');
    expect(data.gpus[0]!.remappedRows.correctable).toBeUndefined();
    expect(data.unrecognized.map((entry) => entry.path)).toEqual(['gpu/0/remapped_rows.correctable', 'gpu/0/clocks_event_reasons.sw_power_cap']);
  });
});

describe.skipIf(!fixtures.runnable)(fixtures.title('nvidia-smi -q'), () => {
  it.each(captures)('%s: the report agrees with the CSV on identity, ECC and throttle reasons', (file) => {
    const text = readFixture('gpu', 'nvidia-smi', file);
    for (const occurrence of [0, 1]) {
      const query = parseNvidiaSmiQuery(captureSection(text, 'nvidia-smi -q', occurrence));
      const csv = parseNvidiaSmiCsv(csvSection(file, occurrence));
      expect(GpuTelemetryObserved.schema.safeParse(query).success).toBe(true);
      expect(query.gpus).toHaveLength(1);
      const [fromQuery, fromCsv] = [query.gpus[0]!, csv.gpus[0]!];
      expect(fromQuery.name).toBe(fromCsv.name);
      expect(fromQuery.uuid).toBe(fromCsv.uuid);
      expect(fromQuery.ecc).toEqual(fromCsv.ecc);
      expect(fromQuery.remappedRows).toEqual(fromCsv.remappedRows);
      expect(fromQuery.throttleReasons).toEqual(fromCsv.throttleReasons);
      // The report and the CSV were captured moments apart, so readings (temperature) may differ by a degree.
      expect(Math.abs((fromQuery.temperatureC ?? Number.NaN) - (fromCsv.temperatureC ?? Number.NaN))).toBeLessThanOrEqual(2);
      expect(query.driverVersion).toBe(csv.driverVersion);
    }
  });

  it('reads the old "Clocks Throttle Reasons" section the same as "Clocks Event Reasons"', () => {
    const section = captureSection(readFixture('gpu', 'nvidia-smi', captures[0]!), 'nvidia-smi -q', 0);
    const legacy = parseNvidiaSmiQuery(section.replaceAll('Clocks Event Reasons', 'Clocks Throttle Reasons'));
    expect(legacy).toEqual(parseNvidiaSmiQuery(section));
    expect(legacy.gpus[0]!.throttleReasons).toEqual(['gpu_idle']);
  });

  it('sums the old Single Bit / Double Bit ECC layout from its Total lines', () => {
    const old = [
      'Driver Version                            : 470.57.02',
      'GPU 00000000:3B:00.0',
      '    Product Name                          : Tesla V100-SXM2-32GB',
      '    ECC Errors',
      '        Volatile',
      '            Single Bit',
      '                Device Memory             : 3',
      '                Total                     : 3',
      '            Double Bit',
      '                Device Memory             : 1',
      '                Total                     : 1',
      '    Retired Pages',
      '        Single Bit ECC                    : 2',
      '        Double Bit ECC                    : 0',
      '        Pending Page Blacklist            : No',
    ].join('\n');
    const gpu = parseNvidiaSmiQuery(old).gpus[0]!;
    expect(gpu.ecc).toEqual({ correctedVolatile: 3, uncorrectedVolatile: 1 });
    expect(gpu.retiredPages).toEqual({ singleBit: 2, doubleBit: 0, pending: false });
  });
});

describe.skipIf(!fixtures.runnable)(fixtures.title('XID errors from the kernel log'), () => {
  it('finds the five XID 119 (GSP RPC timeout) lines of the Dell XE9680 log with their meaning and action', () => {
    const data = parseXidLog(readFixture('gpu', 'kmsg', 'dmesg-with-xid-119.log'));
    expect(GpuXidObserved.schema.safeParse(data).success).toBe(true);
    expect(data.events).toHaveLength(5);
    expect(data.events.every((event) => event.xid === 119 && event.pciBusId === '0000:9b:00')).toBe(true);
    expect(data.events[0]).toMatchObject({
      kernelTimestamp: 'Sun Feb 23 16:24:18 2025',
      pid: 2024380,
      processName: 'nvidia-smi',
      severity: 'critical',
      meaning: describeXid(119).meaning,
    });
    expect(data.events[0]!.message).toMatch(/^Timeout after 6s of waiting for RPC response from GPU4 GSP!/);
    expect(data.events.map((event) => event.processName)).toEqual(['nvidia-smi', 'nvidia-smi', 'nvidia-smi', 'cache_mgr_main', 'gpud']);
    expect(data.unrecognized).toEqual([]);
  });

  it('finds nothing in a kernel log without XIDs (kmsg records from an NVSwitch host)', () => {
    expect(parseXidLog(readFixture('gpu', 'kmsg', 'kmsg.1.log')).events).toEqual([]);
  });

  it('reads /dev/kmsg records and reports codes missing from the catalogue as unrecognized', () => {
    const line = '4,1234,206764399,-;NVRM: Xid (PCI:0000:1a:00): 999, pid=42, name=train.py, Something new';
    const data = parseXidLog(line);
    expect(data.events[0]).toMatchObject({ xid: 999, pciBusId: '0000:1a:00', kernelTimestamp: '206764399', pid: 42, processName: 'train.py', message: 'Something new', severity: 'warning' });
    expect(data.unrecognized).toHaveLength(1);
  });

  it('catalogues the fleet-relevant codes with a severity and an action', () => {
    for (const code of [13, 31, 43, 48, 63, 64, 74, 79, 92, 94, 95, 119, 120, 140]) {
      const entry = describeXid(code);
      expect(entry.known, String(code)).toBe(true);
      expect(entry.recommendedAction.length).toBeGreaterThan(10);
    }
    expect(describeXid(79).severity).toBe('critical');
  });
});

const xmlCaptures = fixtures.dir === undefined ? [] : readdirSync(fixturePath('gpu', 'nvidia-smi-xml')).filter((name) => name.endsWith('.xml')).sort();

/** Read from each XML capture by hand: per GPU, bus id, name, temperature, power, ECC totals, retired pages, remapped rows, active reasons. */
const expectedXml: Record<string, { driver: string; gpus: Array<Record<string, unknown>>; unrecognized?: string[] }> = {
  '2x-geforce-rtx-2080-ti__410.73.xml': {
    driver: '410.73',
    gpus: [
      { pciBusId: '00000000:02:00.0', name: 'GeForce RTX 2080 Ti', temperatureC: 24, powerDrawW: 2.12, ecc: {}, retiredPages: {}, remappedRows: {}, throttleReasons: ['gpu_idle'] },
      { pciBusId: '00000000:03:00.0', name: 'GeForce RTX 2080 Ti', temperatureC: 24, powerDrawW: 19.11, ecc: {}, retiredPages: {}, remappedRows: {}, throttleReasons: ['sw_power_cap'] },
    ],
  },
  '2x-nvidia-l4__555.42.06.xml': {
    driver: '555.42.06',
    gpus: [
      { pciBusId: '00000000:01:00.0', name: 'NVIDIA L4', serial: '1654523003308', temperatureC: 45, powerDrawW: 27.22, ecc: { correctedVolatile: 0, uncorrectedVolatile: 0, correctedAggregate: 0, uncorrectedAggregate: 0 }, retiredPages: {}, remappedRows: { correctable: 0, uncorrectable: 0, pending: false, failure: false }, throttleReasons: ['gpu_idle'] },
      { pciBusId: '00000000:C1:00.0', name: 'NVIDIA L4', serial: '1654523001128', temperatureC: 40, powerDrawW: 29.54, throttleReasons: ['gpu_idle'] },
    ],
  },
  '4x-tesla-k80__430.26.xml': {
    driver: '430.26',
    gpus: [
      { pciBusId: '00001580:00:00.0', name: 'Tesla K80', temperatureC: 64, ecc: { correctedVolatile: 0, uncorrectedVolatile: 0, correctedAggregate: 7, uncorrectedAggregate: 7 }, retiredPages: { singleBit: 1, doubleBit: 1, pending: false }, remappedRows: {} },
      { pciBusId: '00002DF7:00:00.0', ecc: { correctedAggregate: 34, uncorrectedAggregate: 4 } },
      { pciBusId: '00004968:00:00.0' },
      { pciBusId: '0000F8D6:00:00.0' },
    ],
  },
  'geforce-gtx-1080__440.33.01.xml': { driver: '440.33.01', gpus: [{ name: 'GeForce GTX 1080', temperatureC: 65, powerDrawW: 89.74, remappedRows: {} }] },
  // `<remapped_rows>N/A</remapped_rows>`: no remapping on this GPU, nothing invented.
  'geforce-gtx-1080__495.29.05.xml': { driver: '495.29.05', gpus: [{ name: 'NVIDIA GeForce GTX 1080', temperatureC: 55, powerDrawW: 42.64, remappedRows: {} }] },
  'tesla-v100-sxm3-32gb-retired-pages__410.104.xml': {
    driver: '410.104',
    gpus: [{ pciBusId: '00000000:34:00.0', name: 'Tesla V100-SXM3-32GB', temperatureC: 33, powerDrawW: 50.6, ecc: { correctedVolatile: 1, uncorrectedVolatile: 1, correctedAggregate: 291, uncorrectedAggregate: 7627 }, retiredPages: { singleBit: 0, doubleBit: 2, pending: true }, throttleReasons: ['gpu_idle'] }],
    unrecognized: ['nvidia_smi_log/attached_gpus'],
  },
};

describe.skipIf(!fixtures.runnable)(fixtures.title('nvidia-smi -q -x'), () => {
  it('has an expectation for every capture', () => {
    expect(Object.keys(expectedXml).sort()).toEqual(xmlCaptures);
  });

  it.each(xmlCaptures)('%s: identity, ECC in either layout, retired pages, remapped rows, reasons; N/A as absent', (file) => {
    const want = expectedXml[file]!;
    const data = parseNvidiaSmiXml(readFixture('gpu', 'nvidia-smi-xml', file));
    expect(GpuTelemetryObserved.schema.safeParse(data).success).toBe(true);
    expect(data.dialect).toBe('nvidia-smi-xml');
    expect(data.driverVersion).toBe(want.driver);
    expect(data.gpus).toHaveLength(want.gpus.length);
    want.gpus.forEach((gpu, index) => expect(data.gpus[index], `GPU ${index}`).toMatchObject({ index, ...gpu }));
    expect(data.unrecognized.map((value) => value.path)).toEqual(want.unrecognized ?? []);
  });
});

describe.skipIf(!fixtures.runnable)(fixtures.title('each nvidia-smi parser refuses what is not its format'), () => {
  const xml = () => readFixture('gpu', 'nvidia-smi-xml', '2x-nvidia-l4__555.42.06.xml');
  const report = () => captureSection(readFixture('gpu', 'nvidia-smi', 'linux-x86_64__nvidia-l40s__595.80.txt'), 'nvidia-smi -q', 0);
  const refusal = (parse: () => unknown) => {
    try {
      parse();
    } catch (error) {
      return error;
    }
    return undefined;
  };

  it('the CSV parser fed the XML report (or the -q report) is DRIVER_PROTOCOL, not one phantom GPU per line', () => {
    for (const text of [xml(), report()]) {
      const error = refusal(() => parseNvidiaSmiCsv(text));
      expect(error).toBeInstanceOf(DriverError);
      expect(error).toMatchObject({ code: 'DRIVER_PROTOCOL', retryable: false });
      expect((error as Error).message).toMatch(/not nvidia-smi --query-gpu CSV: the header names/);
    }
  });

  it('the CSV parser given the fields it queried refuses a header that is not exactly those', () => {
    const header = gpuQueryFields.join(', ');
    expect(parseNvidiaSmiCsv(`${header}\n${gpuQueryFields.map(() => '[N/A]').join(', ')}`, gpuQueryFields).gpus).toHaveLength(1);
    const swapped = [gpuQueryFields[1], gpuQueryFields[0], ...gpuQueryFields.slice(2)].join(', ');
    expect(refusal(() => parseNvidiaSmiCsv(`${swapped}\n`, gpuQueryFields))).toMatchObject({ code: 'DRIVER_PROTOCOL', message: expect.stringMatching(/column 1 is 'name', the query asked for 'index'/) });
    expect(refusal(() => parseNvidiaSmiCsv('', gpuQueryFields))).toMatchObject({ code: 'DRIVER_PROTOCOL' });
  });

  it('the -q parser that recognises nothing says so (DRIVER_PROTOCOL) instead of answering "no GPU"', () => {
    for (const text of ['', 'No devices were found', xml(), `${gpuQueryFields.join(', ')}\n0, GPU X`]) {
      expect(refusal(() => parseNvidiaSmiQuery(text)), text.slice(0, 40)).toMatchObject({ code: 'DRIVER_PROTOCOL' });
    }
  });

  it('the XML parser refuses other text and a report cut short, naming why', () => {
    expect(refusal(() => parseNvidiaSmiXml(report()))).toMatchObject({ code: 'DRIVER_PROTOCOL', message: expect.stringMatching(/no element at all/) });
    expect(refusal(() => parseNvidiaSmiXml(`${xml()}\ntrailing text`))).toMatchObject({ code: 'DRIVER_PROTOCOL', message: expect.stringMatching(/text outside the root element/) });
    const cut = xml().slice(0, 5000);
    expect(refusal(() => parseNvidiaSmiXml(cut))).toMatchObject({ code: 'DRIVER_PROTOCOL', message: expect.stringMatching(/never closed \(the report is cut short\)/) });
    expect(refusal(() => parseNvidiaSmiXml('<html><body>502 Bad Gateway</body></html>'))).toMatchObject({ code: 'DRIVER_PROTOCOL', message: expect.stringMatching(/root element is <html>/) });
  });
});
