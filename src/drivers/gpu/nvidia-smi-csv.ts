/**
 * Parser for `nvidia-smi --query-gpu=... --format=csv` output into GPU telemetry.
 *
 * Handles both spellings of the throttle fields (`clocks_throttle_reasons.*`, renamed `clocks_event_reasons.*`
 * around driver 535), unit suffixes in the header (`memory.total [MiB]`), and the bracketed non-values
 * (`[N/A]`, `[Not Supported]`, `[Requested functionality has been deprecated]`), which become absent fields.
 * A value that should be a number and is not is kept in `unrecognized`.
 */
import type { GpuTelemetry, GpuTelemetryObservedData, UnrecognizedValue } from '../../../events/index.js';
import { firstReading, powerDrawPlaces } from './field-renames.js';
import { presentText } from '../placeholder.js';
import { storableText } from '../storable-text.js';
import { DriverError } from '../driver-error.js';

/** The fields the agent asks for. `clocks_event_reasons` is swapped for the old spelling on old drivers. */
export const gpuQueryFields: readonly string[] = [
  'index',
  'name',
  'uuid',
  'serial',
  'pci.bus_id',
  'vbios_version',
  'driver_version',
  'temperature.gpu',
  'power.draw',
  'ecc.errors.corrected.volatile.total',
  'ecc.errors.uncorrected.volatile.total',
  'ecc.errors.corrected.aggregate.total',
  'ecc.errors.uncorrected.aggregate.total',
  'retired_pages.single_bit_ecc.count',
  'retired_pages.double_bit.count',
  'retired_pages.pending',
  'remapped_rows.correctable',
  'remapped_rows.uncorrectable',
  'remapped_rows.pending',
  'remapped_rows.failure',
  'clocks_event_reasons.gpu_idle',
  'clocks_event_reasons.applications_clocks_setting',
  'clocks_event_reasons.sw_power_cap',
  'clocks_event_reasons.hw_slowdown',
  'clocks_event_reasons.hw_thermal_slowdown',
  'clocks_event_reasons.hw_power_brake_slowdown',
  'clocks_event_reasons.sw_thermal_slowdown',
  'clocks_event_reasons.sync_boost',
];

/** True for the bracketed or bare markers nvidia-smi prints instead of a value. */
export function isNotAValue(value: string): boolean {
  return /^\[.*\]$/.test(value) || /^(N\/A|Not Supported|Unknown Error)$/i.test(value) || value === '';
}

/** `clocks_throttle_reasons.hw_slowdown` and `clocks_event_reasons.hw_slowdown` are one field. */
export function canonicalFieldName(header: string): string {
  return header
    .replace(/\s*\[[^\]]*\]\s*$/, '')
    .trim()
    .replace(/^clocks_throttle_reasons/, 'clocks_event_reasons');
}

function splitCsvLine(line: string): string[] {
  // nvidia-smi never quotes; values are separated by ", " and names contain no commas.
  return line.split(',').map((cell) => cell.trim());
}

/** An nvidia-smi query field: `temperature.gpu`, `clocks_event_reasons.sw_power_cap`, `pci.bus_id`. */
const fieldNamePattern = /^[A-Za-z][A-Za-z0-9_]*(\.[A-Za-z0-9_]+)*$/;
const identityFields = ['index', 'pci.bus_id', 'uuid'];

/**
 * `--query-gpu --format=csv` output as telemetry. The header is checked before any row is read: every column must be
 * an nvidia-smi field name, one of them must identify the GPU (index, pci.bus_id or uuid), and when the fields
 * asked for are given (the agent's query) the header must be exactly those. Anything else (the XML or `-q` report,
 * an error text, a shell's noise) is `DRIVER_PROTOCOL`: one GPU per line of unrelated text is never reported.
 */
export function parseNvidiaSmiCsv(raw: string, queriedFields?: readonly string[]): GpuTelemetryObservedData {
  const text = storableText(raw);
  const unrecognized: UnrecognizedValue[] = [];
  const lines = text.split(/\r?\n/).filter((line) => line.trim().length > 0 && !line.startsWith('#'));
  const headerLine = lines.shift();
  const headers = checkedHeaders(headerLine, queriedFields);
  const gpus: GpuTelemetry[] = [];
  let driverVersion: string | undefined;
  lines.forEach((line, row) => {
    const cells = splitCsvLine(line);
    if (cells.length !== headers.length) {
      unrecognized.push({ path: `csv/row/${row}`, value: line.slice(0, 500) });
      return;
    }
    const field = new Map<string, string>();
    headers.forEach((header, index) => {
      const value = cells[index] ?? '';
      if (!isNotAValue(value)) field.set(header, value);
    });
    driverVersion ??= field.get('driver_version');
    gpus.push(gpuOfRow(field, row, unrecognized));
  });
  return { source: 'agent', dialect: 'nvidia-smi-csv', unrecognized, gpus, ...(driverVersion ? { driverVersion } : {}) };
}

/** The header's field names, once it is shown to be a `--query-gpu` header (and the one asked for, when given). */
function checkedHeaders(headerLine: string | undefined, queriedFields: readonly string[] | undefined): string[] {
  const refuse = (reason: string): never => {
    throw new DriverError('DRIVER_PROTOCOL', `not nvidia-smi --query-gpu CSV: ${reason}`, { stderr: (headerLine ?? '').slice(0, 200) });
  };
  if (!headerLine) refuse('the output is empty (no header line)');
  const headers = splitCsvLine(headerLine!).map(canonicalFieldName);
  const stranger = headers.find((header) => !fieldNamePattern.test(header));
  if (stranger !== undefined) refuse(`the header names '${stranger.slice(0, 60)}', which is not a query field`);
  if (!headers.some((header) => identityFields.includes(header))) refuse(`the header has none of ${identityFields.join(', ')}, so no row can be told from another`);
  if (queriedFields) {
    const wanted = queriedFields.map(canonicalFieldName);
    const differs = wanted.findIndex((field, index) => headers[index] !== field);
    if (differs >= 0 || headers.length !== wanted.length) {
      refuse(`column ${differs >= 0 ? differs + 1 : wanted.length + 1} is '${headers[differs >= 0 ? differs : wanted.length] ?? '(none)'}', the query asked for '${wanted[differs >= 0 ? differs : wanted.length] ?? '(none)'}'`);
    }
  }
  return headers;
}

/** One row's GPU: a value it cannot read is recorded in `unrecognized` under `gpu/<row>/<field>`. */
function gpuOfRow(field: Map<string, string>, row: number, unrecognized: UnrecognizedValue[]): GpuTelemetry {
  const integer = (name: string): number | undefined => {
    const raw = field.get(name);
    if (raw === undefined) return undefined;
    const value = Number(raw.replace(/\s*(MiB|W|C|%)$/, ''));
    if (Number.isInteger(value) && value >= 0) return value;
    unrecognized.push({ path: `gpu/${row}/${name}`, value: raw });
    return undefined;
  };
  const decimal = (name: string): number | undefined => {
    const raw = field.get(name);
    if (raw === undefined) return undefined;
    const value = Number.parseFloat(raw);
    if (Number.isFinite(value)) return value;
    unrecognized.push({ path: `gpu/${row}/${name}`, value: raw });
    return undefined;
  };
  const yesNo = (name: string): boolean | undefined => {
    const raw = field.get(name);
    if (raw === undefined) return undefined;
    if (/^(yes|true|1)$/i.test(raw)) return true;
    if (/^(no|false|0)$/i.test(raw)) return false;
    unrecognized.push({ path: `gpu/${row}/${name}`, value: raw });
    return undefined;
  };
  const gpu: GpuTelemetry = {
    index: integer('index') ?? row,
    ecc: {},
    retiredPages: {},
    remappedRows: {},
    throttleReasons: [],
  };
  const text = (key: 'name' | 'uuid' | 'serial' | 'pciBusId' | 'vbiosVersion', name: string): void => {
    // Placeholders (`N/A`, a serial of zeros) are absent: `presentText`.
    const value = presentText(field.get(name), key === 'serial' ? 'identity' : 'text');
    if (value !== undefined) gpu[key] = value;
  };
  text('name', 'name');
  text('uuid', 'uuid');
  text('serial', 'serial');
  text('pciBusId', 'pci.bus_id');
  text('vbiosVersion', 'vbios_version');
  const set = <T extends object, K extends keyof T>(target: T, key: K, value: T[K] | undefined): void => {
    if (value !== undefined) target[key] = value;
  };
  set(gpu.ecc, 'correctedVolatile', integer('ecc.errors.corrected.volatile.total'));
  set(gpu.ecc, 'uncorrectedVolatile', integer('ecc.errors.uncorrected.volatile.total'));
  set(gpu.ecc, 'correctedAggregate', integer('ecc.errors.corrected.aggregate.total'));
  set(gpu.ecc, 'uncorrectedAggregate', integer('ecc.errors.uncorrected.aggregate.total'));
  set(gpu.retiredPages, 'singleBit', integer('retired_pages.single_bit_ecc.count'));
  set(gpu.retiredPages, 'doubleBit', integer('retired_pages.double_bit.count'));
  set(gpu.retiredPages, 'pending', yesNo('retired_pages.pending'));
  set(gpu.remappedRows, 'correctable', integer('remapped_rows.correctable'));
  set(gpu.remappedRows, 'uncorrectable', integer('remapped_rows.uncorrectable'));
  set(gpu.remappedRows, 'pending', yesNo('remapped_rows.pending'));
  set(gpu.remappedRows, 'failure', yesNo('remapped_rows.failure'));
  set(gpu, 'temperatureC', decimal('temperature.gpu'));
  // Renamed across driver generations (`power.draw` is [N/A] from 570 on): `powerDrawPlaces`.
  set(gpu, 'powerDrawW', firstReading(powerDrawPlaces.csv, decimal));
  for (const [name, value] of field) {
    const reason = /^clocks_event_reasons\.(.+)$/.exec(name)?.[1];
    if (!reason || reason === 'supported' || reason === 'active') continue;
    if (value === 'Active') gpu.throttleReasons.push(reason);
    else if (value !== 'Not Active') unrecognized.push({ path: `gpu/${row}/${name}`, value });
  }
  gpu.throttleReasons.sort();
  return gpu;
}
