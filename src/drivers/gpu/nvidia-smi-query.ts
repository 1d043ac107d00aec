/**
 * Parser for `nvidia-smi -q` (the indented human report) into GPU telemetry.
 *
 * The report is a tree by indentation (4 spaces a level); a line may carry both a value and children
 * (`HW Slowdown : Not Active` with `HW Thermal Slowdown` below it). ECC counters come in two layouts: per-memory
 * (`SRAM Correctable`, `DRAM Uncorrectable`, Hopper and later) or `Single Bit`/`Double Bit` with a `Total`; the
 * throttle section is `Clocks Throttle Reasons` on old drivers and `Clocks Event Reasons` on new ones.
 */
import type { GpuTelemetry, GpuTelemetryObservedData, UnrecognizedValue } from '../../../events/index.js';
import { isNotAValue } from './nvidia-smi-csv.js';
import { clockEventReasonSections, firstReading, powerDrawPlaces } from './field-renames.js';
import { presentText } from '../placeholder.js';
import { storableText } from '../storable-text.js';
import { DriverError } from '../driver-error.js';

interface Entry {
  path: string[];
  /** `path` joined with NUL (which the text cannot hold once made storable): the key lookups compare. */
  key: string;
  value: string;
}

/** No label nvidia-smi prints is this long; a longer one (a damaged line) is cut, so lookups stay cheap. */
const maxKeyLength = 120;

interface GpuBlock {
  busId: string;
  entries: Entry[];
}

function parseBlocks(text: string): { header: Entry[]; gpus: GpuBlock[] } {
  const header: Entry[] = [];
  const gpus: GpuBlock[] = [];
  const stack: Array<{ indent: number; key: string }> = [];
  let current: GpuBlock | undefined;
  for (const line of text.split(/\r?\n/)) {
    if (line.trim() === '' || line.startsWith('=') || line.startsWith('#')) continue;
    const indent = line.length - line.trimStart().length;
    const body = line.trim();
    const gpuHeader = /^GPU ([0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-9A-Fa-f])$/.exec(body);
    if (indent === 0 && gpuHeader) {
      current = { busId: gpuHeader[1]!, entries: [] };
      gpus.push(current);
      stack.length = 0;
      continue;
    }
    const separator = body.indexOf(' : ');
    const colonAtEnd = body.endsWith(' :') || body.endsWith(':');
    const key = (separator >= 0 ? body.slice(0, separator) : colonAtEnd ? body.replace(/\s*:$/, '') : body).trim().slice(0, maxKeyLength);
    const value = separator >= 0 ? body.slice(separator + 3).trim() : '';
    while (stack.length > 0 && stack[stack.length - 1]!.indent >= indent) stack.pop();
    const path = [...stack.map((item) => item.key), key];
    if (separator >= 0) (current ? current.entries : header).push({ path, key: path.join('\u0000'), value });
    stack.push({ indent, key });
  }
  return { header, gpus };
}

function find(entries: Entry[], ...path: string[]): string | undefined {
  const wanted = path.join('\u0000');
  const entry = entries.find((candidate) => candidate.key === wanted);
  return entry && !isNotAValue(entry.value) ? entry.value : undefined;
}

function under(entries: Entry[], ...prefix: string[]): Entry[] {
  return entries.filter((entry) => prefix.every((part, index) => entry.path[index] === part) && entry.path.length > prefix.length);
}

/** `HW Power Brake Slowdown` -> `hw_power_brake_slowdown`; `Idle` -> `gpu_idle` (the CSV field's name). */
export function throttleReasonName(label: string): string {
  const name = label.trim().toLowerCase().replace(/[^a-z0-9]+/g, '_').replace(/^_|_$/g, '');
  return name === 'idle' ? 'gpu_idle' : name;
}

export function parseNvidiaSmiQuery(raw: string): GpuTelemetryObservedData {
  const text = storableText(raw);
  const unrecognized: UnrecognizedValue[] = [];
  const { header, gpus: blocks } = parseBlocks(text);
  const driverVersion = find(header, 'Driver Version');
  if (blocks.length === 0 && driverVersion === undefined) {
    // An empty answer here would read as "this machine has no GPU": anything unrecognisable is said to be so.
    throw new DriverError('DRIVER_PROTOCOL', 'not an nvidia-smi -q report: no "Driver Version" line and no "GPU <bus id>" section');
  }
  const gpus = blocks.map((block, index): GpuTelemetry => parseGpuBlock(block, index, unrecognized));
  return { source: 'agent', dialect: 'nvidia-smi-q', unrecognized, gpus, ...(driverVersion ? { driverVersion } : {}) };
}

/** Reads a GPU section's values: a value it cannot read is recorded in `unrecognized` under the GPU's path. */
class BlockValues {
  constructor(
    readonly block: GpuBlock,
    private readonly unrecognized: UnrecognizedValue[],
  ) {}

  at(path: string[]): string {
    return `gpu/${this.block.busId}/${path.join('/')}`;
  }

  note(path: string[], value: string): void {
    this.unrecognized.push({ path: this.at(path), value });
  }

  count(value: string | undefined, path: string[]): number | undefined {
    if (value === undefined) return undefined;
    const number = Number(value.replace(/\s*(bank\(s\)|MiB|W|C)$/, ''));
    if (Number.isInteger(number) && number >= 0) return number;
    this.note(path, value);
    return undefined;
  }

  yesNo(value: string | undefined, path: string[]): boolean | undefined {
    if (value === undefined) return undefined;
    if (/^yes$/i.test(value)) return true;
    if (/^no$/i.test(value)) return false;
    this.note(path, value);
    return undefined;
  }

  sum(entries: Entry[], pick: (key: string) => boolean): number | undefined {
    let total: number | undefined;
    for (const entry of entries) {
      const key = entry.path[entry.path.length - 1] ?? '';
      if (!pick(key)) continue;
      const value = this.count(isNotAValue(entry.value) ? undefined : entry.value, entry.path);
      if (value !== undefined) total = (total ?? 0) + value;
    }
    return total;
  }
}

/** One GPU's telemetry from its section, read in the order its values are recorded when unrecognized. */
function parseGpuBlock(block: GpuBlock, index: number, unrecognized: UnrecognizedValue[]): GpuTelemetry {
  const values = new BlockValues(block, unrecognized);
  const gpu: GpuTelemetry = { index, pciBusId: block.busId, ecc: {}, retiredPages: {}, remappedRows: {}, throttleReasons: [] };
  const name = presentText(find(block.entries, 'Product Name'));
  if (name) gpu.name = name;
  const uuid = find(block.entries, 'GPU UUID');
  if (uuid) gpu.uuid = uuid;
  const serial = presentText(find(block.entries, 'Serial Number'), 'identity');
  if (serial) gpu.serial = serial;
  const vbios = find(block.entries, 'VBIOS Version');
  if (vbios) gpu.vbiosVersion = vbios;
  const volatile = eccFor(values, 'Volatile');
  const aggregate = eccFor(values, 'Aggregate');
  if (volatile.corrected !== undefined) gpu.ecc.correctedVolatile = volatile.corrected;
  if (volatile.uncorrected !== undefined) gpu.ecc.uncorrectedVolatile = volatile.uncorrected;
  if (aggregate.corrected !== undefined) gpu.ecc.correctedAggregate = aggregate.corrected;
  if (aggregate.uncorrected !== undefined) gpu.ecc.uncorrectedAggregate = aggregate.uncorrected;
  readRetiredPages(values, gpu);
  readRemappedRows(values, gpu);
  for (const section of clockEventReasonSections.query) {
    for (const entry of under(block.entries, section)) {
      const label = entry.path[entry.path.length - 1] ?? '';
      if (entry.value === 'Active') gpu.throttleReasons.push(throttleReasonName(label));
      else if (entry.value !== 'Not Active' && !isNotAValue(entry.value)) values.note(entry.path, entry.value);
    }
  }
  gpu.throttleReasons.sort();
  const temperature = find(block.entries, 'Temperature', 'GPU Current Temp');
  if (temperature !== undefined) {
    const value = Number.parseFloat(temperature);
    if (Number.isFinite(value)) gpu.temperatureC = value;
    else values.note(['Temperature', 'GPU Current Temp'], temperature);
  }
  // Renamed across driver generations (`Power Draw` is N/A or gone from 570 on): `powerDrawPlaces`.
  const power = firstReading(powerDrawPlaces.query, (place) => {
    const text = find(block.entries, ...place);
    const value = text === undefined ? Number.NaN : Number.parseFloat(text);
    return Number.isFinite(value) ? value : undefined;
  });
  if (power !== undefined) gpu.powerDrawW = power;
  return gpu;
}

/** ECC error counts of one scope: the legacy single/double-bit totals, else the sum of the (un)correctable counters. */
function eccFor(values: BlockValues, scope: 'Volatile' | 'Aggregate'): { corrected?: number; uncorrected?: number } {
  const { entries: all } = values.block;
  const entries = under(all, 'ECC Errors', scope);
  const legacySingle = find(all, 'ECC Errors', scope, 'Single Bit', 'Total');
  const legacyDouble = find(all, 'ECC Errors', scope, 'Double Bit', 'Total');
  const result: { corrected?: number; uncorrected?: number } = {};
  const corrected = legacySingle !== undefined
    ? values.count(legacySingle, ['ECC Errors', scope, 'Single Bit', 'Total'])
    : values.sum(entries.filter((entry) => entry.path.length === 3), (key) => /Correctable/i.test(key) && !/Uncorrectable/i.test(key));
  const uncorrected = legacyDouble !== undefined
    ? values.count(legacyDouble, ['ECC Errors', scope, 'Double Bit', 'Total'])
    : values.sum(entries.filter((entry) => entry.path.length === 3), (key) => /Uncorrectable/i.test(key));
  if (corrected !== undefined) result.corrected = corrected;
  if (uncorrected !== undefined) result.uncorrected = uncorrected;
  return result;
}

function readRetiredPages(values: BlockValues, gpu: GpuTelemetry): void {
  const { entries } = values.block;
  const singleBit = values.count(find(entries, 'Retired Pages', 'Single Bit ECC'), ['Retired Pages', 'Single Bit ECC']);
  if (singleBit !== undefined) gpu.retiredPages.singleBit = singleBit;
  const doubleBit = values.count(find(entries, 'Retired Pages', 'Double Bit ECC'), ['Retired Pages', 'Double Bit ECC']);
  if (doubleBit !== undefined) gpu.retiredPages.doubleBit = doubleBit;
  const pendingRaw = find(entries, 'Retired Pages', 'Pending Page Blacklist') ?? find(entries, 'Retired Pages', 'Pending');
  const pendingPages = values.yesNo(pendingRaw, ['Retired Pages', 'Pending']);
  if (pendingPages !== undefined) gpu.retiredPages.pending = pendingPages;
}

function readRemappedRows(values: BlockValues, gpu: GpuTelemetry): void {
  const { entries } = values.block;
  const correctable = values.count(find(entries, 'Remapped Rows', 'Correctable Error'), ['Remapped Rows', 'Correctable Error']);
  if (correctable !== undefined) gpu.remappedRows.correctable = correctable;
  const uncorrectable = values.count(find(entries, 'Remapped Rows', 'Uncorrectable Error'), ['Remapped Rows', 'Uncorrectable Error']);
  if (uncorrectable !== undefined) gpu.remappedRows.uncorrectable = uncorrectable;
  const pendingRows = values.yesNo(find(entries, 'Remapped Rows', 'Pending'), ['Remapped Rows', 'Pending']);
  if (pendingRows !== undefined) gpu.remappedRows.pending = pendingRows;
  const failure = values.yesNo(find(entries, 'Remapped Rows', 'Remapping Failure Occurred'), ['Remapped Rows', 'Remapping Failure Occurred']);
  if (failure !== undefined) gpu.remappedRows.failure = failure;
}
