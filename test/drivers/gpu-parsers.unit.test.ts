import { describe, expect, it } from 'vitest';
import { readdirSync } from 'node:fs';
import { GpuTelemetryObserved, GpuXidObserved } from '../../events/driver-observations.js';
import { describeXid, parseNvidiaSmiCsv, parseNvidiaSmiQuery, parseXidLog } from '../../src/drivers/index.js';
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
