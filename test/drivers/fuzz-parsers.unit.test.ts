/**
 * The fuzz pass over the text parsers: real captures (nvidia-smi CSV, `-q` and `-q -x`, kernel logs with Xid lines, ipmitool
 * `sdr`, `dcmi power reading`, Redfish error bodies) damaged at random: lines dropped, repeated, cut, shuffled,
 * separators removed, bytes flipped, NUL and lone surrogates inserted, one line blown up. The rule for each
 * parser: it returns quickly, or gives a typed DriverError (a Redfish error always; an nvidia-smi parser for text
 * it cannot take as its format), and what it returns can be stored: valid for its event type, no NUL or unpaired surrogate, bounded in size. The Redfish tree itself is
 * fuzzed over HTTP in `robustness.test.ts`.
 */
import { readdirSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { GpuTelemetryObserved, GpuXidObserved } from '../../events/driver-observations.js';
import { canonicalJson } from '../../src/ledger/index.js';
import { DriverError, normalizeRedfishError, parseDcmiPowerReading, parseNvidiaSmiCsv, parseNvidiaSmiQuery, parseNvidiaSmiXml, parseSdr, parseXidLog, summarizeSensors } from '../../src/drivers/index.js';
import { captureSection, fixturePath, fixtures, readFixture } from './support/fixtures.js';

type TextDamage =
  | { kind: 'drop-line' | 'repeat-line' | 'cut-line'; pick: number }
  | { kind: 'truncate'; at: number }
  | { kind: 'shuffle'; seed: number }
  | { kind: 'strip'; separator: string }
  | { kind: 'flip'; at: number; byte: number }
  | { kind: 'insert'; at: number; text: string }
  | { kind: 'huge-line'; pick: number; size: number };

const damageArbitrary: fc.Arbitrary<TextDamage[]> = fc.array(
  fc.oneof(
    fc.record({ kind: fc.constantFrom('drop-line' as const, 'repeat-line' as const, 'cut-line' as const), pick: fc.nat() }),
    fc.record({ kind: fc.constant('truncate' as const), at: fc.nat() }),
    fc.record({ kind: fc.constant('shuffle' as const), seed: fc.nat() }),
    fc.record({ kind: fc.constant('strip' as const), separator: fc.constantFrom(',', ':', '|', ' ', '\n', '=', '[', ']') }),
    fc.record({ kind: fc.constant('flip' as const), at: fc.nat(), byte: fc.integer({ min: 0, max: 255 }) }),
    fc.record({ kind: fc.constant('insert' as const), at: fc.nat(), text: fc.oneof(fc.constantFrom('\u0000', '\uD800', '\uDFFF', '\r', '\t', ', , ,', ': :', '[N/A]', 'NaN', '1e999', '-', '0x', '| | |', 'GPU 00000000:17:00.0', 'NVRM: Xid (PCI:0000:17:00): 79, '), fc.string({ unit: 'binary', maxLength: 30 })) }),
    fc.record({ kind: fc.constant('huge-line' as const), pick: fc.nat(), size: fc.constantFrom(10_000, 300_000) }),
  ),
  { minLength: 1, maxLength: 4 },
);

function damaged(text: string, damages: TextDamage[]): string {
  let result = text;
  for (const damage of damages) {
    const lines = result.split('\n');
    const line = 'pick' in damage ? damage.pick % Math.max(1, lines.length) : 0;
    switch (damage.kind) {
      case 'drop-line':
        lines.splice(line, 1);
        result = lines.join('\n');
        break;
      case 'repeat-line':
        lines.splice(line, 0, lines[line] ?? '');
        result = lines.join('\n');
        break;
      case 'cut-line':
        lines[line] = (lines[line] ?? '').slice(0, Math.floor((lines[line] ?? '').length / 2));
        result = lines.join('\n');
        break;
      case 'huge-line':
        lines[line] = `${lines[line] ?? ''}${'9'.repeat(damage.size)}`;
        result = lines.join('\n');
        break;
      case 'truncate':
        result = result.slice(0, damage.at % (result.length + 1));
        break;
      case 'shuffle': {
        let seed = damage.seed;
        for (let index = lines.length - 1; index > 0; index -= 1) {
          seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
          const other = seed % (index + 1);
          [lines[index], lines[other]] = [lines[other]!, lines[index]!];
        }
        result = lines.join('\n');
        break;
      }
      case 'strip':
        result = result.split(damage.separator).join('');
        break;
      case 'flip': {
        const bytes = Buffer.from(result);
        if (bytes.length > 0) bytes[damage.at % bytes.length] = damage.byte;
        result = bytes.toString('utf8');
        break;
      }
      case 'insert': {
        const at = damage.at % (result.length + 1);
        result = result.slice(0, at) + damage.text + result.slice(at);
        break;
      }
    }
  }
  return result;
}

/** What every parser's output must be: storable in the ledger (canonical JSON accepts it) and bounded. */
function expectStorable(value: unknown, what: string): void {
  const text = canonicalJson(value);
  expect(text.length, `${what}: ${text.length} bytes`).toBeLessThan(2 * 1024 * 1024);
}

/** Runs the parser on damaged text; it must answer within a bound (no catastrophic backtracking) and not throw. */
function parseTimed<T>(parse: (text: string) => T, text: string): T {
  const started = performance.now();
  const result = parse(text);
  expect(performance.now() - started, 'a parse takes at most 500 ms').toBeLessThan(500);
  return result;
}

/** For parsers that refuse what is not their format: valid, storable telemetry, or a typed DRIVER_PROTOCOL refusal. */
function telemetryOrRefusal(parse: (text: string) => unknown, text: string, what: string): 'parsed' | 'refused' {
  const started = performance.now();
  try {
    const data = parse(text);
    const check = GpuTelemetryObserved.schema.safeParse(data);
    expect(check.success, JSON.stringify(check.error?.issues.slice(0, 2))).toBe(true);
    expectStorable(data, what);
    return 'parsed';
  } catch (error) {
    expect(error, String(error)).toBeInstanceOf(DriverError);
    expect((error as DriverError).code).toBe('DRIVER_PROTOCOL');
    expectStorable({ message: (error as DriverError).message, details: (error as DriverError).details }, what);
    return 'refused';
  } finally {
    expect(performance.now() - started, 'a parse takes at most 500 ms').toBeLessThan(500);
  }
}

const runs = { numRuns: 300 };

describe.skipIf(!fixtures.runnable)(fixtures.title('fuzz over damaged real captures'), () => {
  const gpuFiles = fixtures.dir === undefined ? [] : readdirSync(fixturePath('gpu', 'nvidia-smi')).filter((name) => name.endsWith('.txt')).sort();
  const sections = (command: (text: string) => string, occurrence = 0) =>
    gpuFiles.map((file) => {
      const text = readFixture('gpu', 'nvidia-smi', file);
      return captureSection(text, command(text), occurrence);
    });

  const outcomes = (parse: (text: string) => unknown, captures: string[], what: string) => {
    const seen = { parsed: 0, refused: 0 };
    fc.assert(
      fc.property(fc.nat(), damageArbitrary, (pick, damages) => {
        seen[telemetryOrRefusal(parse, damaged(captures[pick % captures.length]!, damages), what)] += 1;
      }),
      runs,
    );
    // Both paths ran: damage to a header or the whole shape is refused, damage to a row leaves a readable report.
    expect(seen.parsed, JSON.stringify(seen)).toBeGreaterThan(30);
    expect(seen.refused, JSON.stringify(seen)).toBeGreaterThan(0);
  };

  it('nvidia-smi CSV: any damage gives valid, storable telemetry or a typed refusal', () => {
    const captures = sections((text) => text.split('\n').find((line) => line.startsWith('# $ nvidia-smi --query-gpu=timestamp'))!.slice(4));
    expect(captures.length).toBeGreaterThan(0);
    outcomes(parseNvidiaSmiCsv, captures, 'csv');
  });

  it('nvidia-smi -q: any damage gives valid, storable telemetry or a typed refusal', () => {
    const captures = sections(() => 'nvidia-smi -q');
    expect(captures.length).toBeGreaterThan(0);
    outcomes(parseNvidiaSmiQuery, captures, '-q');
  });

  it('nvidia-smi -q -x: any damage gives valid, storable telemetry or a typed refusal', () => {
    const captures = readdirSync(fixturePath('gpu', 'nvidia-smi-xml'))
      .filter((name) => name.endsWith('.xml'))
      .map((file) => readFixture('gpu', 'nvidia-smi-xml', file));
    fc.assert(
      fc.property(fc.nat(), damageArbitrary, (pick, damages) => {
        telemetryOrRefusal(parseNvidiaSmiXml, damaged(captures[pick % captures.length]!, damages), 'xml');
      }),
      runs,
    );
  });

  it('kernel log: any damage gives valid, storable Xid observations', () => {
    const logs = ['dmesg-with-xid-119.log', 'kmsg.1.log'].map((file) => readFixture('gpu', 'kmsg', file));
    fc.assert(
      fc.property(fc.nat(), damageArbitrary, (pick, damages) => {
        const data = parseTimed(parseXidLog, damaged(logs[pick % logs.length]!, damages));
        const check = GpuXidObserved.schema.safeParse(data);
        expect(check.success, JSON.stringify(check.error?.issues.slice(0, 2))).toBe(true);
        expectStorable(data, 'xid');
      }),
      runs,
    );
  });

  it('ipmitool sdr and dcmi power reading: any damage gives finite readings and storable text', () => {
    const tables = ['mockData_0_line238.txt', 'mockData_1_line562.txt', 'v1Data_0_line589.txt', 'v2Data_0_line603.txt'].map((file) => readFixture('ipmi', file));
    const power = readFixture('ipmi', 'output_0_line837.txt');
    fc.assert(
      fc.property(fc.nat(), damageArbitrary, (pick, damages) => {
        const { sensors, unrecognized } = parseTimed(parseSdr, damaged(tables[pick % tables.length]!, damages));
        for (const sensor of sensors) expect(sensor.reading === null || Number.isFinite(sensor.reading), `${sensor.name}: ${sensor.reading}`).toBe(true);
        expectStorable({ sensors, unrecognized, summary: summarizeSensors(sensors) }, 'sdr');
        const reading = parseTimed(parseDcmiPowerReading, damaged(power, damages));
        for (const value of Object.values(reading)) if (typeof value === 'number') expect(Number.isFinite(value)).toBe(true);
        expectStorable(reading, 'dcmi');
      }),
      runs,
    );
  });

  it('Redfish error bodies: any damage gives a typed DriverError whose details can be stored', () => {
    const bodies = readdirSync(fixturePath('redfish-errors'))
      .filter((name) => name.endsWith('.json'))
      .map((file) => JSON.parse(readFixture('redfish-errors', file)) as { status?: number; body?: unknown });
    expect(bodies.length).toBeGreaterThan(0);
    fc.assert(
      fc.property(fc.nat(), damageArbitrary, fc.constantFrom(400, 401, 403, 404, 405, 409, 412, 429, 500, 501, 503), (pick, damages, status) => {
        const capture = bodies[pick % bodies.length]!;
        const bodyText = damaged(JSON.stringify(capture.body ?? capture, null, 1), damages);
        const error = parseTimed((text) => normalizeRedfishError({ status, bodyText: text, method: 'POST', url: 'https://bmc.example/redfish/v1/SessionService/Sessions' }), bodyText);
        expect(error).toBeInstanceOf(DriverError);
        expect(typeof error.retryable).toBe('boolean');
        expect(error.message.length).toBeLessThan(4096);
        expectStorable({ code: error.code, message: error.message, details: error.details }, 'redfish error');
      }),
      runs,
    );
  });
});
