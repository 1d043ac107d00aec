/**
 * Parser for `nvidia-smi -q -x` (the XML report most exporters read) into GPU telemetry.
 *
 * The XML is nvidia-smi's own, flat and regular (no namespaces, no CDATA, attributes only on `<gpu id=...>`), so a
 * small element reader is enough; it is bounded (depth, size) and anything that is not such a document is a typed
 * `DRIVER_PROTOCOL` error, never an empty or invented GPU. What the captures show (the README of the team's captures, under `$FLEET_LEDGER_FIXTURES`):
 * - ECC counters come per memory (`sram_correctable`, `dram_uncorrectable`, Ada and Hopper) or as `single_bit` /
 *   `double_bit` groups with a `total` (Volta and older);
 * - `<remapped_rows>` is a container on GPUs that remap rows and the bare text `N/A` on those that do not;
 * - throttle reasons are `clocks_event_reasons` on new drivers, `clocks_throttle_reasons` on old ones;
 * - `attached_gpus` may disagree with the `<gpu>` elements listed (a trimmed report): the elements are what is
 *   reported, the disagreement is kept in `unrecognized`.
 */
import type { GpuTelemetry, GpuTelemetryObservedData, UnrecognizedValue } from '../../../events/index.js';
import { DriverError } from '../driver-error.js';
import { clockEventReasonSections, firstReading, powerDrawPlaces } from './field-renames.js';
import { presentText } from '../placeholder.js';
import { storableText } from '../storable-text.js';
import { isNotAValue } from './nvidia-smi-csv.js';

interface XmlElement {
  name: string;
  attributes: Record<string, string>;
  children: XmlElement[];
  text: string;
}

const maxDepth = 32;
const maxBytes = 32 * 1024 * 1024;

function decodeEntities(text: string): string {
  return text.replace(/&(lt|gt|amp|quot|apos|#\d+|#x[0-9a-fA-F]+);/g, (_match, entity: string) => {
    switch (entity) {
      case 'lt':
        return '<';
      case 'gt':
        return '>';
      case 'amp':
        return '&';
      case 'quot':
        return '"';
      case 'apos':
        return "'";
      default: {
        const code = entity.startsWith('#x') ? Number.parseInt(entity.slice(2), 16) : Number.parseInt(entity.slice(1), 10);
        return code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : '\uFFFD';
      }
    }
  });
}

function protocolError(reason: string): DriverError {
  return new DriverError('DRIVER_PROTOCOL', `not an nvidia-smi -q -x report: ${reason}`);
}

/** The document's root element; throws `DRIVER_PROTOCOL` for anything that is not well-formed XML of this kind. */
function readXml(text: string): XmlElement {
  if (text.length > maxBytes) throw protocolError(`${text.length} characters, more than ${maxBytes}`);
  const stack: XmlElement[] = [];
  let root: XmlElement | undefined;
  const tag = /<(\/?)([A-Za-z_][\w.-]*)((?:\s+[\w.-]+\s*=\s*(?:"[^"]*"|'[^']*'))*)\s*(\/?)>|<\?[\s\S]*?\?>|<!DOCTYPE[^>]*>|<!--[\s\S]*?-->/g;
  let at = 0;
  for (let match = tag.exec(text); match; match = tag.exec(text)) {
    const between = text.slice(at, match.index);
    if (between.includes('<')) throw protocolError(`unreadable markup near character ${at + between.indexOf('<')}`);
    if (between.trim()) {
      if (stack.length === 0) throw protocolError(`text outside the root element near character ${at}`);
      stack[stack.length - 1]!.text += between;
    }
    at = tag.lastIndex;
    if (match[2] === undefined) continue; // declaration, doctype or comment
    const [, closing, name, attributeText = '', selfClosing] = match;
    if (closing) {
      const open = stack.pop();
      if (!open || open.name !== name) throw protocolError(`</${name}> does not close <${open?.name ?? '(nothing)'}>`);
      if (stack.length === 0) root = open;
      continue;
    }
    if (root) throw protocolError('a second root element');
    const attributes: Record<string, string> = {};
    for (const attribute of attributeText.matchAll(/([\w.-]+)\s*=\s*(?:"([^"]*)"|'([^']*)')/g)) attributes[attribute[1]!] = decodeEntities(attribute[2] ?? attribute[3] ?? '');
    const element: XmlElement = { name: name!, attributes, children: [], text: '' };
    if (stack.length > 0) stack[stack.length - 1]!.children.push(element);
    if (selfClosing) {
      if (stack.length === 0) root = element;
      continue;
    }
    if (stack.length >= maxDepth) throw protocolError(`elements nested deeper than ${maxDepth}`);
    stack.push(element);
  }
  const tail = text.slice(at);
  if (tail.includes('<')) throw protocolError(`unreadable markup near character ${at + tail.indexOf('<')}`);
  if (stack.length > 0) throw protocolError(`<${stack[stack.length - 1]!.name}> is never closed (the report is cut short)`);
  if (!root) throw protocolError('no element at all');
  if (tail.trim()) throw protocolError(`text outside the root element near character ${at}`);
  return root;
}

function child(element: XmlElement | undefined, name: string): XmlElement | undefined {
  return element?.children.find((candidate) => candidate.name === name);
}

/** The trimmed text at `path` under `element`, or undefined when absent or one of nvidia-smi's non-values. */
function textAt(element: XmlElement | undefined, ...path: string[]): string | undefined {
  let current = element;
  for (const name of path) current = child(current, name);
  if (!current || current.children.length > 0) return undefined;
  const value = decodeEntities(current.text).trim();
  return isNotAValue(value) ? undefined : value;
}

export function parseNvidiaSmiXml(raw: string): GpuTelemetryObservedData {
  const root = readXml(storableText(raw));
  if (root.name !== 'nvidia_smi_log') throw protocolError(`the root element is <${root.name}>, not <nvidia_smi_log>`);
  const unrecognized: UnrecognizedValue[] = [];
  const driverVersion = textAt(root, 'driver_version');
  const elements = root.children.filter((element) => element.name === 'gpu');
  const attached = textAt(root, 'attached_gpus');
  if (attached !== undefined && Number(attached) !== elements.length) unrecognized.push({ path: 'nvidia_smi_log/attached_gpus', value: `${attached} attached, ${elements.length} listed` });

  const gpus = elements.map((element, index): GpuTelemetry => parseGpuElement(element, index, unrecognized));
  if (gpus.length === 0 && driverVersion === undefined) throw protocolError('an <nvidia_smi_log> with neither a driver version nor a GPU');
  return { source: 'agent', dialect: 'nvidia-smi-xml', unrecognized, gpus, ...(driverVersion ? { driverVersion } : {}) };
}

/** Reads a `<gpu>` element's values: a value it cannot read is recorded in `unrecognized` under the GPU's path. */
class GpuValues {
  readonly busId: string | undefined;

  constructor(
    readonly element: XmlElement,
    private readonly index: number,
    private readonly unrecognized: UnrecognizedValue[],
  ) {
    this.busId = element.attributes['id'];
  }

  note(path: string[], value: string): void {
    this.unrecognized.push({ path: `gpu/${this.busId ?? this.index}/${path.join('/')}`, value });
  }

  count(path: string[], under: XmlElement | undefined = this.element): number | undefined {
    const value = textAt(under, ...path);
    if (value === undefined) return undefined;
    const number = Number(value.replace(/\s*(bank\(s\)|MiB)$/, ''));
    if (Number.isInteger(number) && number >= 0) return number;
    this.note(path, value);
    return undefined;
  }

  measure(path: string[], unit: string): number | undefined {
    const value = textAt(this.element, ...path);
    if (value === undefined) return undefined;
    const number = Number(value.replace(new RegExp(`\\s*${unit}$`), ''));
    if (Number.isFinite(number)) return number;
    this.note(path, value);
    return undefined;
  }

  yesNo(path: string[]): boolean | undefined {
    const value = textAt(this.element, ...path);
    if (value === undefined) return undefined;
    if (/^yes$/i.test(value)) return true;
    if (/^no$/i.test(value)) return false;
    this.note(path, value);
    return undefined;
  }
}

/** One GPU's telemetry from its `<gpu>` element, read in the order its values are recorded when unrecognized. */
function parseGpuElement(element: XmlElement, index: number, unrecognized: UnrecognizedValue[]): GpuTelemetry {
  const values = new GpuValues(element, index, unrecognized);
  const { busId } = values;
  const gpu: GpuTelemetry = { index, ecc: {}, retiredPages: {}, remappedRows: {}, throttleReasons: [] };
  if (busId) gpu.pciBusId = busId;
  const name = presentText(textAt(element, 'product_name'));
  if (name) gpu.name = name;
  const uuid = textAt(element, 'uuid');
  if (uuid) gpu.uuid = uuid;
  const serial = presentText(textAt(element, 'serial'), 'identity');
  if (serial) gpu.serial = serial;
  const vbios = textAt(element, 'vbios_version');
  if (vbios) gpu.vbiosVersion = vbios;
  readEcc(values, gpu);
  readRetirementAndRemapping(values, gpu);
  for (const section of clockEventReasonSections.xml) {
    for (const reason of child(element, section)?.children ?? []) {
      const value = decodeEntities(reason.text).trim();
      const label = reason.name.replace(/^clocks_(event|throttle)_reason_/, '');
      if (value === 'Active') gpu.throttleReasons.push(label);
      else if (value !== 'Not Active' && !isNotAValue(value)) values.note([section, reason.name], value);
    }
  }
  gpu.throttleReasons.sort();
  const temperature = values.measure(['temperature', 'gpu_temp'], 'C');
  if (temperature !== undefined) gpu.temperatureC = temperature;
  // Renamed across driver generations (`power_draw` is N/A or gone from 570 on): `powerDrawPlaces`.
  const power = firstReading(powerDrawPlaces.xml, (place) => values.measure([...place], 'W'));
  if (power !== undefined) gpu.powerDrawW = power;
  return gpu;
}

/** ECC counts per scope: the legacy single/double-bit totals, else the sum of the (un)correctable counters. */
function readEcc(values: GpuValues, gpu: GpuTelemetry): void {
  const ecc = child(values.element, 'ecc_errors');
  for (const scope of ['volatile', 'aggregate'] as const) {
    const group = child(ecc, scope);
    if (!group) continue;
    let corrected: number | undefined;
    let uncorrected: number | undefined;
    if (child(group, 'single_bit') || child(group, 'double_bit')) {
      corrected = values.count(['ecc_errors', scope, 'single_bit', 'total']);
      uncorrected = values.count(['ecc_errors', scope, 'double_bit', 'total']);
    } else {
      for (const counter of group.children) {
        if (!/_(correctable|uncorrectable)/.test(counter.name)) continue;
        const value = values.count([counter.name], group);
        if (value === undefined) continue;
        if (/uncorrectable/.test(counter.name)) uncorrected = (uncorrected ?? 0) + value;
        else corrected = (corrected ?? 0) + value;
      }
    }
    if (corrected !== undefined) gpu.ecc[scope === 'volatile' ? 'correctedVolatile' : 'correctedAggregate'] = corrected;
    if (uncorrected !== undefined) gpu.ecc[scope === 'volatile' ? 'uncorrectedVolatile' : 'uncorrectedAggregate'] = uncorrected;
  }
}

/** Retired pages and remapped rows. */
function readRetirementAndRemapping(values: GpuValues, gpu: GpuTelemetry): void {
  const singleBit = values.count(['retired_pages', 'multiple_single_bit_retirement', 'retired_count']);
  if (singleBit !== undefined) gpu.retiredPages.singleBit = singleBit;
  const doubleBit = values.count(['retired_pages', 'double_bit_retirement', 'retired_count']);
  if (doubleBit !== undefined) gpu.retiredPages.doubleBit = doubleBit;
  const pendingPages = values.yesNo(['retired_pages', 'pending_retirement']) ?? values.yesNo(['retired_pages', 'pending_blacklist']);
  if (pendingPages !== undefined) gpu.retiredPages.pending = pendingPages;

  const correctable = values.count(['remapped_rows', 'remapped_row_corr']);
  if (correctable !== undefined) gpu.remappedRows.correctable = correctable;
  const uncorrectable = values.count(['remapped_rows', 'remapped_row_unc']);
  if (uncorrectable !== undefined) gpu.remappedRows.uncorrectable = uncorrectable;
  const pendingRows = values.yesNo(['remapped_rows', 'remapped_row_pending']);
  if (pendingRows !== undefined) gpu.remappedRows.pending = pendingRows;
  const failure = values.yesNo(['remapped_rows', 'remapped_row_failure']);
  if (failure !== undefined) gpu.remappedRows.failure = failure;
}
